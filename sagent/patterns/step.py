"""One agent of a pattern (`Step`), how it ended (`StepResult`), how the whole pattern ended
(`PatternResult`), and `run_step`: the one way a pattern runs an agent, the spawn path AgentSpawn takes.

A step runs as a one-shot sub-agent of the agent that runs the pattern (its *parent*): in this process
through `Agent.spawn`, or with `on` on a `sagent serve` process of the parent's fleet on NATS, as AgentSpawn
with `on` does. So each step is held to the parent tree's budget, its spend joins the parent's cost tracker,
its task and answer are sealed as capsules in the parent's log, and a step in this process keeps its own
session log beside the parent's, as any sub-agent does.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from sagent.agent.fleet import FleetError
from sagent.events import Result, ResultSubtype
from sagent.patterns.conversation import Turn, turns_of
from sagent.tools.base import ToolError
from sagent.tools.choose import Choice, Choose, Pick
from sagent.tools.runtime import SpawnRequest

if TYPE_CHECKING:
    from sagent.agent.agent import Agent
    from sagent.fleet_nats.remote import RemoteOutcome

INPUT = "{input}"


@dataclass(frozen=True, slots=True)
class Step:
    """One agent of a pattern: what it is told and what it runs on. Everything but `label` is optional; what
    is not given is the parent's (the agent that runs the pattern), as for AgentSpawn."""

    label: str
    """Its name, one word: the sub-agent's label in the fleet, and how routers and handoffs name it."""
    system: str | None = None
    """Its system prompt; None: the parent's."""
    description: str = ""
    """What it is for, in a line: how a Triage router or a Handoff agent chooses it."""
    template: str = INPUT
    """Its prompt, with `{input}` where the step's input goes (the task, or the previous step's answer)."""
    provider: str | None = None
    """A provider for its own model (in this process only: a serve process runs its own model)."""
    model: str | None = None
    """A model id for its own model (in this process only)."""
    tools: Sequence[str] | None = None
    """The names of the tools it may use, among the parent's; None: all of them."""
    max_tool_rounds: int | None = None
    """Stop it after this many tool rounds; None: the parent's limit."""
    on: str | None = None
    """Run it on a `sagent serve` process of the parent's fleet on NATS: that process's label, or "any"
    for whichever worker takes it; None: in this process."""
    advisor: str | None = None
    """A model for its advisor, or "none"; None: the parent's (in this process only)."""

    def __post_init__(self) -> None:
        if not self.label or any(c.isspace() for c in self.label):
            raise ValueError(f"a step's label is one word, got {self.label!r}")
        if self.on is not None and (self.provider, self.model, self.advisor) != (None, None, None):
            raise ValueError(
                f"{self.label!r} runs on another process ({self.on}), on that process's model: provider, model "
                "and advisor apply to steps in this process only"
            )
        if INPUT not in self.template:
            raise ValueError(f"the template of {self.label!r} has no {INPUT} for the step's input")
        if self.tools is not None:
            object.__setattr__(self, "tools", tuple(self.tools))

    def prompt(self, text: str) -> str:
        """The prompt this step is given for the input `text`."""
        return self.template.replace(INPUT, text)


@dataclass(frozen=True, slots=True)
class StepResult:
    """How one step ended."""

    label: str
    prompt: str
    """What it was given."""
    text: str
    """Its answer, or why it stopped."""
    subtype: ResultSubtype
    """`success`, or how it stopped (`error_max_budget_usd`: the tree's budget is spent)."""
    cost_usd: float
    """What it spent (its own sub-agents included), counted in the parent's tree."""
    num_turns: int
    where: str
    """"here", or the serve process it ran on ("on HOST")."""
    session_id: str | None = None
    """Its session (a log in the parent's `agents/` folder when the parent keeps a log); None for a step on
    another process."""
    picked: Pick | None = None
    """What it chose with its Route or Handoff tool, if it had one and called it."""

    @property
    def ok(self) -> bool:
        return self.subtype == "success"


@dataclass(frozen=True, slots=True)
class PatternResult:
    """How a pattern ended: its answer, or why it stopped, with every step that ran, in order (those of a
    Parallel in the order given)."""

    text: str
    subtype: ResultSubtype
    steps: tuple[StepResult, ...]
    conversation: tuple[Turn, ...] = field(default=())
    """A Handoff's conversation, as the last agent received it and added to it; () for the others."""

    @property
    def ok(self) -> bool:
        return self.subtype == "success"

    @property
    def cost_usd(self) -> float:
        """What the pattern's steps spent, all counted in the parent's tree."""
        return sum(s.cost_usd for s in self.steps)

    def step(self, label: str) -> StepResult:
        """The last result of the step `label`; KeyError when it did not run."""
        for result in reversed(self.steps):
            if result.label == label:
                return result
        raise KeyError(f"no step {label!r} ran; the steps that ran: {', '.join(s.label for s in self.steps)}")


def stopped(steps: Sequence[StepResult], **extra: Any) -> PatternResult:
    """The pattern's end at the step that did not succeed (the last of them; one stopped by the budget
    first): its reason, and the steps so far."""
    failed = next(s for s in reversed(steps) if not s.ok)
    budget = next((s for s in steps if s.subtype == "error_max_budget_usd"), None)
    why = budget or failed
    return PatternResult(f"{why.label}: {why.text}", why.subtype, tuple(steps), **extra)


def check_labels(steps: Sequence[Step], what: str) -> tuple[Step, ...]:
    """`steps` as a tuple; ValueError when there are none or two share a label."""
    steps = tuple(steps)
    if not steps:
        raise ValueError(f"{what} needs at least one step")
    labels = [s.label for s in steps]
    twice = sorted({label for label in labels if labels.count(label) > 1})
    if twice:
        raise ValueError(f"each step of {what} needs its own label; used more than once: {', '.join(twice)}")
    return steps


@dataclass(frozen=True, slots=True)
class Ran:
    """A step's result and, when it was given a choice, what it added to the conversation (what a Handoff
    passes on)."""

    result: StepResult
    turns: tuple[Turn, ...] = ()


async def run_step(
    parent: Agent, step: Step, text: str, *, choice: Choice | None = None, max_tool_rounds: int | None = None
) -> Ran:
    """Run `step` on the input `text` as a one-shot sub-agent of `parent`, as AgentSpawn does, and wait for
    its end. A spawn that is refused (a fleet limit, no process to run it on, the budget spent) is a result
    too, not an exception: the pattern stops there with what it has."""
    prompt = step.prompt(text)
    request = SpawnRequest(
        prompt,
        label=step.label,
        system=step.system,
        provider=step.provider,
        model=step.model,
        tools=step.tools,
        max_tool_rounds=step.max_tool_rounds if max_tool_rounds is None else max_tool_rounds,
        advisor=step.advisor,
        on=step.on,
        choice=choice,
    )
    if step.on is not None:
        return await _run_elsewhere(parent, step, request)
    try:
        child = parent.spawn(request)
    except FleetError as error:
        return Ran(_refused(step, prompt, str(error)))
    try:
        result = await child.wait()
        if child.task is not None:
            await asyncio.shield(child.task)  # it has left the fleet: its label is free for the next step
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            await child.stop()
        raise
    if choice is None:
        return Ran(_from_result(step, prompt, result, None))
    tool = child.agent.tools.get(choice.tool)
    picked = tool.picked if isinstance(tool, Choose) else None
    turns = turns_of(step.label, child.agent.history, leave_out=choice.tool)
    return Ran(_from_result(step, prompt, result, picked), tuple(turns))


async def _run_elsewhere(parent: Agent, step: Step, request: SpawnRequest) -> Ran:
    runner = getattr(parent.fleet.bus, "run_remote", None)
    if runner is None:
        why = f"`on` runs a step on another process: the fleet of {parent.label} has no NATS bus"
        return Ran(_refused(step, request.prompt, why))
    try:
        outcome = cast("RemoteOutcome", await runner(parent, request))
    except ToolError as error:
        text = str(error)
        spent = parent.cost.over_budget() or "(max_budget_usd) is spent" in text  # no room left for it
        return Ran(_refused(step, request.prompt, text, "error_max_budget_usd" if spent else "error_during_execution"))
    result = StepResult(
        step.label,
        request.prompt,
        outcome.text,
        _subtype(outcome.subtype),
        outcome.cost_usd,
        outcome.num_turns,
        f"on {outcome.host}",
        None,
        outcome.picked,
    )
    return Ran(result, tuple(Turn(speaker, text) for speaker, text in outcome.turns))


def _from_result(step: Step, prompt: str, result: Result, picked: Pick | None) -> StepResult:
    return StepResult(
        step.label,
        prompt,
        result.text,
        result.subtype,
        result.total_cost_usd,
        result.num_turns,
        "here",
        result.session_id,
        picked,
    )


def _refused(step: Step, prompt: str, why: str, subtype: ResultSubtype = "error_during_execution") -> StepResult:
    where = "here" if step.on is None else f"on {step.on}"
    return StepResult(step.label, prompt, f"not started: {why}", subtype, 0.0, 0, where)


def _subtype(text: str) -> ResultSubtype:
    known: tuple[ResultSubtype, ...] = (
        "success",
        "error_max_turns",
        "error_max_budget_usd",
        "error_during_execution",
        "interrupted",
    )
    found = [k for k in known if k == text]
    return found[0] if found else "error_during_execution"
