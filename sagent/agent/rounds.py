"""The tool round: every call of an answer runs at once, each posting its result to the agent's inbox.

Calls on the same resource (a file) run in order, in one task; all others run concurrently. A call the
model asks to run in the background starts as a job and is answered at once; after `background_after`
seconds (or on `Agent.background()`), the calls still running move to the background the same way. An
interrupt cancels the round and answers each unfinished call as interrupted, so the history stays
consistent. Hooks decide before each call whether it runs, is denied, or runs with rewritten arguments.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from sagent.agent.calls import (
    backgroundable,
    execute,
    is_named,
    moved_note,
    resource_of,
    started_note,
    wants_background,
)
from sagent.agent.hooks import Ask, Deny, Rewrite
from sagent.agent.inbox import Inbox, ToBackground, ToolDone, UserInput
from sagent.events import Event, ToolFinished, ToolStarted
from sagent.types import PeerMessage, ToolCall, ToolResult, UserMessage

if TYPE_CHECKING:  # annotations only: the agent and its loop call this phase, never the other way round
    from sagent.agent.agent import Agent
    from sagent.agent.loop import Run

INTERRUPTED = "interrupted by the user before this tool call finished"
PREEMPT_AFTER = 0.5  # seconds a round may run on once a peer's message waits; longer calls go to the background
BUDGET_STOPPED = "stopped: the budget (max_budget_usd) was reached before this tool call finished"
NOT_RUN_BUDGET = "not run: the budget (max_budget_usd) was reached before this tool call"


def record_result(agent: Agent, event: ToolFinished) -> ToolFinished:
    """Log a tool call's result, then add it to the history."""
    agent.emit(event)
    agent.history.append(event.result)
    return event


async def run_tools(agent: Agent, inbox: Inbox, calls: Sequence[ToolCall], run: Run) -> AsyncIterator[Event]:
    """Run the tool calls of one answer; every call gets its result in the history (stops `run` on an
    interrupt)."""
    epoch = inbox.next_epoch()
    started = time.monotonic()
    for call in calls:
        yield agent.emit(ToolStarted(call))
    foreground: list[ToolCall] = []
    for call in calls:
        if wants_background(agent.tools, call):
            job = agent.jobs.add(call, None)
            job.task = asyncio.create_task(_run_group(agent, inbox, [call], 0))
            yield record_result(agent, ToolFinished(ToolResult.of(call, started_note(job)), 0))
        else:
            foreground.append(call)
    # Calls on the same resource (a file) run in order, in one task; all others run concurrently.
    groups: dict[object, list[ToolCall]] = {}
    for call in foreground:
        # A lone call shares its resource with nothing: it is not looked up (a file's is a path resolved).
        key = resource_of(agent.tools, call, agent.context) if len(foreground) > 1 else call.id
        groups.setdefault(key, []).append(call)
    tasks = {asyncio.create_task(_run_group(agent, inbox, group, epoch)): group for group in groups.values()}
    task_of = {call.id: task for task, group in tasks.items() for call in group}
    pending = {call.id: call for call in foreground}
    timer = preempt = None
    loop = asyncio.get_running_loop()
    if agent.background_after is not None and pending:
        timer = loop.call_later(agent.background_after, inbox.put, ToBackground(epoch))
    if pending and any(preempts(agent, m) for m in inbox.waiting_input()):
        # A message came while the model answered, before these calls started: it waits no more than it
        # would had it come a moment later.
        preempt = loop.call_later(PREEMPT_AFTER, inbox.put, ToBackground(epoch))
    try:
        while pending:
            item = await inbox.get()
            if isinstance(item, ToolDone) and item.epoch == epoch and item.result.call_id in pending:
                pending.pop(item.result.call_id)
                yield record_result(agent, ToolFinished(item.result, item.duration_ms))
            elif isinstance(item, ToBackground) and item.epoch in (None, epoch):
                # The calls keep running as jobs; their tool calls are answered now, their results come later.
                # Waiting on jobs or messaging is not work to move: those calls stay (each runs on its own).
                chosen = [c for c in pending.values() if item.name is None or is_named(c, item.name)]
                for call in [c for c in chosen if backgroundable(agent.tools, c.name)]:
                    task = task_of[call.id]
                    job = agent.jobs.add(call, task, started)
                    tasks.pop(task, None)
                    del pending[call.id]
                    note = moved_note(job, time.monotonic() - started)
                    yield record_result(agent, ToolFinished(ToolResult.of(call, note), 0))
            elif inbox.on_busy(item, run):
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                why = BUDGET_STOPPED if run.outcome == "error_max_budget_usd" else INTERRUPTED
                for call in pending.values():
                    yield record_result(agent, ToolFinished(ToolResult.of(call, why, is_error=True), 0))
                return
            elif isinstance(item, UserInput) and preempts(agent, item.message) and preempt is None:
                # A peer's message never waits on long calls (a stuck child, a long Bash): past PREEMPT_AFTER
                # they go on as background jobs, nothing killed, and it is read at once. A person's message
                # too, when the agent's `input_preempts` says so (the REPL); else it waits for the round.
                waited = time.monotonic() - started
                preempt = loop.call_later(max(0.0, PREEMPT_AFTER - waited), inbox.put, ToBackground(epoch))
    finally:
        for pending_timer in (timer, preempt):
            if pending_timer is not None:
                pending_timer.cancel()
        for task in tasks:
            task.cancel()


def preempts(agent: Agent, message: UserMessage | PeerMessage) -> bool:
    """Whether `message` moves the long calls of a round to the background: another agent's always, a
    person's when the agent's settings say so."""
    return isinstance(message, PeerMessage) or agent.settings.input_preempts


async def _run_group(agent: Agent, inbox: Inbox, calls: list[ToolCall], epoch: int) -> None:
    for call in calls:
        started = time.monotonic()
        result = await _hooked_execute(agent, call)
        inbox.put(ToolDone(result, (time.monotonic() - started) * 1000, epoch))


async def run_call(agent: Agent, call: ToolCall) -> ToolResult:
    """One call run as `agent`'s tool rounds run theirs (its hooks, permission policy and approver, then its
    tools and tool context), outside any round: for a surface that serves an agent's tools itself, as
    `sagent mcp serve` does. Never raises: a denied call is an error result starting with `denied: `."""
    return await _hooked_execute(agent, call)


async def _hooked_execute(agent: Agent, call: ToolCall) -> ToolResult:
    """Run one call as the hooks decide: allowed, denied (never run), with rewritten arguments, or as the
    approver answers when a hook asks."""
    hooks = agent.settings.hooks
    ran = call
    denied: Deny | None = None
    asks: list[str] = []
    for hook in hooks:
        try:
            decision = await hook.before_tool(agent, ran)
        except Exception as error:  # a failing approval never lets a call through
            decision = Deny(f"{type(hook).__name__} failed: {type(error).__name__}: {error}")
        if isinstance(decision, Deny):
            denied = decision
            break
        if isinstance(decision, Rewrite):
            ran = replace(ran, arguments=dict(decision.arguments))
        elif isinstance(decision, Ask):
            asks.append(decision.reason)
    approver = agent.settings.approver
    if denied is None and asks and approver is not None:
        try:
            answer = await approver(agent, ran, "; ".join(r for r in asks if r))
        except Exception as error:  # an approver that fails never lets a call through either
            answer = Deny(f"the approver failed: {type(error).__name__}: {error}")
        denied = answer if isinstance(answer, Deny) else None
    if denied is not None:
        result = ToolResult.of(call, f"denied: {denied.reason}", is_error=True)
    else:
        result = await execute(agent.tools, ran, agent.context)
    for hook in hooks:
        changed = await hook.after_tool(agent, ran, result)
        if changed is not None and changed.call_id == call.id:  # a hook's feedback on the call, for the model
            result = changed
    return result
