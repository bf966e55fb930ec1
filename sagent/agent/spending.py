"""Changing what an agent tree may spend while it runs (the REPL's `/budget`).

The limit lives in two places that must agree: the agent's cost tracker, which the request gate and the
loop ask before every request (for the whole tree below the agent), and its settings, which agents built
from this one later copy. `set_budget` changes both; reading the limit goes through `Agent.snapshot()`
(`budget_usd`, `budget_spent_usd`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sagent.agent.pricing import has_price, unpriced_message

if TYPE_CHECKING:
    from sagent.agent.agent import Agent


def set_budget(agent: Agent, usd: float | None) -> None:
    """Set the spending limit of `agent`'s tree to `usd` dollars (None: no limit of its own) from its next
    request on. ValueError for an amount that is not finite and above 0, or for a budget on a model (or
    advisor) without a price, which it could not count."""
    if usd is not None:
        for model in (agent.model, agent.settings.advisor.model if agent.settings.advisor else None):
            if model is not None and not has_price(model):
                raise ValueError(unpriced_message(model))
    agent.cost.max_budget_usd = usd  # checks the amount first
    agent.configure(max_budget_usd=usd)
