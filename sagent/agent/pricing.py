"""A budget counts only what it can price: a model without a price is refused under a budget, before any
request, rather than run at $0.

A model is priced when the catalog, or the user's `modelPrices` setting, gives its price; a model of this
machine (the local llama.cpp model, a SelfHosted one) is free, which is a price; a model CLI on the user's own
plan (`subscription`) is not billed per token, so a USD budget has nothing to count (its tokens are bounded by
`max_subscription_tokens`); the scripted test model costs nothing. Any other model under `max_budget_usd`
raises `UnpricedModelError`: the root agent (and its advisor) at its construction, a sub-agent at its spawn
(a tool error), a switch before it happens, and every request at the gate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sagent.providers.base import Model, ProviderError
from sagent.providers.catalog import LOCAL_PROVIDERS, lookup

if TYPE_CHECKING:
    from sagent.agent.cost import CostTracker


FREE_PROVIDERS = (*LOCAL_PROVIDERS, "scripted")
"""Providers whose models cost nothing: this machine's, and the scripted model tests play."""


class UnpricedModelError(ProviderError):
    """A model without a known price was to run under a USD budget (max_budget_usd); nothing was sent.
    Give it a price with the `modelPrices` setting (or `sagent.providers.catalog.set_model_prices`)."""

    kind = "unpriced"


def has_price(model: Model) -> bool:
    """Whether a USD budget can count `model`'s use: a price known, a local model, or a subscription."""
    if getattr(model, "subscription", False) or model.provider in FREE_PROVIDERS:
        return True
    return lookup(model.name) is not None


def unpriced_message(model: Model) -> str:
    """One line: which model, why it is refused, and the setting that prices it."""
    return (
        f"{model.provider}/{model.name} has no known price, so a budget (max_budget_usd) cannot count what it "
        f'spends and it is not used; give it a price in your settings: {{"modelPrices": {{"{model.name}": '
        '{"input": USD per million tokens, "output": …, "cacheRead": …, "cacheWrite": …}}}'
    )


def require_price(model: Model, budgeted: bool) -> None:
    """Raise `UnpricedModelError` when `model` would run under a USD budget (`budgeted`) without a price."""
    if budgeted and not has_price(model):
        raise UnpricedModelError(unpriced_message(model), provider=model.provider)


def require_price_in_tree(model: Model, tracker: CostTracker) -> None:
    """`require_price` for an agent whose spend `tracker` counts: a budget anywhere up its tree applies."""
    require_price(model, tracker.budgeted() is not None)


def require_prices(model: Model, advisor: Model | None, tracker: CostTracker) -> None:
    """`require_price_in_tree` for an agent's model and its advisor's."""
    for each in (model, advisor):
        if each is not None:
            require_price_in_tree(each, tracker)
