"""One `ProviderSpec` per provider, in one table: everything sagent knows about a provider by name.

The registry (`--provider`, inference from a model id, the key a run picks), `sagent --help`, `sagent
providers`, REPL completion, the library's provider classes and the table in docs/providers.md all derive
from `SPECS`. An OpenAI-compatible preset is one entry here; a native provider is one module with its
`Model` class and one entry naming it.

This module imports only the standard library: `sagent --help` reads it, and no SDK may load for that.
"""

from __future__ import annotations

from dataclasses import dataclass

CHAT_COMPLETIONS = "sagent.providers.openai_compat:OpenAICompatModel"
"""The adapter of every OpenAI-compatible preset: the Chat Completions API through the `openai` SDK."""


@dataclass(frozen=True, slots=True)
class ProviderSpec:
    """What sagent knows about one provider, as data."""

    name: str
    """The canonical name, lower case: what `--provider` takes and what a `Model` reports as its provider."""
    display: str
    """The capitalised name (`Anthropic`, `LlamaCpp`): the library's class name; accepted wherever a
    provider is named, like every alias, in any case."""
    description: str
    """One line for `sagent providers` and the docs: the API spoken, or where the server is."""
    adapter: str
    """`module:callable` building the `Model`, imported only when a model is built, so no SDK loads before.
    It is called as `callable(model_id, api_key=..., base_url=...)`, and with `provider=name` too when
    `compatible` is set."""
    key_variables: tuple[str, ...] = ()
    """The environment variables that may hold the key, in the order they are read. With no provider named,
    the first spec in the table whose variable is set is picked."""
    key_required: bool = True
    """False for a server that needs no key (a local one); with no variables, a key can still be named
    with `--api-key-env`."""
    base_url: str | None = None
    """The default endpoint; None: the SDK's own (which honours its `*_BASE_URL` variable), or, for
    `openai-compat`, the user must give one."""
    default_model: str | None = None
    """The model a run uses when none is named; None: the user names it (the model a server has loaded)."""
    small_model: str | None = None
    """A cheaper model of the same provider for side work (a summary, a title); None: the main model."""
    aliases: tuple[str, ...] = ()
    """Other names accepted for the provider, in any case."""
    model_pattern: str | None = None
    """A regular expression matched (`re.match`) against a lower-cased model id: a match names this provider
    when only `--model` is given. Specs are tried in table order."""
    model_hint: str | None = None
    """How `--help` and the docs describe the model ids `model_pattern` accepts (`claude-*`)."""
    compatible: bool = False
    """An OpenAI-compatible (Chat Completions) endpoint: the adapter also takes `provider=name`."""
    sdk: str | None = None
    """The SDK module the adapter imports, which the REPL warms up while the user types."""

    @property
    def preset(self) -> bool:
        """A named OpenAI-compatible endpoint (as opposed to a native provider or the generic one)."""
        return self.compatible and self.base_url is not None

    def names(self) -> tuple[str, ...]:
        """Every name this provider answers to, lower-cased: its name, its display name, its aliases."""
        return tuple(dict.fromkeys(n.lower() for n in (self.name, self.display, *self.aliases)))


SPECS: tuple[ProviderSpec, ...] = (
    ProviderSpec(
        "anthropic",
        "Anthropic",
        "Messages API (ANTHROPIC_BASE_URL honoured)",
        "sagent.providers.anthropic:AnthropicModel",
        ("ANTHROPIC_API_KEY",),
        default_model="claude-sonnet-4-6",
        small_model="claude-haiku-4-5",
        aliases=("claude",),
        model_pattern=r"claude",
        model_hint="claude-*",
        sdk="anthropic",
    ),
    ProviderSpec(
        "openai",
        "OpenAI",
        "Responses API (OPENAI_BASE_URL honoured)",
        "sagent.providers.openai_responses:OpenAIModel",
        ("OPENAI_API_KEY",),
        default_model="gpt-5.4",
        small_model="gpt-5.4-nano",
        model_pattern=r"(gpt-|chatgpt|codex|o[1-9](-|$))",
        model_hint="gpt-*, o3, o4-*",
        sdk="openai",
    ),
    ProviderSpec(
        "google",
        "Google",
        "Gemini API",
        "sagent.providers.google:GoogleModel",
        ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
        default_model="gemini-3-flash-preview",
        small_model="gemini-3.1-flash-lite",
        aliases=("gemini",),
        model_pattern=r"gemini",
        model_hint="gemini-*",
        sdk="google.genai",
    ),
    ProviderSpec(
        "anthropic-cli",
        "AnthropicCLI",
        "the installed claude CLI on its own login (a subscription); sagent's tools over MCP",
        "sagent.providers.cli_backends.claude:ClaudeCLIModel",
        ("SAGENT_CLAUDE_API_KEY",),  # only to bill an API key through the CLI; unset, its own login pays
        key_required=False,
        default_model="sonnet",
        aliases=("claude-cli", "claude-code"),
        sdk="mcp",
    ),
    ProviderSpec(
        "openai-subscription",
        "OpenAISubscription",
        "the installed codex CLI on its own ChatGPT sign-in (a subscription); sagent's tools over MCP",
        "sagent.providers.cli_backends.codex:CodexCLIModel",
        ("SAGENT_CODEX_API_KEY",),  # only to bill an API key through the CLI; unset, its own sign-in pays
        key_required=False,
        default_model="default",
        aliases=("codex", "codex-cli", "chatgpt"),
        sdk="mcp",
    ),
    ProviderSpec(
        "google-cli",
        "GoogleCLI",
        "the installed gemini CLI on its own Google login (a subscription); sagent's tools over MCP",
        "sagent.providers.cli_backends.gemini:GeminiCLIModel",
        ("SAGENT_GEMINI_API_KEY",),  # only to bill an API key through the CLI; unset, its own login pays
        key_required=False,
        default_model="auto",
        aliases=("gemini-cli",),
        sdk="mcp",
    ),
    ProviderSpec(
        "local",
        "LlamaCpp",
        "llama.cpp on this machine (the `local` extra); --model takes a .gguf path",
        "sagent.providers.llamacpp:LlamaCppModel",
        key_required=False,
        aliases=("llama.cpp",),
        model_pattern=r"(smollm2|local)$",
        model_hint="a .gguf path",
        sdk="openai",
    ),
    ProviderSpec(
        "selfhosted",
        "SelfHosted",
        "a HuggingFace model in this process (the selfhosted extra); --model REPO_OR_FOLDER+DEVICE+DTYPE",
        "sagent.providers.selfhosted:SelfHostedModel",
        key_required=False,
        aliases=("self-hosted", "huggingface", "hf"),
    ),
    ProviderSpec(
        "openai-compat",
        "OpenAICompatible",
        "any Chat Completions server: --base-url, --model, --api-key-env",
        CHAT_COMPLETIONS,
        key_required=False,
        aliases=("openai-compatible",),
        compatible=True,
        sdk="openai",
    ),
    ProviderSpec(
        "moonshot",
        "Moonshot",
        "Moonshot Kimi",
        CHAT_COMPLETIONS,
        ("MOONSHOT_API_KEY",),
        base_url="https://api.moonshot.ai/v1",
        default_model="kimi-k2-thinking",
        aliases=("kimi",),
        model_pattern=r"(kimi|moonshot)",
        model_hint="kimi-*",
        compatible=True,
        sdk="openai",
    ),
    ProviderSpec(
        "dashscope",
        "DashScope",
        "Alibaba Model Studio (Qwen)",
        CHAT_COMPLETIONS,
        ("DASHSCOPE_API_KEY",),
        base_url="https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
        default_model="qwen3-coder-plus",
        model_pattern=r"qwen",
        model_hint="qwen*",
        compatible=True,
        sdk="openai",
    ),
    ProviderSpec(
        "minimax",
        "MiniMax",
        "MiniMax",
        CHAT_COMPLETIONS,
        ("MINIMAX_API_KEY",),
        base_url="https://api.minimax.io/v1",
        default_model="MiniMax-M2",
        model_pattern=r"minimax",
        model_hint="MiniMax-*",
        compatible=True,
        sdk="openai",
    ),
    ProviderSpec(
        "openrouter",
        "OpenRouter",
        "OpenRouter",
        CHAT_COMPLETIONS,
        ("OPENROUTER_API_KEY",),
        base_url="https://openrouter.ai/api/v1",
        default_model="openrouter/auto",
        model_pattern=r"[\w.-]+/[\w.:-]+$",  # owner/model is how OpenRouter names every model
        model_hint="owner/model for OpenRouter",
        compatible=True,
        sdk="openai",
    ),
    ProviderSpec(
        "ollama",
        "Ollama",
        "a local Ollama server",
        CHAT_COMPLETIONS,
        key_required=False,
        base_url="http://127.0.0.1:11434/v1",
        compatible=True,
        sdk="openai",
    ),
    ProviderSpec(
        "lmstudio",
        "LMStudio",
        "a local LM Studio server",
        CHAT_COMPLETIONS,
        key_required=False,
        base_url="http://127.0.0.1:1234/v1",
        aliases=("lm-studio",),
        compatible=True,
        sdk="openai",
    ),
    ProviderSpec(
        "vllm",
        "VLLM",
        "a vLLM server (key from --api-key-env if any)",
        CHAT_COMPLETIONS,
        key_required=False,
        base_url="http://127.0.0.1:8000/v1",
        compatible=True,
        sdk="openai",
    ),
)


def find_spec(name: str) -> ProviderSpec | None:
    """The spec a provider name stands for, by its name, display name or an alias, in any case; None when
    no provider is called that. Reads `SPECS` each time, so a spec added at run time is found."""
    wanted = name.strip().lower()
    return next((s for s in SPECS if wanted in s.names()), None)


def spec_named(name: str) -> ProviderSpec:
    """The spec called `name` (any accepted spelling); KeyError naming the providers when there is none."""
    spec = find_spec(name)
    if spec is None:
        raise KeyError(f"unknown provider {name!r}; choose one of: {', '.join(provider_names())}")
    return spec


def canonical_name(name: str) -> str:
    """`name` as the registry spells it (`Anthropic` -> `anthropic`); an unknown name comes back as given,
    so an error about it can quote what the user wrote."""
    spec = find_spec(name)
    return spec.name if spec is not None else name


def provider_names() -> tuple[str, ...]:
    """The canonical names, natives first, in table order."""
    return tuple(s.name for s in SPECS)


def provider_help() -> str:
    """The `--provider` help line: the native providers, then the presets."""
    natives = ", ".join(s.name for s in SPECS if not s.preset)
    presets = ", ".join(s.name for s in SPECS if s.preset)
    return (
        f"{natives}, or a preset: {presets}; in any case, or by another name (LlamaCpp, OpenAICompatible: "
        "see `sagent providers`) (default: from --model, or the first API key set)"
    )


def inference_help() -> str:
    """The --help paragraph on how a provider is picked when none is named."""
    hints = ", ".join(s.model_hint for s in SPECS if s.model_hint)
    keys = ", ".join(" or ".join(s.key_variables) for s in SPECS if s.key_variables)
    return (
        f"providers: with no --provider, a model id names its provider ({hints}); with no model either, "
        f"the first key set picks one: {keys}. ANTHROPIC_BASE_URL and OPENAI_BASE_URL are honoured. "
        "See `sagent providers`."
    )


def other_names(spec: ProviderSpec) -> str:
    """The names a provider also answers to, besides its own (its display name when it differs by more
    than case, and its aliases)."""
    return ", ".join(n for n in (spec.display, *spec.aliases) if n.lower() != spec.name)


def table_rows() -> list[tuple[str, str, str, str, str]]:
    """The rows of `sagent providers` and of the docs table: name, other names, key variables, default
    model, endpoint."""
    rows = []
    for s in SPECS:
        keys = " or ".join(s.key_variables) or "-"
        model = s.default_model or ("the embedded SmolLM2" if s.name == "local" else "(--model)")
        rows.append((s.name, other_names(s) or "-", keys, model, s.base_url or s.description))
    return rows
