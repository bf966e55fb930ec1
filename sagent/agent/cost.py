"""Spend tracking: tokens and USD per model, and the budget check made after every response."""

from __future__ import annotations

from dataclasses import dataclass

from sagent.providers.catalog import cost_of
from sagent.types import Cost, Usage


@dataclass(frozen=True, slots=True)
class ModelSpend:
    usage: Usage = Usage()
    cost: Cost = Cost()
    responses: int = 0


class CostTracker:
    """Adds up every response's usage and cost, by model."""

    def __init__(self, max_budget_usd: float | None = None) -> None:
        self.max_budget_usd = max_budget_usd
        self.by_model: dict[str, ModelSpend] = {}

    def add(self, model: str, usage: Usage, cost: Cost | None = None) -> Cost:
        """Count one response; returns its cost (from the catalog unless given)."""
        cost = cost if cost is not None else cost_of(model, usage)
        spend = self.by_model.get(model, ModelSpend())
        self.by_model[model] = ModelSpend(spend.usage + usage, spend.cost + cost, spend.responses + 1)
        return cost

    @property
    def total_usd(self) -> float:
        return sum(s.cost.total for s in self.by_model.values())

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
        return self.max_budget_usd is not None and self.total_usd >= self.max_budget_usd
