"""`Handoff`: one agent at a time holds the conversation; with its `Handoff` tool it passes control, and the
conversation so far, to another agent, which continues it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sagent.lib.words import quantity
from sagent.patterns.conversation import Turn
from sagent.patterns.step import PatternResult, Step, StepResult, check_labels, run_step, stopped
from sagent.tools.choose import Choice

if TYPE_CHECKING:
    from sagent.agent.agent import Agent

DEFAULT_MAX_HANDOFFS = 8


def handover(conversation: Sequence[Turn], giver: str, note: str) -> str:
    """The input of the agent taking over: the conversation so far, and the note of the one handing over."""
    lines = [f"[{turn.speaker}]\n{turn.text}" for turn in conversation]
    told = f"\n\n{giver}'s note for you: {note}" if note else ""
    return (
        f"{giver} hands this conversation over to you. The conversation so far, oldest first:\n\n"
        + "\n\n".join(lines)
        + f"{told}\n\nContinue it from here: answer the user, or do what is left of the task."
    )


@dataclass(frozen=True, slots=True)
class Handoff:
    """The agent `start` (the first of `agents` by default) gets the task. Each agent has a `Handoff` tool
    naming the others (by label and description): calling it passes control, with the conversation so far
    (the task, what each agent said, the tools it called and their results, cut long), to that agent once
    the caller's run ends. The answer of the first agent that ends without handing off is the pattern's.

    `max_handoffs` bounds the passes (the pattern stops as `error_max_turns` past it, so two agents cannot
    pass the conversation back and forth for ever); `window` carries only the last N turns of it (the task
    itself always). An agent on another process sends its part of the conversation back with its answer
    (its last 256,000 characters)."""

    agents: Sequence[Step]
    start: str | None = None
    max_handoffs: int = DEFAULT_MAX_HANDOFFS
    window: int | None = None

    def __post_init__(self) -> None:
        agents = check_labels(self.agents, "Handoff")
        if len(agents) < 2:
            raise ValueError("a Handoff needs at least two agents to pass the conversation between")
        if self.start is not None and self.start not in {a.label for a in agents}:
            raise ValueError(f"the start {self.start!r} is not one of the agents: {', '.join(a.label for a in agents)}")
        if self.max_handoffs < 0 or (self.window is not None and self.window < 1):
            raise ValueError("max_handoffs is 0 or more, and window (when given) 1 or more")
        object.__setattr__(self, "agents", agents)

    async def run(self, parent: Agent, task: str) -> PatternResult:
        """Run the conversation on `task`, each agent a sub-agent of `parent`."""
        by_label = {a.label: a for a in self.agents}
        current = by_label[self.start or self.agents[0].label]
        conversation = [Turn("user", task)]
        done: list[StepResult] = []
        text = task
        while True:
            others = {a.label: a.description or f"the agent {a.label}" for a in self.agents if a is not current}
            ran = await run_step(parent, current, text, choice=Choice("Handoff", others))
            result = ran.result
            done.append(result)
            conversation += ran.turns or ([Turn(current.label, result.text)] if result.ok else [])
            # A pass made in the agent's last allowed tool round still counts: its run ends there.
            passed = result.picked is not None and result.subtype == "error_max_turns"
            if not result.ok and not passed:
                return stopped(done, conversation=tuple(conversation))
            if result.picked is None:
                return PatternResult(result.text, "success", tuple(done), tuple(conversation))
            if len(done) > self.max_handoffs:
                passes = quantity(len(done), "handoff")
                why = f"{current.label}: {passes}, over the limit (max_handoffs {self.max_handoffs})"
                return PatternResult(why, "error_max_turns", tuple(done), tuple(conversation))
            carried = conversation if self.window is None else [conversation[0], *conversation[1:][-self.window :]]
            text = handover(carried, current.label, result.picked.note)
            current = by_label[result.picked.label]
