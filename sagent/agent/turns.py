"""The model call of a turn: send the request, stream the answer as events, count it.

The stream runs in a task that posts to the agent's inbox, so the loop keeps reading the inbox while the
model answers: an interrupt stops the call and keeps the text streamed so far; other input waits for the
next safe point. A provider's "context too long" is met by compacting and calling again (twice at most);
any other failure ends the run with an error that names the provider and what went wrong.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from sagent.agent.cost import BudgetExceededError
from sagent.agent.images import readable_request
from sagent.agent.inbox import Inbox, ModelFailed, ModelOutput
from sagent.events import ErrorEvent, Event, ResponseComplete, Retrying, TextDelta, TurnFinished
from sagent.providers.base import ContextTooLongError, ProviderError
from sagent.providers.catalog import cost_of
from sagent.types import AssistantMessage, ModelRequest, TextPart

if TYPE_CHECKING:  # annotations only: the agent and its loop call this phase, never the other way round
    from sagent.agent.agent import Agent
    from sagent.agent.loop import Run


async def call_model(agent: Agent, inbox: Inbox, run: Run) -> AsyncIterator[Event]:
    """One model call on the history as it stands: its events, then `TurnFinished`; the answer joins the
    history and `run.last`. Stops `run` on a failure, the budget or an interrupt before any text."""
    epoch = inbox.next_epoch()
    started = time.monotonic()
    partial: list[str] = []
    message: AssistantMessage | None = None
    # Every response is counted by the gate: a complete one when it arrives, one cut off when its stream is
    # cancelled (its prompt and what it wrote, estimated), so a partial one kept here is not counted again.
    request = agent.request()
    for hook in agent.settings.hooks:
        request = await hook.before_request(agent, request)
    request = readable_request(agent.model, request)  # images left by an earlier model: notes for this one
    task = asyncio.create_task(_pump(agent, inbox, request, epoch))
    try:
        while message is None:
            item = await inbox.get()
            if isinstance(item, ModelOutput) and item.epoch == epoch:
                event = item.event
                if isinstance(event, ResponseComplete):
                    message = event.message
                    break
                if isinstance(event, Retrying):
                    partial.clear()
                elif isinstance(event, TextDelta):
                    partial.append(event.text)
                yield agent.emit(event)
            elif isinstance(item, ModelFailed) and item.epoch == epoch:
                if isinstance(item.error, BudgetExceededError):
                    run.stop("error_max_budget_usd", item.error.message)
                    return
                if isinstance(item.error, ContextTooLongError) and run.overflows < 2 and not partial:
                    async for overflow_event in _recover_overflow(agent, run):
                        yield overflow_event
                    return
                yield agent.emit(error_event(item.error))
                run.stop("error_during_execution", describe(item.error))
                return
            elif inbox.on_busy(item, run):
                if not partial:
                    return
                # Keep what was streamed: the model and the user both saw it.
                message = AssistantMessage(
                    (TextPart("".join(partial)),),
                    agent.model.provider,
                    agent.model.name,
                    stop_reason="interrupted",
                )
    finally:
        task.cancel()
    elapsed = (time.monotonic() - started) * 1000
    cost = cost_of(message.model, message.usage)
    run.turns += 1
    run.usage = run.usage + message.usage
    run.api_ms += elapsed
    run.last = message
    yield agent.emit(TurnFinished(message, message.usage, cost, agent.cost.total_usd, elapsed))
    agent.history.append(message)
    agent.window.observed(request, message.usage)
    for hook in agent.settings.hooks:
        await hook.after_response(agent, message)


async def _pump(agent: Agent, inbox: Inbox, request: ModelRequest, epoch: int) -> None:
    """Stream `request` through the agent's gate into the inbox; a failure arrives there too."""
    try:
        async for event in agent.gate.stream(agent.model, request, own=True):
            inbox.put(ModelOutput(event, epoch))
    except Exception as error:
        inbox.put(ModelFailed(error, epoch))


async def _recover_overflow(agent: Agent, run: Run) -> AsyncIterator[Event]:
    """The provider said the request is too long: compact and send it again. The second time, nothing
    is kept verbatim."""
    run.overflows += 1
    try:
        for event in await agent.run_compaction(None, "overflow", keep_recent=run.overflows == 1):
            yield event
    except BudgetExceededError as error:
        run.stop("error_max_budget_usd", error.message)
        return
    except ProviderError as error:
        yield agent.emit(error_event(error))
        run.stop("error_during_execution", f"the context is too long and compaction failed: {describe(error)}")
        return
    run.call_again = True


def describe(error: Exception) -> str:
    """One line for a failed model call: the provider, the kind of failure, the HTTP status, the message."""
    if isinstance(error, ProviderError):
        where = f"{error.provider} " if error.provider else ""
        status = f" (HTTP {error.status})" if error.status else ""
        return f"{where}{error.kind.replace('_', ' ')}{status}: {error.message}"
    return f"{type(error).__name__}: {error}"


def error_event(error: Exception) -> ErrorEvent:
    kind = error.kind if isinstance(error, ProviderError) else "internal"
    return ErrorEvent(describe(error), kind)  # type: ignore[arg-type]
