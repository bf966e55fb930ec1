"""The one door every model request of an agent goes through: the window and the budget are checked here,
before anything is sent.

The main loop's next request, a compaction summary and a tool's question to a small model all pass
`RequestGate.stream` (or `complete`), which

- refuses a request larger than the model's context window with `ContextTooLongError`, raised before
  sending, so the caller compacts (or summarises in parts) exactly as after the provider's own refusal;
- refuses a request whose estimated cost would cross a budget anywhere up the tree of agents with
  `BudgetExceededError` (the estimate prices the prompt, and the response too when its length is capped);
- holds that estimate against the tree's budgets while the request is in flight, so agents of one tree
  asking at the same time cannot all spend the same remaining dollars;
- counts the response's usage and cost the moment it completes.

Sub-agents have gates of their own whose cost trackers chain to their parents', so the cap is the tree's.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator
from dataclasses import replace
from typing import TYPE_CHECKING

from sagent.agent.cost import BudgetExceededError, CostTracker
from sagent.agent.tokens import estimate_request
from sagent.events import ModelEvent, ResponseComplete, Retrying
from sagent.evidence.manifest import manifest_record
from sagent.providers.base import ContextTooLongError, Model, ProviderConnectionError, stream_with_retry
from sagent.providers.catalog import request_cost
from sagent.types import ZERO_USD, AssistantMessage, Cost, ModelRequest

if TYPE_CHECKING:
    from sagent.agent.agent import Agent


class RequestGate:
    def __init__(self, agent: Agent) -> None:
        self.agent = agent

    def admit(self, model: Model, request: ModelRequest, *, own: bool = False, tokens: int | None = None) -> Cost:
        """The estimated cost of sending `request` to `model`; raises when it must not be sent. `own` says
        the request carries the agent's history as it stands (its size is then measured, not guessed);
        `tokens` gives the size of another request when the caller knows it better than its text does."""
        agent = self.agent
        cached = 0
        if own:
            tokens = agent.window.tokens()
            cached = agent.window.meter.cached_tokens()
        elif tokens is None:
            tokens = estimate_request(request)
        limit = agent.window.limit_of(model)
        if limit is not None and tokens > limit:
            raise ContextTooLongError(
                f"the request is about {tokens:,} tokens, more than the {limit:,}-token window of {model.name}; "
                "it was not sent",
                provider=model.provider,
            )
        estimate = request_cost(model.name, tokens, cached, request.max_tokens or 0)
        refusing = agent.cost.refusing(estimate)
        if refusing is not None:
            raise BudgetExceededError(self._refusal(refusing, estimate, tokens), provider=model.provider)
        return estimate

    async def stream(
        self, model: Model, request: ModelRequest, *, own: bool = False, tokens: int | None = None
    ) -> AsyncGenerator[ModelEvent | Retrying, None]:
        """`request` streamed from `model` (retried on transient errors) once admitted; the response is
        counted in the agent's spend before its `ResponseComplete` is passed on."""
        held = self.admit(model, request, own=own, tokens=tokens).usd_total
        cost = self.agent.cost
        lender = next((t.lender for t in cost.chain() if t.lender is not None), None)
        lent = held
        if lender is not None:  # the tree's budget is kept in another process too: it holds the estimate first
            refused = await lender.hold(lent)
            if refused is not None:
                raise BudgetExceededError(refused, provider=model.provider)
        # What is asked, logged before it is sent (the run manifest).
        self.agent.session.append(manifest_record(model.provider, model.name, request, own=own))
        cost.reserve(held)
        try:
            async for event in stream_with_retry(model, request, self.agent.retry):
                if isinstance(event, ResponseComplete):
                    message = event.message
                    if not message.model:
                        message = replace(message, provider=model.provider, model=model.name)
                    cost.release(held)
                    held = ZERO_USD
                    cost.add(message.model, message.usage)
                    event = ResponseComplete(message)
                yield event
        finally:
            cost.release(held)
            if lender is not None:
                lender.settle(lent)

    async def complete(
        self, model: Model, request: ModelRequest, *, own: bool = False, tokens: int | None = None
    ) -> AssistantMessage:
        """The whole response to `request`, for callers that need no deltas (a summary, a tool's question)."""
        async with contextlib.aclosing(self.stream(model, request, own=own, tokens=tokens)) as events:
            async for event in events:
                if isinstance(event, ResponseComplete):
                    return event.message
        raise ProviderConnectionError("the model stream ended without a complete response")

    def _refusal(self, tracker: CostTracker, estimate: Cost, tokens: int) -> str:
        agent = self.agent
        whose = "" if tracker is agent.cost else f" by the tree of agents {agent.label} belongs to"
        if tracker.tokens_used_up():
            return (
                f"stopped before a request of about {tokens:,} tokens: {tracker.subscription_tokens:,} subscription "
                f"tokens used{whose} of the {tracker.token_budget:,} allowed (max_subscription_tokens); "
                "the request was not sent"
            )
        in_flight = f" (${tracker.reserved:.4f} more in flight)" if tracker.reserved else ""
        return (
            f"stopped before a request of about {tokens:,} tokens estimated at ${estimate.usd_total:.4f}: "
            f"${tracker.spent:.4f} spent{whose}{in_flight} of the budget of ${tracker.budget or 0:.4f} "
            "(max_budget_usd); the request was not sent"
        )
