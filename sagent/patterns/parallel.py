"""`Parallel`: agents at once on the same task, their answers combined by an aggregator (an agent, or a
function of yours)."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sagent.patterns.step import PatternResult, Step, StepResult, check_labels, run_step, stopped

if TYPE_CHECKING:
    from sagent.agent.agent import Agent

Combine = Callable[[str, tuple[StepResult, ...]], "str | Awaitable[str]"]
"""A function aggregator: the task and the steps' results (in the order of the steps) -> the answer."""


def answers(task: str, results: Sequence[StepResult]) -> str:
    """The task and each step's answer under its label: what an aggregator agent is given."""
    parts = [f"The task:\n{task}", "The answers, one per agent:"]
    parts += [f"## {r.label}\n{r.text}" for r in results]
    return "\n\n".join(parts)


@dataclass(frozen=True, slots=True)
class Parallel:
    """Every step works on the task at once (each in its own sub-agent); then the aggregator combines the
    answers: an agent `Step`, given them by `answers` (in its `template`), or a function (sync or async)
    `combine(task, results)`. Without one, the answer is `answers(task, results)`. The pattern stops
    before aggregating when a step does not succeed; when the tree's budget is spent, every step still
    working stops at once (as every agent of the tree does) and the result says so."""

    steps: Sequence[Step]
    aggregator: Step | Combine | None = None
    limit: int | None = None
    """At most this many steps at once (the others wait their turn); None: all of them, within the fleet's
    `max_agents`."""

    def __post_init__(self) -> None:
        if self.limit is not None and self.limit < 1:
            raise ValueError(f"a Parallel's limit is 1 or more, or None for no limit; got {self.limit}")
        steps = check_labels(self.steps, "Parallel")
        if isinstance(self.aggregator, Step):
            check_labels([*steps, self.aggregator], "Parallel (the aggregator included)")
        elif self.aggregator is not None and not callable(self.aggregator):
            raise TypeError("a Parallel's aggregator is a Step, a function of (task, results), or None")
        object.__setattr__(self, "steps", steps)

    async def run(self, parent: Agent, task: str) -> PatternResult:
        """Run the steps on `task` at once as sub-agents of `parent`, then the aggregator."""
        room = asyncio.Semaphore(self.limit or len(self.steps))

        async def one(step: Step) -> StepResult:
            async with room:
                return (await run_step(parent, step, task)).result

        done = list(await asyncio.gather(*(one(step) for step in self.steps)))
        if not all(r.ok for r in done):
            return stopped(done)
        aggregator = self.aggregator
        if isinstance(aggregator, Step):
            combined = (await run_step(parent, aggregator, answers(task, done))).result
            done.append(combined)
            return PatternResult(combined.text, "success", tuple(done)) if combined.ok else stopped(done)
        if aggregator is None:
            return PatternResult(answers(task, done), "success", tuple(done))
        text = aggregator(task, tuple(done))
        if inspect.isawaitable(text):
            text = await text
        return PatternResult(str(text), "success", tuple(done))
