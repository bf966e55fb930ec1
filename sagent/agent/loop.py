"""The loop of one run: safe point, model call, tool round, until the model stops asking for tools.

    async for event in drive(agent, inbox, opening):
        ...

At each safe point the loop applies the runtime changes that arrived (a switch of model, effort, a
compaction) and moves the waiting input into the history; then it keeps room in the context, calls the
model (`turns.call_model`) and runs the tools the answer asks for (`rounds.run_tools`). A run ends with one
`Result`: success when the model answers without tools and nothing more is waiting, or a limit (budget,
tool rounds), an error, an interrupt. `Run` holds its counters and outcome.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sagent.agent.controls import results_to_clear
from sagent.agent.cost import BudgetExceededError
from sagent.agent.hook_points import PROMPT, STOP, screen_prompt, session_context, stop_reason, unless_interrupted
from sagent.agent.hooks import MAX_STOP_CONTINUES, SessionSource
from sagent.agent.inbox import Inbox
from sagent.agent.pricing import has_price, unpriced_message
from sagent.agent.rounds import NOT_RUN_BUDGET, record_result, run_tools
from sagent.agent.turns import call_model
from sagent.events import (
    Compacted,
    ErrorEvent,
    Event,
    HookNotice,
    MessageAdded,
    Result,
    ResultSubtype,
    SessionStarted,
    TaskListChanged,
    ToolFinished,
)
from sagent.lib.words import quantity
from sagent.providers.base import ProviderError, close_model
from sagent.types import AssistantMessage, PeerMessage, ToolResult, Usage

if TYPE_CHECKING:  # annotations only: the agent calls the loop, never the other way round
    from sagent.agent.agent import Agent


@dataclass
class Run:
    """Counters and outcome of one `run()`."""

    started: float
    turns: int = 0
    rounds: int = 0
    usage: Usage = Usage()
    api_ms: float = 0.0
    last: AssistantMessage | None = None
    outcome: ResultSubtype | None = None
    reason: str = ""
    overflows: int = 0  # "context too long" answers met, each followed by a compaction
    call_again: bool = False
    auto_compact: bool = True  # off for the rest of the run once an automatic compaction failed
    stop_continues: int = 0  # times an `on_stop` hook kept this run going

    def done(self) -> bool:
        """True once the run has an outcome: it stops at the next check. (A method, not a property, so that
        a type checker does not take its value as fixed across the phases that change it.)"""
        return self.outcome is not None

    def stop(self, outcome: ResultSubtype, reason: str) -> None:
        self.outcome, self.reason = outcome, reason


async def drive(agent: Agent, inbox: Inbox, opening: SessionStarted | None) -> AsyncIterator[Event]:
    """One run of `agent` on the input waiting in `inbox`, ending with its `Result`. `opening` is the
    first event of the agent's first run (None after)."""
    run = Run(started=time.monotonic())
    first_job = agent.jobs.mark()  # the jobs this run starts come after it
    if opening is not None:
        yield agent.emit(opening)
        if opening.resumed and agent.task_list:  # the list it kept, for the surfaces that show one
            yield agent.emit(TaskListChanged(agent.task_list, agent.label))
    inbox.take_idle()
    if not inbox.queued:
        raise ValueError("nothing to run: pass a prompt to run() or send() input first")
    if opening is not None and agent.settings.hooks:
        source: SessionSource = "resume" if opening.resumed else "startup"
        inbox.queued[:0] = await unless_interrupted(inbox, run, session_context(agent, source)) or []
    while not run.done():
        async for event in apply_controls(agent, inbox):
            yield event
        # The safe point: every message waiting now joins the history, including any that arrives
        # while these events are being handled, so the next request carries all of them.
        joined, blocked = False, ""
        while not inbox.drain(run) and inbox.queued:
            message = inbox.queued.pop(0)
            decision = await unless_interrupted(inbox, run, screen_prompt(agent, message))
            if decision is None:  # interrupted while the hooks ran: the message is not taken
                inbox.queued.insert(0, message)
                break
            if decision.block is not None:
                blocked = decision.block
                agent.notify(HookNotice("UserPromptSubmit", f"prompt blocked: {blocked}", "warning"))
                continue
            joined = True
            yield agent.emit(MessageAdded(message))
            agent.history.append(message)
            if decision.context:
                context = PeerMessage(PROMPT, decision.context)
                yield agent.emit(MessageAdded(context))
                agent.history.append(context)
        if blocked and not joined and not run.done() and (run.last is None or not run.last.tool_calls):
            # Every message was blocked: the model has nothing new to answer.
            if run.last is None:
                run.stop("error_during_execution", f"the prompt was blocked by a hook: {blocked}")
            else:
                run.stop("success", run.last.text)
        if run.done():
            break
        if agent.cost.over_budget():
            run.stop("error_max_budget_usd", agent.budget_reason())
            break
        async for event in keep_room(agent, run):
            yield event
        if run.done():
            break
        async for event in call_model(agent, inbox, run):
            yield event
        if run.done():
            break
        if run.call_again:  # the context was too long for the provider and has been compacted
            run.call_again = False
            continue
        assert run.last is not None
        calls = run.last.tool_calls
        if not calls:
            async for event in settle(agent, inbox, run):
                yield event
            if not run.done() and not inbox.queued and not await keep_going(agent, inbox, run):
                run.stop("success", run.last.text)
            continue
        if agent.cost.over_budget():
            for call in calls:
                yield record_result(agent, ToolFinished(ToolResult.of(call, NOT_RUN_BUDGET, is_error=True), 0))
            run.stop("error_max_budget_usd", agent.budget_reason())
            break
        async for event in run_tools(agent, inbox, calls, run):
            yield event
        if not run.done():
            run.rounds += 1
            if agent.max_tool_rounds is not None and run.rounds >= agent.max_tool_rounds:
                run.stop(
                    "error_max_turns",
                    f"stopped after {quantity(run.rounds, 'tool round')}, the limit (max_tool_rounds); "
                    "continue the session to go on",
                )
    assert run.outcome is not None
    if run.outcome == "interrupted":  # the user stopped the run: its background jobs stop with it
        for event in stop_jobs(agent, first_job):
            yield event
    yield agent.emit(
        Result(
            run.outcome,
            run.reason,
            run.turns,
            run.usage,
            agent.cost.total_usd,
            (time.monotonic() - run.started) * 1000,
            run.api_ms,
            agent.session.id,
        )
    )


def stop_jobs(agent: Agent, first_job: int) -> list[Event]:
    """Cancel the jobs a stopped run started (their results will never come) and tell the model so, in the
    history, where the calls that started them promised a result."""
    ended = agent.jobs.cancel_since(first_job)
    if not ended:
        return []
    lines = [f"{job.id} ({job.summary()})" for job in ended]
    note = PeerMessage(
        "sagent",
        "the user stopped the turn; its background jobs were cancelled and will send no result: " + "; ".join(lines),
    )
    event = agent.emit(MessageAdded(note))
    agent.history.append(note)
    return [event]


async def keep_going(agent: Agent, inbox: Inbox, run: Run) -> bool:
    """The run would end with success: True when it does not, because an `on_stop` hook keeps it going
    (its reason is queued as the model's next input; at most `MAX_STOP_CONTINUES` times a run) or an
    interrupt came while the hooks ran."""
    if not agent.settings.hooks or run.last is None:
        return False
    active = run.stop_continues > 0
    reason = await unless_interrupted(inbox, run, stop_reason(agent, run.last, active))
    if run.done():
        return True
    if reason is None:
        return False
    if run.stop_continues >= MAX_STOP_CONTINUES:
        note = f"the run ends: a hook kept it going {MAX_STOP_CONTINUES} times already (it said: {reason})"
        agent.notify(HookNotice("Stop", note, "warning"))
        return False
    run.stop_continues += 1
    inbox.queued.append(PeerMessage(STOP, reason))
    return True


async def settle(agent: Agent, inbox: Inbox, run: Run) -> AsyncIterator[Event]:
    """After an answer without tool calls: take waiting input, and wait while work this run holds open
    (persistent sub-agents working, background jobs brought to the foreground) may still bring some."""
    while not inbox.drain(run):
        async for event in apply_controls(agent, inbox):
            yield event
        if inbox.queued or not holds_open(agent):
            return
        inbox.on_busy(await inbox.get(), run)


def holds_open(agent: Agent) -> bool:
    """True while work the run waits for may still bring input: a persistent sub-agent working, a
    background job brought to the foreground."""
    # A child counts as working from the moment a message reaches it, before its driver wakes.
    working = any(
        c.persistent and (c.status == "working" or c.agent.has_pending_input) for c in agent.children.values()
    )
    return working or agent.jobs.holds_run()


async def apply_controls(agent: Agent, inbox: Inbox) -> AsyncIterator[Event]:
    """Apply the runtime changes that arrived (a switch, effort, thinking, compaction), in order."""
    controls, inbox.controls = inbox.controls, []
    for control in controls:
        if control.model is not None:
            refusal = agent.fits(control.model.name)
            if refusal is None and agent.cost.budgeted() is not None and not has_price(control.model):
                refusal = unpriced_message(control.model)  # a budget cannot count it: no switch
            if refusal is not None:
                inbox.queued.append(PeerMessage("sagent", f"not switched to {control.model.name}: {refusal}"))
                await close_model(control.model)
            else:
                switched = agent.switch_model(control.model)
                if switched is not None:
                    yield switched
        if control.effort is not None:
            agent.configure(effort=control.effort)
        if control.thinking_budget is not None:
            agent.configure(thinking_budget=control.thinking_budget or None)
        if control.clear_tools is not None or control.clear_keep_last is not None:
            agent.clear_tool_results(results_to_clear(agent.history, control.clear_tools, control.clear_keep_last))
        if control.compact:
            try:
                for event in await agent.run_compaction(control.focus, "manual"):
                    yield event
            except ProviderError as error:
                yield agent.emit(ErrorEvent(f"compaction failed, the history is unchanged: {error.message}"))


async def keep_room(agent: Agent, run: Run) -> AsyncIterator[Event]:
    """Before a request: compact when the context has crossed the threshold of the model's window."""
    if not run.auto_compact or not agent.window.over_threshold():
        return
    try:
        events = await agent.run_compaction(None, "auto")
    except BudgetExceededError as error:
        run.stop("error_max_budget_usd", error.message)
        return
    except ProviderError as error:
        run.auto_compact = False
        yield agent.emit(ErrorEvent(f"automatic compaction failed, the history is unchanged: {error.message}"))
        return
    for event in events:
        yield event
    if any(isinstance(e, Compacted) for e in events) and agent.window.over_threshold():
        # The recent turns alone fill the threshold: summarising again each round would buy nothing.
        run.auto_compact = False
