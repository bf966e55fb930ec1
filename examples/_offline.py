"""What lets every example run offline: with an API key set, the examples use that provider's default
model; without one, a scripted model plays the part the example shows (the tools, the files and the
agents around it are real either way)."""

from __future__ import annotations

from sagent import Model, RoutedModel, ScriptedModel, resolve_model
from sagent.providers.registry import choose
from sagent.providers.scripted import Step, text_turn, tool_turn

__all__ = ["fleet_model_or_scripts", "has_key", "model_or_script", "text_turn", "tool_turn"]


def has_key() -> bool:
    """Whether an API key is set: the rule `sagent` itself follows to leave the local model."""
    return choose(None, None).provider != "local"


def model_or_script(steps: list[Step]) -> Model:
    """The provider of the first key set, else a scripted model that plays `steps` in order."""
    return resolve_model() if has_key() else ScriptedModel(steps, name="claude-haiku-4-5")


def fleet_model_or_scripts(scripts: dict[str, list[Step]]) -> Model:
    """For a fleet: the real provider, else one scripted model with a script per agent label. It is named
    after a priced model so the cost and the budget work as they would for real."""
    return resolve_model() if has_key() else RoutedModel(scripts, name="claude-haiku-4-5")
