"""`Sequential`: agents one after another, each one's answer the next one's input."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sagent.patterns.step import PatternResult, Step, StepResult, check_labels, run_step, stopped

if TYPE_CHECKING:
    from sagent.agent.agent import Agent


@dataclass(frozen=True, slots=True)
class Sequential:
    """A pipeline: the first step gets the task, each next one the answer before it (in its `template`),
    and the last one's answer is the pattern's. A step that does not succeed (the tree's budget spent, its
    tool rounds used up, a refused spawn) stops the pipeline there, with the results so far."""

    steps: Sequence[Step]

    def __post_init__(self) -> None:
        object.__setattr__(self, "steps", check_labels(self.steps, "Sequential"))

    async def run(self, parent: Agent, task: str) -> PatternResult:
        """Run the pipeline on `task` as sub-agents of `parent` (its budget, its cost tracker, its log)."""
        done: list[StepResult] = []
        text = task
        for step in self.steps:
            result = (await run_step(parent, step, text)).result
            done.append(result)
            if not result.ok:
                return stopped(done)
            text = result.text
        return PatternResult(text, "success", tuple(done))
