"""Spend tracking: tokens and USD per model, for one agent and for the tree of agents under it.

Every agent has its own `CostTracker`. A child's tracker points at its parent's: each response is counted
in the agent's own spend and in the tree spend of the agent and every ancestor, so the root's total is the
whole fleet's, live. The budget check asks every tracker up the chain, so a cap set on the root stops the
whole tree.

A tree may also cap its subscription use (`max_subscription_tokens`): a model CLI on the user's own plan
(`AnthropicCLI`, `OpenAISubscription`) reports tokens but is not priced, so a USD budget never stops it; the
token cap does, counted the same way up the chain and checked before every request.

Amounts are exact decimals (see `Cost`): a budget of $0.06 is reached by six responses of $0.01, never
missed by a rounding error. Before a request is sent, its estimated cost is checked against every budget up
the chain (`refusing`) and held (`reserve`) until its response is counted, so agents of one tree that send
requests at the same time cannot each spend the same remaining dollars.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Protocol

from sagent.providers.base import ProviderError
from sagent.providers.catalog import cost_of
from sagent.providers.cli_backends.common import SUBSCRIPTION_MARK, subscription_tokens
from sagent.types import ZERO_USD, Cost, Usage, usd


class BudgetExceededError(ProviderError):
    """A request was not sent: its estimated cost would cross a budget (max_budget_usd), or the subscription
    tokens allowed (max_subscription_tokens) are used up."""

    kind = "budget"


class BudgetLender(Protocol):
    """The keeper of a budget in another process: a tree whose budget is kept elsewhere (a sub-agent on a
    fleet worker, whose tree's budget is its parent's) asks it before each request, as the gate asks the
    trackers up its own chain."""

    async def hold(self, amount: Decimal) -> str | None:
        """Hold `amount` against the budget kept elsewhere: None once held, else why it is refused (the
        request is then not sent)."""
        ...

    def settle(self, amount: Decimal) -> None:
        """The request held at `amount` is over (its response, if any, is counted here): release the hold
        and count what this tree has spent since it last said so, in one step."""
        ...


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

    def __init__(
        self,
        max_budget_usd: float | Decimal | None = None,
        parent: CostTracker | None = None,
        max_subscription_tokens: int | None = None,
    ) -> None:
        self.budget: Decimal | None = None
        self.max_budget_usd = max_budget_usd
        if max_subscription_tokens is not None and max_subscription_tokens <= 0:
            raise ValueError(f"max_subscription_tokens must be above 0, not {max_subscription_tokens}")
        self.token_budget = max_subscription_tokens
        """The subscription tokens this tree may use (`max_subscription_tokens`), or None."""
        self.parent = parent
        self.own_by_model: dict[str, ModelSpend] = {}
        self.by_model: dict[str, ModelSpend] = {}
        self.reserved = ZERO_USD  # estimated cost of this tree's requests in flight
        # Called, with the tracker the response was counted on, once it makes this tree's spend reach its
        # budget (the fleet stops every agent of the tree then: none goes on with a long tool call).
        self.on_reached: Callable[[CostTracker], None] | None = None
        # Where this tree's budget is also kept when that is in another process (see `BudgetLender`).
        self.lender: BudgetLender | None = None

    @property
    def max_budget_usd(self) -> float | None:
        """The budget of this tree in USD, or None; `budget` holds it as an exact decimal."""
        return float(self.budget) if self.budget is not None else None

    @max_budget_usd.setter
    def max_budget_usd(self, amount: float | Decimal | None) -> None:
        budget = usd(amount) if amount is not None else None
        if budget is not None and not (budget.is_finite() and budget > 0):
            raise ValueError(f"max_budget_usd must be a finite amount above 0, not {amount}")
        self.budget = budget

    def add(self, model: str, usage: Usage, cost: Cost | None = None) -> Cost:
        """Count one response of this agent; returns its cost (from the catalog unless given)."""
        cost = cost if cost is not None else cost_of(model, usage)
        self.own_by_model[model] = self.own_by_model.get(model, ModelSpend()).plus(usage, cost)
        reached = []
        for tracker in self.chain():
            before = tracker.spent if tracker.budget is not None else None
            tracker.by_model[model] = tracker.by_model.get(model, ModelSpend()).plus(usage, cost)
            if before is not None and tracker.budget is not None and before < tracker.budget <= tracker.spent:
                reached.append(tracker)
        for tracker in reached:
            if tracker.on_reached is not None:
                tracker.on_reached(self)
        return cost

    def chain(self) -> Iterator[CostTracker]:
        """This tracker, then its parent's, up to the root's."""
        tracker: CostTracker | None = self
        while tracker is not None:
            yield tracker
            tracker = tracker.parent

    @property
    def spent(self) -> Decimal:
        """This agent's spend plus every descendant's, exactly."""
        return sum((s.cost.usd_total for s in self.by_model.values()), ZERO_USD)

    @property
    def own_spent(self) -> Decimal:
        return sum((s.cost.usd_total for s in self.own_by_model.values()), ZERO_USD)

    @property
    def total_usd(self) -> float:
        """This agent's spend plus every descendant's (`spent` as a float, for display)."""
        return float(self.spent)

    @property
    def own_usd(self) -> float:
        return float(self.own_spent)

    @property
    def usage(self) -> Usage:
        total = Usage()
        for spend in self.by_model.values():
            total = total + spend.usage
        return total

    @property
    def unpriced_models(self) -> list[str]:
        return [m for m, s in self.by_model.items() if not s.cost.priced]

    @property
    def subscription_tokens(self) -> int:
        """The tokens this tree's subscription models (marked `(subscription)`) reported using."""
        return sum(subscription_tokens(s.usage) for m, s in self.by_model.items() if m.endswith(SUBSCRIPTION_MARK))

    def tokens_used_up(self) -> bool:
        """True once this tree has used the subscription tokens it may (never without a token budget)."""
        return self.token_budget is not None and self.subscription_tokens >= self.token_budget

    def over_budget(self) -> bool:
        """True once this tree, or any tree it belongs to, has spent its budget."""
        return self.limiting() is not None

    def limiting(self) -> CostTracker | None:
        """The tracker whose budget is spent (this one or an ancestor), or None."""
        return next(
            (t for t in self.chain() if (t.budget is not None and t.spent >= t.budget) or t.tokens_used_up()), None
        )

    def budgeted(self) -> CostTracker | None:
        """The nearest tracker up the chain that has a budget, or None."""
        return next((t for t in self.chain() if t.budget is not None), None)

    # ------------------------------------------------------------------------------ before a request

    def refusing(self, estimate: Cost) -> CostTracker | None:
        """The tracker (this one or an ancestor) whose budget a request estimated at `estimate` would cross,
        counting what is spent and what requests in flight are expected to cost; None when it fits.
        A spent budget refuses every request, even one estimated at nothing (an unpriced model)."""
        amount = estimate.usd_total
        for tracker in self.chain():
            if tracker.tokens_used_up():
                return tracker
            if tracker.budget is None:
                continue
            committed = tracker.spent + tracker.reserved
            if committed >= tracker.budget or committed + amount > tracker.budget:
                return tracker
        return None

    def reserve(self, amount: Decimal) -> None:
        """Hold `amount` against every budget up the chain while a request is in flight."""
        for tracker in self.chain():
            tracker.reserved += amount

    def release(self, amount: Decimal) -> None:
        for tracker in self.chain():
            tracker.reserved -= amount

    # ------------------------------------------------------------------------------------- explaining

    def stop_reason(self, label: str) -> str:
        """Why the agent `label` (whose tracker this is) stops: which budget is reached, and whose."""
        tracker = self.limiting() or self
        whose = "" if tracker is self else f" by the tree of agents {label} belongs to"
        if tracker.tokens_used_up():
            return (
                f"stopped: {tracker.subscription_tokens:,} subscription tokens used{whose}, which reaches the "
                f"limit of {tracker.token_budget:,} (max_subscription_tokens)"
            )
        return (
            f"stopped: ${tracker.total_usd:.4f} spent{whose}, which reaches the budget of "
            f"${tracker.max_budget_usd or 0:.4f} (max_budget_usd)"
        )
