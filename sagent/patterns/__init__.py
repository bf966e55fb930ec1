"""Orchestration patterns: agents arranged in code, each a one-shot sub-agent of the agent that runs the
pattern, in this process or on a `sagent serve` process of its fleet on NATS (`Step.on`).

    from sagent.patterns import Parallel, Sequential, Step

    draft_then_edit = Sequential([Step("writer", system="Draft it."), Step("editor", template="Tighten:\\n{input}")])
    result = await draft_then_edit.run(lead, "a tagline for sagent")   # lead: an Agent
    print(result.text, result.cost_usd)

- `Sequential(steps)`: each step's answer is the next one's input.
- `Parallel(steps, aggregator)`: the steps at once, then an aggregator agent or function combines them.
- `Triage(agents, router)`: a router agent picks, with a `Route` tool call, the agent for the task.
- `Handoff(agents)`: an agent passes control and the conversation to another with its `Handoff` tool.

Every step goes the way AgentSpawn goes: held to the lead's budget, counted in its cost tracker, its task
and answer sealed in its log, with a session of its own beside the lead's. `run` returns a `PatternResult`
(the answer, or why the pattern stopped, and each step's `StepResult`); it does not raise for a step that
failed, so what the steps before it did is kept.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sagent.lib.lazy import lazy_exports

_EXPORTS = {
    "Step": "sagent.patterns.step",
    "StepResult": "sagent.patterns.step",
    "PatternResult": "sagent.patterns.step",
    "Turn": "sagent.patterns.conversation",
    "Sequential": "sagent.patterns.sequential",
    "Parallel": "sagent.patterns.parallel",
    "Triage": "sagent.patterns.triage",
    "Handoff": "sagent.patterns.handoff",
    "Pick": "sagent.tools.choose",
}
__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from sagent.patterns.conversation import Turn as Turn
    from sagent.patterns.handoff import Handoff as Handoff
    from sagent.patterns.parallel import Parallel as Parallel
    from sagent.patterns.sequential import Sequential as Sequential
    from sagent.patterns.step import PatternResult as PatternResult
    from sagent.patterns.step import Step as Step
    from sagent.patterns.step import StepResult as StepResult
    from sagent.patterns.triage import Triage as Triage
    from sagent.tools.choose import Pick as Pick

_load = lazy_exports(__name__, _EXPORTS)


def __getattr__(name: str) -> Any:
    return _load(name)
