"""The providers as library classes: `Anthropic.from_env().model("claude-sonnet-4-6")` is a ready `Model`.

Each class stands for one spec of `sagent.providers.specs`; `Provider.named(name)` gives one for any spec,
presets included. Building a model imports the provider's adapter (and its SDK) then, not before.
"""

from __future__ import annotations

import os
from typing import ClassVar, Self

from sagent.providers import specs
from sagent.providers.base import BadRequestError, Model
from sagent.providers.specs import ProviderSpec
from sagent.redaction import remember_secret


class Provider:
    """A provider with its key and endpoint; `.model(id)` builds a `Model` on it.

    `Provider(api_key=..., base_url=...)` takes them as given; `from_env()` reads the key from the
    provider's variables. `base_url` None means the provider's default endpoint (the SDK's own, which
    honours `ANTHROPIC_BASE_URL` / `OPENAI_BASE_URL`)."""

    spec_name: ClassVar[str] = ""
    """The name of the spec this class stands for (set by each subclass)."""

    def __init__(self, api_key: str | None = None, *, base_url: str | None = None) -> None:
        self.spec: ProviderSpec = specs.spec_named(self.spec_name)
        self.api_key = api_key
        self.base_url = base_url
        remember_secret(api_key)

    @classmethod
    def from_env(cls, variable: str | None = None, *, base_url: str | None = None) -> Self:
        """The provider with its key from `variable`, else from the first of its key variables that is set.
        A provider that needs a key and finds none raises `BadRequestError` naming the variables."""
        spec = specs.spec_named(cls.spec_name)
        wanted = (variable,) if variable else spec.key_variables
        key = next((os.environ[v] for v in wanted if os.environ.get(v)), None)
        if key is None and wanted and (variable or spec.key_required):
            raise BadRequestError(
                f"{spec.display}.from_env(): no API key: set {' or '.join(wanted)}", provider=spec.name
            )
        return cls(key, base_url=base_url)

    def model(self, id: str | None = None) -> Model:
        """A ready `Model` for the model `id` (default: the provider's default model)."""
        from sagent.providers.registry import Choice, build_model, make_model

        if self.spec.name == "local":
            return build_model(Choice(self.spec.name, id))
        model = id or self.spec.default_model
        if not model:
            what = (
                "a HuggingFace repo id or a local snapshot folder (the model runs in this process)"
                if self.spec.name == "selfhosted"
                else "the id of a model the server serves (it has no default)"
            )
            raise BadRequestError(f"{self.spec.display}.model() needs a model id: {what}", provider=self.spec.name)
        url = self.base_url or self.spec.base_url
        if self.spec.compatible and not url:
            raise BadRequestError(f"{self.spec.display} needs base_url: the server's address")
        return make_model(self.spec, model, api_key=self.api_key, base_url=url)

    @staticmethod
    def named(name: str) -> type[Provider]:
        """The provider class for any provider name (a preset too, in any case): `Provider.named("ollama")`."""
        spec = specs.find_spec(name)
        if spec is None:
            raise BadRequestError(f"unknown provider {name!r}; choose one of: {', '.join(specs.provider_names())}")
        known = _CLASSES.get(spec.name)
        if known is not None:
            return known
        return type(spec.display, (Provider,), {"spec_name": spec.name, "__doc__": spec.description})

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.base_url!r})"


class Anthropic(Provider):
    """Claude, through the Messages API (`ANTHROPIC_API_KEY`)."""

    spec_name = "anthropic"


class OpenAI(Provider):
    """OpenAI, through the Responses API (`OPENAI_API_KEY`)."""

    spec_name = "openai"


class Google(Provider):
    """Gemini, through the Gemini API (`GEMINI_API_KEY` or `GOOGLE_API_KEY`)."""

    spec_name = "google"


class Moonshot(Provider):
    """Moonshot Kimi, an OpenAI-compatible endpoint (`MOONSHOT_API_KEY`)."""

    spec_name = "moonshot"


class DashScope(Provider):
    """Alibaba Model Studio (Qwen), an OpenAI-compatible endpoint (`DASHSCOPE_API_KEY`)."""

    spec_name = "dashscope"


class MiniMax(Provider):
    """MiniMax, an OpenAI-compatible endpoint (`MINIMAX_API_KEY`)."""

    spec_name = "minimax"


class LlamaCpp(Provider):
    """llama.cpp on this machine (the `local` extra): `.model()` is the embedded model, `.model(path)` a
    .gguf file."""

    spec_name = "local"


class SelfHosted(Provider):
    """A HuggingFace model in this process (the `selfhosted` extra): `SelfHosted().model("owner/name+cuda")`,
    a repo id or a local snapshot folder with `+device+dtype+compile` suffixes (docs/selfhosted.md)."""

    spec_name = "selfhosted"


class OpenAICompatible(Provider):
    """Any Chat Completions server: `OpenAICompatible(api_key, base_url="http://host/v1").model("id")`;
    `from_env("VAR", base_url=...)` reads the key from VAR."""

    spec_name = "openai-compat"


_CLASSES: dict[str, type[Provider]] = {
    cls.spec_name: cls
    for cls in (Anthropic, OpenAI, Google, Moonshot, DashScope, MiniMax, LlamaCpp, SelfHosted, OpenAICompatible)
}
