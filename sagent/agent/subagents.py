"""A sub-agent defined in a file (`AgentDefinition`), applied to a spawn: the file's prompt, tools and model
become the request's, with Claude Code's tool names and model aliases read as Claude Code means them, so a
file written for Claude Code spawns here rather than fails. What the file asks for that this parent cannot
give (a tool it lacks, a model without a key) is left out and said in a note the parent model reads."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from sagent.tools.runtime import AgentDefinition, SpawnRequest

if TYPE_CHECKING:
    from sagent.agent.agent import Agent

CLAUDE_CODE_TOOLS = {
    "LS": "List",
    "MultiEdit": "Edit",
    "NotebookRead": "Read",
    "Task": "AgentSpawn",
    "Agent": "AgentSpawn",
    "BashOutput": "Jobs",
    "KillShell": "Jobs",
    "KillBash": "Jobs",
}
"""Claude Code's names for tools sagent has under another name (the others share sagent's names)."""

INHERIT = "inherit"
"""The model alias that means the parent's model."""


@dataclass(frozen=True, slots=True)
class Applied:
    """A spawn request with its agent file applied, and what could not be."""

    request: SpawnRequest
    model: tuple[str | None, str] | None
    """The (provider, model id) of the sub-agent's own model; None: its parent's."""
    notes: tuple[str, ...]


def tool_names(wanted: Iterable[str], have: Iterable[str]) -> tuple[list[str], list[str]]:
    """The file's tool names in sagent's names, those of `have` only (in the file's order, each once), and
    the names left out because the parent has no such tool. `Bash(git diff:*)` names the tool `Bash`."""
    have = list(have)
    kept: list[str] = []
    missing: list[str] = []
    for raw in wanted:
        name = raw.partition("(")[0].strip()
        name = CLAUDE_CODE_TOOLS.get(name, name) if name not in have else name
        if name in have:
            if name not in kept:
                kept.append(name)
        elif raw not in missing:
            missing.append(raw)
    return kept, missing


def model_choice(text: str | None, parent_provider: str) -> tuple[str | None, str] | None:
    """The (provider, model id) a file's `model` names; None for the parent's model (absent, `inherit`).
    `sonnet`, `opus` and `haiku` are Anthropic's models as Claude Code means them (the Claude CLI takes
    the alias itself); `provider:model` names both; a bare id's provider is inferred from it."""
    from sagent.providers.catalog import ALIASES
    from sagent.providers.specs import find_spec

    text = (text or "").strip()
    if not text or text.lower() == INHERIT:
        return None
    alias = text.lower()
    if alias in ALIASES:
        if parent_provider == "anthropic-cli":
            return parent_provider, alias
        return "anthropic", ALIASES[alias]
    provider, colon, model = text.partition(":")
    spec = find_spec(provider) if colon else None
    if spec is not None and model.strip():
        return spec.name, model.strip()
    return None, text


def apply_definition(parent: Agent, request: SpawnRequest) -> Applied:
    """`request` with its agent file's prompt, tools and model (fields the request gives itself win);
    FleetError only for what the request itself asked that cannot be (the file's own wishes become notes)."""
    definition = request.agent
    assert definition is not None
    notes: list[str] = []
    tools = request.tools
    if tools is None:
        tools = _file_tools(definition, list(parent.tools), notes)
    system = definition.system if request.system is None else request.system
    model = None
    if request.provider is None and request.model is None:
        model = _file_model(parent, definition)
    request = replace(request, system=system, tools=tools)
    return Applied(request, model, tuple(notes))


def _file_tools(definition: AgentDefinition, have: list[str], notes: list[str]) -> tuple[str, ...] | None:
    if definition.tools is None and not definition.disallowed_tools:
        return None  # all of the parent's
    names = have if definition.tools is None else definition.tools
    kept, missing = tool_names(names, have)
    if missing:
        notes.append(f"tools of agent {definition.name} this agent does not have, left out: {', '.join(missing)}")
    if definition.disallowed_tools:
        dropped, _ = tool_names(definition.disallowed_tools, have)
        kept = [name for name in kept if name not in dropped]
    return tuple(kept)


def _file_model(parent: Agent, definition: AgentDefinition) -> tuple[str | None, str] | None:
    choice = model_choice(definition.model, parent.model.provider)
    if choice is not None and choice[1] == parent.model.name and choice[0] in (None, parent.model.provider):
        return None
    return choice


def model_note(definition: AgentDefinition, error: Exception, parent: Agent) -> str:
    """What the parent is told when the model an agent file asks for cannot be built here."""
    return (
        f"agent {definition.name} asks for model {definition.model}, which cannot run here ({error}); "
        f"it runs on {parent.model.provider}/{parent.model.name}"
    )
