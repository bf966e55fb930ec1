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

import asyncio
import contextlib
import operator
from collections.abc import AsyncGenerator
from dataclasses import replace
from typing import TYPE_CHECKING

from sagent.agent.cost import BudgetExceededError, CostTracker
from sagent.agent.pricing import require_price_in_tree
from sagent.agent.tokens import estimate_request
from sagent.encoding import scrub_deep
from sagent.events import ModelEvent, ResponseComplete, Retrying, TextDelta, ThinkingDelta, ToolCallDelta
from sagent.evidence.manifest import PromptHasher, manifest_record
from sagent.providers.base import ContextTooLongError, Model, ProviderConnectionError, stream_with_retry
from sagent.providers.catalog import request_cost
from sagent.types import ZERO_USD, AssistantMessage, Cost, Message, ModelRequest, ToolSpec, Usage

if TYPE_CHECKING:
    from sagent.agent.agent import Agent


class RequestGate:
    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        # The last request's messages as given and as scrubbed (the same object where there was nothing to replace).
        self._given: tuple[Message, ...] = ()
        self._clean: list[Message] = []
        # The last request's system prompt and tools, and the same scrubbed.
        self._plain: tuple[str | None, tuple[ToolSpec, ...] | None, str, tuple[ToolSpec, ...]] = (None, None, "", ())
        # The manifests' prompt hashes, at the cost of what a request adds: one for the agent's own requests,
        # one for its asides (a summary, a tool's question), so neither starts the other's from scratch.
        self._hashers = {True: PromptHasher(), False: PromptHasher()}

    def _scrubbed(self, request: ModelRequest) -> ModelRequest:
        """`request` with lone surrogates replaced (`scrub_deep`), walking only the messages the last request
        did not already carry: the history grows by a few messages a round, so a round costs little. A
        message scrubbed once gives the same scrubbed object in every later request, so what the providers
        keep by message (their converted history) holds for it too."""
        given, count = request.messages, len(self._given)
        if len(given) >= count and all(map(operator.is_, given, self._given)):
            messages = self._clean + [scrub_deep(m) for m in given[count:]]
        else:
            known = {id(m): (m, c) for m, c in zip(self._given, self._clean, strict=True)}
            messages = []
            for message in given:
                hit = known.get(id(message))
                messages.append(hit[1] if hit is not None and hit[0] is message else scrub_deep(message))
        self._given, self._clean = given, messages
        if request.system != self._plain[0] or request.tools != self._plain[1]:
            # The system prompt and the tools rarely change from round to round: walked once, and the request
            # carries the very objects of the last one, so what is derived from them downstream (their hash,
            # their encoding) is derived once too, not each round.
            self._plain = (request.system, request.tools, scrub_deep(request.system), scrub_deep(request.tools))
        system, tools = self._plain[2], self._plain[3]
        same = all(map(operator.is_, messages, request.messages))
        if same and system is request.system and tools is request.tools:
            return request
        return replace(request, system=system, tools=tools, messages=tuple(messages))

    def admit(self, model: Model, request: ModelRequest, *, own: bool = False, tokens: int | None = None) -> Cost:
        """The estimated cost of sending `request` to `model`; raises when it must not be sent. `own` says
        the request carries the agent's history as it stands (its size is then measured, not guessed);
        `tokens` gives the size of another request when the caller knows it better than its text does."""
        agent = self.agent
        require_price_in_tree(model, agent.cost)  # an unpriced model under a budget: nothing is sent
        cached = 0
        if own:
            tokens = agent.window.tokens(request)
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
        # A subscription's use is not billed per token: nothing of it is held against a USD budget.
        subscription = getattr(model, "subscription", False)
        estimate = (
            Cost(priced=False) if subscription else request_cost(model.name, tokens, cached, request.max_tokens or 0)
        )
        refusing = agent.cost.refusing(estimate)
        if refusing is not None:
            raise BudgetExceededError(self._refusal(refusing, estimate, tokens), provider=model.provider)
        return estimate

    async def stream(
        self, model: Model, request: ModelRequest, *, own: bool = False, tokens: int | None = None
    ) -> AsyncGenerator[ModelEvent | Retrying, None]:
        """`request` streamed from `model` (retried on transient errors) once admitted; the response is
        counted in the agent's spend before its `ResponseComplete` is passed on."""
        # Lone surrogates (a tool's output, a log written before they were replaced) make a request no SDK can
        # encode, and then every later one: replaced by U+FFFD on the way out, as the events are on the way in.
        request = self._scrubbed(request)
        if tokens is None and not own:
            tokens = estimate_request(request)
        held = self.admit(model, request, own=own, tokens=tokens).usd_total
        prompt_tokens = self.agent.window.tokens() if own else (tokens or 0)
        cost = self.agent.cost
        lender = next((t.lender for t in cost.chain() if t.lender is not None), None)
        lent = held
        if lender is not None:  # the tree's budget is kept in another process too: it holds the estimate first
            refused = await lender.hold(lent)
            if refused is not None:
                raise BudgetExceededError(refused, provider=model.provider)
        # What is asked, logged before it is sent (the run manifest).
        self.agent.session.append(
            manifest_record(model.provider, model.name, request, own=own, hasher=self._hashers[own])
        )
        cost.reserve(held)
        streamed = 0  # characters of the response so far, for a response cut off by a stop
        complete = False
        try:
            async for event in stream_with_retry(model, request, self.agent.retry):
                event = scrub_deep(event)  # a tool call's arguments, the text: as the history will hold them
                if isinstance(event, Retrying):
                    streamed = 0
                elif isinstance(event, ResponseComplete):
                    complete = True
                    message = event.message
                    if not message.model:
                        message = replace(message, provider=model.provider, model=model.name)
                    cost.release(held)
                    held = ZERO_USD
                    cost.add(message.model, message.usage)
                    event = ResponseComplete(message)
                elif isinstance(event, TextDelta | ThinkingDelta):
                    streamed += len(event.text)
                elif isinstance(event, ToolCallDelta):
                    streamed += len(event.arguments_delta)
                yield event
        except (asyncio.CancelledError, GeneratorExit):
            # Stopped while the response was on its way (a budget stop, an interrupt): the provider bills the
            # prompt and what it wrote all the same, so they are counted, estimated, rather than lost.
            if not complete:
                cost.add(model.name, cut_off_usage(prompt_tokens, streamed))
            raise
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


CHARS_PER_TOKEN = 4


def cut_off_usage(prompt_tokens: int, streamed_chars: int) -> Usage:
    """What a response stopped on its way is counted as: its whole prompt, and the output streamed so far at
    about four characters a token (at least one token: the provider had begun)."""
    return Usage(input_tokens=max(0, prompt_tokens), output_tokens=max(1, -(-streamed_chars // CHARS_PER_TOKEN)))
