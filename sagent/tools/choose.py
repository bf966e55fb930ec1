"""A choice an orchestration pattern asks of an agent as a tool call, not as text to parse: Triage's router
picks an agent with `Route`, an agent of a Handoff passes the conversation on with `Handoff`.

A `Choice` says which tool and which options (label -> description); it is a plain value, so it travels to
a sub-agent on another process as it does to one here (`Choice.to_wire` / `Choice.from_wire`), and each
side builds its own `Choose` tool from it. The tool records the last pick (`Choose.picked`); the pattern
reads it once the sub-agent's run has ended.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from sagent.tools.base import AnyOrder, ToolContext, ToolError

ChoiceTool = Literal["Route", "Handoff"]
CHOICE_TOOLS: tuple[str, ...] = get_args(ChoiceTool)


@dataclass(frozen=True, slots=True)
class Choice:
    """The tool a pattern gives a sub-agent to choose with, and the options: label -> what that agent does."""

    tool: ChoiceTool
    options: Mapping[str, str]

    def __post_init__(self) -> None:
        if self.tool not in CHOICE_TOOLS:
            raise ValueError(f"a choice tool is one of {', '.join(CHOICE_TOOLS)}, not {self.tool!r}")
        if not self.options:
            raise ValueError("a choice needs at least one option")
        object.__setattr__(self, "options", dict(self.options))

    def to_wire(self) -> dict[str, Any]:
        return {"tool": self.tool, "options": dict(self.options)}

    @classmethod
    def from_wire(cls, data: object) -> Choice:
        """The choice a spawn request carried; ValueError when it is not one."""
        if not isinstance(data, dict) or not isinstance(data.get("options"), dict):
            raise ValueError("a choice is an object with a tool and its options")
        options = {str(k): str(v) for k, v in data["options"].items()}
        return cls(data.get("tool"), options)  # type: ignore[arg-type]  # checked in __post_init__


@dataclass(frozen=True, slots=True)
class Pick:
    """What the agent chose: an option's label and, in its words, why (or what the next agent must know)."""

    label: str
    note: str = ""


class Choose(AnyOrder):
    """The tool of a `Choice`: `Route` (answer with the agent that should do the task) or `Handoff` (pass the
    conversation to another agent). Its calls are recorded; the last one counts."""

    may_background = False  # the pick is read when the run ends: it must not wait in the background

    def __init__(self, choice: Choice) -> None:
        self.choice = choice
        self.name: str = choice.tool
        self.picked: Pick | None = None
        listing = "\n".join(f"- {label}: {what}" for label, what in choice.options.items())
        if choice.tool == "Route":
            self.description = (
                "Send the task to the agent best placed to do it. Call this once, with that agent's label; "
                f"you do not do the task yourself. The agents:\n{listing}"
            )
            note = "why this agent, in one line"
        else:
            self.description = (
                "Pass this conversation to another agent when it is better placed to continue it: it gets the "
                "conversation so far and your note, and takes over once you end your turn. Do not hand off "
                f"work you can finish yourself. The agents:\n{listing}"
            )
            note = "what the next agent must know or do first"
        self.input_schema: dict[str, Any] = {
            "type": "object",
            "properties": {
                "agent": {"type": "string", "enum": list(choice.options), "description": "the agent's label"},
                "note": {"type": "string", "description": note},
            },
            "required": ["agent"],
        }

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        label = str(arguments.get("agent", "")).strip()
        if label not in self.choice.options:
            raise ToolError(f"no agent is called {label!r}; choose one of: {', '.join(self.choice.options)}")
        self.picked = Pick(label, str(arguments.get("note") or "").strip())
        if self.choice.tool == "Route":
            return f"routed to {label}"
        return (
            f"control passes to {label} with this conversation once you end your turn: end it now, without "
            f"another tool call, with one short line for {label}"
        )
