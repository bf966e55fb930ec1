"""From names to a `Model`: `--provider`/`--model`, inference from a bare model id, and the default.

Provider modules (and their SDKs) are imported only for the provider a run uses.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from sagent.providers.base import BadRequestError, Model

PROVIDERS = ("anthropic", "openai-compat", "local")
DEFAULT_MODELS = {"anthropic": "claude-sonnet-4-6"}

# Variables that, when set, select a real provider if none is named.
KEY_VARIABLES = {"anthropic": "ANTHROPIC_API_KEY"}


@dataclass(frozen=True, slots=True)
class Choice:
    provider: str
    model: str | None
    # A line for stderr explaining a choice the user did not make explicitly, or None.
    notice: str | None = None


def infer_provider(model: str) -> str | None:
    """The provider a bare model id belongs to, from its prefix; None when it is not recognised."""
    lowered = model.lower()
    if lowered.startswith("claude"):
        return "anthropic"
    if lowered.endswith(".gguf") or lowered in ("smollm2", "local"):
        return "local"
    return None


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
    for name, variable in KEY_VARIABLES.items():
        if os.environ.get(variable):
            return Choice(name, None)
    names = ", ".join(KEY_VARIABLES.values())
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


def build_model(choice: Choice, *, base_url: str | None = None, api_key_env: str | None = None) -> Model:
    api_key = os.environ.get(api_key_env) if api_key_env else None
    if choice.provider == "anthropic":
        from sagent.providers.anthropic import AnthropicModel

        return AnthropicModel(choice.model or DEFAULT_MODELS["anthropic"], api_key=api_key, base_url=base_url)
    if choice.provider == "local":
        from sagent.providers.llamacpp import LlamaCppModel

        path = choice.model if choice.model and choice.model.endswith(".gguf") else None
        return LlamaCppModel(path)
    if choice.provider == "openai-compat":
        from sagent.providers.openai_compat import OpenAICompatModel

        if not base_url or not choice.model:
            raise BadRequestError("the openai-compat provider needs --base-url and --model")
        return OpenAICompatModel(choice.model, base_url=base_url, api_key=api_key or "none")
    raise BadRequestError(f"unknown provider {choice.provider!r}")
