"""What `/model` offers and accepts: the catalog's models of the providers whose keys are set (with their
context windows and prices), and a check that refuses a model id no provider knows, naming the nearest ones.

`/model NAME` switches to a known model; `/model PROVIDER:NAME` names the provider too (`ollama:qwen3:8b`);
`/model --force NAME` uses an id sagent does not know yet (a model released after this catalog). A provider
the catalog lists no models for (an OpenAI-compatible server, OpenRouter, the claude CLI) serves whatever
ids it has, so any id is taken for it as given. Pure: the environment is passed in.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass

from sagent.providers.catalog import CATALOG, lookup
from sagent.providers.registry import infer_provider
from sagent.providers.specs import SPECS, ProviderSpec, find_spec

FORCE = "--force"
"""The flag that makes `/model` take an id the catalog does not know."""


@dataclass(frozen=True)
class ModelOption:
    """A model the picker lists: where it runs, its context window and USD prices per million tokens (None
    where the catalog does not know them)."""

    provider: str
    id: str
    context_window: int | None = None
    input_usd: float | None = None
    output_usd: float | None = None
    current: bool = False

    def search_text(self) -> str:
        """What a search in the picker matches: the id and the provider."""
        return f"{self.id} {self.provider}"

    def row(self, id_width: int) -> str:
        """`claude-sonnet-4-6   anthropic   200k   $3.00 / $15.00`, the model in use marked."""
        window = f"{self.context_window // 1000}k" if self.context_window else "?"
        price = "free" if self.input_usd == 0 and self.output_usd == 0 else "unpriced"
        if self.input_usd and self.output_usd is not None:
            price = f"${self.input_usd:.2f} / ${self.output_usd:.2f}"
        mark = "  ● in use" if self.current else ""
        return f"{self.id:<{id_width}}  {self.provider:<10}  {window:>6}  {price:<17}{mark}"


HEADER_COLUMNS = ("model", "provider", "context", "USD per Mtok in / out")


def header(id_width: int) -> str:
    """The column titles above the rows."""
    model, provider, context, price = HEADER_COLUMNS
    return f"{model:<{id_width}}  {provider:<10}  {context:>6}  {price}"


def key_is_set(spec: ProviderSpec, environ: Mapping[str, str]) -> bool:
    """True when one of the provider's key variables is set."""
    return any(environ.get(v) for v in spec.key_variables)


def model_options(current_provider: str, current_model: str, environ: Mapping[str, str]) -> list[ModelOption]:
    """The models to pick from: the catalog's for each provider whose key is set and for the provider in
    use, each provider's default model when the catalog lacks it, and the model in use; grouped by
    provider in the specs' order, the catalog's order within."""
    providers = [s for s in SPECS if s.name == current_provider or key_is_set(s, environ)]
    options: list[ModelOption] = []
    seen: set[tuple[str, str]] = set()

    def add(option: ModelOption) -> None:
        if (option.provider, option.id.lower()) not in seen:
            seen.add((option.provider, option.id.lower()))
            options.append(option)

    for spec in providers:
        for info in CATALOG:
            if info.provider == spec.name:
                current = spec.name == current_provider and lookup(current_model) is info
                add(ModelOption(info.provider, info.id, info.context_window, info.input, info.output, current))
        for default in (spec.default_model, spec.small_model):
            if default and (spec.name, default.lower()) not in seen and _in_catalog(spec.name, default) is None:
                add(ModelOption(spec.name, default, current=spec.name == current_provider and default == current_model))
    if not any(o.current for o in options):
        known = lookup(current_model)
        if known is None:
            options.insert(0, ModelOption(current_provider, current_model, current=True))
        else:
            row = ModelOption(current_provider, current_model, known.context_window, known.input, known.output, True)
            options.insert(0, row)
    return options


def _in_catalog(provider: str, model: str) -> str | None:
    info = lookup(model)
    return info.id if info is not None and info.provider == provider else None


@dataclass(frozen=True)
class ModelRequest:
    """What `/model ARG` asks for: a model id, the provider if named, and whether an unknown id is forced."""

    model: str
    provider: str | None = None
    forced: bool = False


def parse_request(arg: str) -> ModelRequest:
    """`NAME`, `PROVIDER:NAME` or `--force [PROVIDER:]NAME`; ValueError saying how to write it otherwise."""
    words = arg.split()
    forced = FORCE in words
    words = [w for w in words if w != FORCE]
    if len(words) != 1 or words[0].startswith("-"):
        raise ValueError("usage: /model, /model NAME, /model PROVIDER:NAME or /model --force NAME")
    name = words[0]
    prefix, colon, rest = name.partition(":")
    spec = find_spec(prefix) if colon and rest else None
    if spec is not None:
        return ModelRequest(rest, spec.name, forced)
    return ModelRequest(name, None, forced)


def target_provider(request: ModelRequest, current_provider: str) -> str:
    """The provider the request would run on: the one named, else the one the id's prefix names, else
    the provider in use."""
    return request.provider or infer_provider(request.model) or current_provider


def refusal(request: ModelRequest, current_provider: str, current_model: str) -> str | None:
    """Why the request is refused (no provider knows the id), with the nearest known ids and how to force
    it; None when it may go ahead."""
    if request.forced or request.model.lower().endswith(".gguf"):
        return None
    provider = target_provider(request, current_provider)
    spec = find_spec(provider)
    if spec is None or not any(info.provider == spec.name for info in CATALOG):
        return None  # a server with its own list of models: it is the judge of the id
    if _in_catalog(spec.name, request.model) or _is_default(spec, request.model):
        return None
    if provider == current_provider and request.model == current_model:
        return None
    known = [info.id for info in CATALOG] + [d for s in SPECS for d in (s.default_model, s.small_model) if d]
    near = difflib.get_close_matches(request.model.lower(), list(dict.fromkeys(known)), n=3, cutoff=0.5)
    said = f"{request.provider}:{request.model}" if request.provider else request.model
    hint = f"; the nearest: {', '.join(near)}" if near else ""
    return f"no provider knows the model {said!r}{hint} (/model lists them; /model {FORCE} {said} uses it anyway)"


def _is_default(spec: ProviderSpec, model: str) -> bool:
    return model.lower() in {d.lower() for d in (spec.default_model, spec.small_model) if d}
