"""How `--advisor` names a model: a model id (its provider inferred, as for `--model`) or `provider:model`."""

from __future__ import annotations

from sagent.providers.specs import find_spec


def advisor_target(value: str) -> tuple[str | None, str | None]:
    """(provider, model) for `value`: `anthropic:claude-opus-4-7`, `claude-opus-4-7`, `local` (the embedded
    model) or `local:/models/qwen.gguf`. A prefix that names no provider is part of the model id."""
    value = value.strip()
    provider, sep, model = value.partition(":")
    named = find_spec(provider) if sep else None
    if named is not None:
        return named.name, model or None
    spec = find_spec(value)
    if spec is not None:
        return spec.name, None
    return None, value
