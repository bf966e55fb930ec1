"""Spend tracking: tokens and USD per model, for one agent and for the tree of agents under it.

Every agent has its own `CostTracker`. A child's tracker points at its parent's: each response is counted
in the agent's own spend and in the tree spend of the agent and every ancestor, so the root's total is the
whole fleet's, live. The budget check asks every tracker up the chain, so a cap set on the root stops the
whole tree.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from sagent.providers.catalog import cost_of
from sagent.types import Cost, Usage


@dataclass(frozen=True, slots=True)
class ModelSpend:
    usage: Usage = Usage()
    cost: Cost = Cost()
    responses: int = 0

    def plus(self, usage: Usage, cost: Cost) -> ModelSpend:
        return ModelSpend(self.usage + usage, self.cost + cost, self.responses + 1)


class CostTracker:
    """Adds up every response's usage and cost, by model: the agent's own (`own_by_model`) and its whole
    tree's (`by_model`, which includes every descendant)."""

    def __init__(self, max_budget_usd: float | None = None, parent: CostTracker | None = None) -> None:
        self.max_budget_usd = max_budget_usd
        self.parent = parent
        self.own_by_model: dict[str, ModelSpend] = {}
        self.by_model: dict[str, ModelSpend] = {}

    def add(self, model: str, usage: Usage, cost: Cost | None = None) -> Cost:
        """Count one response of this agent; returns its cost (from the catalog unless given)."""
        cost = cost if cost is not None else cost_of(model, usage)
        self.own_by_model[model] = self.own_by_model.get(model, ModelSpend()).plus(usage, cost)
        for tracker in self.chain():
            tracker.by_model[model] = tracker.by_model.get(model, ModelSpend()).plus(usage, cost)
        return cost

    def chain(self) -> Iterator[CostTracker]:
        """This tracker, then its parent's, up to the root's."""
        tracker: CostTracker | None = self
        while tracker is not None:
            yield tracker
            tracker = tracker.parent

    @property
    def total_usd(self) -> float:
        """This agent's spend plus every descendant's."""
        return sum(s.cost.total for s in self.by_model.values())

    @property
    def own_usd(self) -> float:
        return sum(s.cost.total for s in self.own_by_model.values())

    @property
    def usage(self) -> Usage:
        total = Usage()
        for spend in self.by_model.values():
            total = total + spend.usage
        return total

    @property
    def unpriced_models(self) -> list[str]:
        return [m for m, s in self.by_model.items() if not s.cost.priced]

    def over_budget(self) -> bool:
        """True once this tree, or any tree it belongs to, has spent its budget."""
        return self.limiting() is not None

    def limiting(self) -> CostTracker | None:
        """The tracker whose budget is spent (this one or an ancestor), or None."""
        return next((t for t in self.chain() if t.max_budget_usd is not None and t.total_usd >= t.max_budget_usd), None)

    def budgeted(self) -> CostTracker | None:
        """The nearest tracker up the chain that has a budget, or None."""
        return next((t for t in self.chain() if t.max_budget_usd is not None), None)
