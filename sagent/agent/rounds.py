"""The tool round: every call of an answer runs at once, each posting its result to the agent's inbox.

Calls on the same resource (a file) run in order, in one task; all others run concurrently. Hooks decide
before each call whether it runs, is denied, or runs with rewritten arguments, or ask the approver; a call
starts running only once they let it, and its duration counts from then. A call the model asks to run in
the background starts as a job when it starts, and is answered with the job's id; after `background_after`
seconds (or on `Agent.background()`, or a message the agent must read), the calls running move to the
background the same way. A call whose question still waits has not started: it does not move (unless a
message must be read and `AgentSettings.preempt_questions` is on; its question then stays open). An interrupt
cancels the round and answers each unfinished call as interrupted (or as not run, when it never started),
so the history stays consistent.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING

from sagent.agent.call_hooks import clear, reviewed
from sagent.agent.calls import (
    backgroundable,
    execute,
    is_named,
    moved_note,
    resource_of,
    started_note,
    unstarted_note,
    wants_background,
)
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
NOT_RUN_INTERRUPTED = "not run: interrupted by the user before this tool call started"


def record_result(agent: Agent, event: ToolFinished) -> ToolFinished:
    """Log a tool call's result, then add it to the history."""
    agent.emit(event)
    agent.history.append(event.result)
    return event


async def run_tools(agent: Agent, inbox: Inbox, calls: Sequence[ToolCall], run: Run) -> AsyncIterator[Event]:
    """Run the tool calls of one answer; every call gets its result in the history (stops `run` on an
    interrupt)."""
    epoch = inbox.next_epoch()
    state = _RoundState(inbox, epoch)
    for call in calls:
        yield agent.emit(ToolStarted(call))
    # A call the model sends to the background becomes a job once its hooks (and its question) let it run.
    tasks = {
        asyncio.create_task(_run_as_job(agent, inbox, call, epoch, state)): [call]
        for call in calls
        if wants_background(agent.tools, call)
    }
    foreground = [call for call in calls if not wants_background(agent.tools, call)]
    # Calls on the same resource (a file) run in order, in one task; all others run concurrently.
    groups: dict[object, list[ToolCall]] = {}
    for call in foreground:
        # A lone call shares its resource with nothing: it is not looked up (a file's is a path resolved).
        key = resource_of(agent.tools, call, agent.context) if len(foreground) > 1 else call.id
        groups.setdefault(key, []).append(call)
    for group in groups.values():
        tasks[asyncio.create_task(_run_group(agent, inbox, group, epoch, state))] = group
    task_of = {call.id: task for task, group in tasks.items() for call in group}
    pending = {call.id: call for call in calls}
    as_jobs = {call.id for call in calls if wants_background(agent.tools, call)}  # they become jobs themselves
    preempt: ToBackground | None = None
    if agent.background_after is not None and foreground:
        state.later(agent.background_after, state.limit)
    if foreground and any(preempts(agent, m) for m in inbox.waiting_input()):
        # A message came while the model answered, before these calls started: it waits no more than it
        # would had it come a moment later.
        preempt = state.later(PREEMPT_AFTER, ToBackground(epoch))
    try:
        while pending:
            item = await inbox.get()
            if isinstance(item, ToolDone) and item.epoch == epoch and item.result.call_id in pending:
                pending.pop(item.result.call_id)
                job = agent.jobs.of_call(item.result.call_id)
                if job is not None and job.task is not None and job.task is task_of[item.result.call_id]:
                    tasks.pop(job.task, None)  # started as a job: it runs on after the round
                yield record_result(agent, ToolFinished(item.result, item.duration_ms))
            elif isinstance(item, ToBackground) and item.epoch in (None, epoch):
                if item is preempt:  # a message must be read: a `Jobs wait` of this round stops waiting too
                    agent.jobs.stop_waits()
                # The calls keep running as jobs; their tool calls are answered now, their results come later.
                # Waiting on jobs or messaging is not work to move: those calls stay (each runs on its own).
                # Nor is a call that has not started (its question waits): it moves, if still asked to,
                # once it has run as long as it would have before moving; unless a message must be read
                # and the agent's `preempt_questions` says so (stream-json input): then it moves unstarted.
                chosen = [
                    c for c in pending.values() if (item.name is None or is_named(c, item.name)) and c.id not in as_jobs
                ]
                for call in [c for c in chosen if backgroundable(agent.tools, c.name)]:
                    began = state.began.get(call.id)
                    unstarted = began is None and item is preempt and agent.settings.preempt_questions
                    if began is None and not unstarted:
                        state.move_once_started(call, item, preempt, agent.background_after)
                        continue
                    task = task_of[call.id]
                    job = agent.jobs.add(call, task, began)
                    del pending[call.id]
                    if not any(task_of[c] is task for c in pending):  # the task runs no call of the round
                        tasks.pop(task, None)
                    note = unstarted_note(job) if began is None else moved_note(job, time.monotonic() - began)
                    yield record_result(agent, ToolFinished(ToolResult.of(call, note), 0))
            elif inbox.on_busy(item, run):
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                for job in [j for j in agent.jobs.running() if j.task in tasks]:  # started, its call unanswered
                    agent.jobs.cancel(job)
                budget = run.outcome == "error_max_budget_usd"
                for call in pending.values():
                    if call.id in state.began:
                        why = BUDGET_STOPPED if budget else INTERRUPTED
                    else:  # it never started: its question (or the call before it on its file) still waited
                        why = NOT_RUN_BUDGET if budget else NOT_RUN_INTERRUPTED
                    yield record_result(agent, ToolFinished(ToolResult.of(call, why, is_error=True), 0))
                return
            elif isinstance(item, UserInput) and preempts(agent, item.message) and preempt is None:
                # A peer's message never waits on long calls (a stuck child, a long Bash): past PREEMPT_AFTER
                # they go on as background jobs, nothing killed, and it is read at once. A person's message
                # too, when the agent's `input_preempts` says so (the REPL); else it waits for the round.
                waited = time.monotonic() - state.opened
                preempt = state.later(max(0.0, PREEMPT_AFTER - waited), ToBackground(epoch))
    finally:
        state.close()
        for task in tasks:
            task.cancel()


class _RoundState:
    """What a round's tasks and timers share: when each call started running (after its hooks and its
    question), and the moves to the background that wait for a call to start."""

    def __init__(self, inbox: Inbox, epoch: int) -> None:
        self.inbox = inbox
        self.epoch = epoch
        self.opened = time.monotonic()
        self.began: dict[str, float] = {}
        self.limit = ToBackground(epoch)  # what the `background_after` timer sends
        self._waiting: dict[str, float] = {}  # call id -> seconds it may run once started before it moves
        self._timers: list[asyncio.TimerHandle] = []

    def later(self, delay: float, item: ToBackground) -> ToBackground:
        self._timers.append(asyncio.get_running_loop().call_later(delay, self.inbox.put, item))
        return item

    def move_once_started(
        self, call: ToolCall, item: ToBackground, preempt: ToBackground | None, limit: float | None
    ) -> None:
        """A move asked for a call that has not started (its question waits): it moves once it has run as
        long as the asker allows from its start, `limit` for the time limit, `PREEMPT_AFTER` for a
        message, at once for the user's own (Ctrl+B)."""
        if item is self.limit:
            delay = limit if limit is not None else 0.0
        elif item is preempt or item.epoch == self.epoch:
            delay = PREEMPT_AFTER
        else:
            delay = 0.0
        self._waiting[call.id] = min(self._waiting.get(call.id, delay), delay)

    def start(self, call: ToolCall) -> float:
        """The call starts running now: the moment, and a move that waited for it is timed from it."""
        now = time.monotonic()
        self.began[call.id] = now
        delay = self._waiting.pop(call.id, None)
        if delay is not None:
            self.later(delay, ToBackground(self.epoch, call.id))
        return now

    def close(self) -> None:
        for timer in self._timers:
            timer.cancel()


def preempts(agent: Agent, message: UserMessage | PeerMessage) -> bool:
    """Whether `message` moves the long calls of a round to the background: another agent's always, a
    person's when the agent's settings say so."""
    return isinstance(message, PeerMessage) or agent.settings.input_preempts


async def _run_group(agent: Agent, inbox: Inbox, calls: list[ToolCall], epoch: int, state: _RoundState) -> None:
    for call in calls:
        result, duration_ms = await _cleared_execute(agent, call, state)
        inbox.put(ToolDone(result, duration_ms, epoch))


async def _run_as_job(agent: Agent, inbox: Inbox, call: ToolCall, epoch: int, state: _RoundState) -> None:
    """A call the model sent to the background: asked about like any other, it becomes a job (and its call
    is answered with the job's id) only when it starts; its result then comes as a job's."""
    cleared = await clear(agent, call)
    if isinstance(cleared, ToolResult):  # denied: it never runs, and no job is made
        inbox.put(ToolDone(await reviewed(agent, call, call, cleared), 0, epoch))
        return
    began = state.start(call)
    job = agent.jobs.add(call, asyncio.current_task(), began)
    inbox.put(ToolDone(ToolResult.of(call, started_note(job)), 0, epoch))
    result = await reviewed(agent, call, cleared, await execute(agent.tools, cleared, agent.context))
    inbox.put(ToolDone(result, (time.monotonic() - began) * 1000, 0))


async def _cleared_execute(agent: Agent, call: ToolCall, state: _RoundState | None) -> tuple[ToolResult, float]:
    """Run one call as the hooks decide: its result, and how long it ran (from its start, after its hooks
    and its question; 0 when it was denied and never ran)."""
    cleared = await clear(agent, call)
    if isinstance(cleared, ToolResult):
        return await reviewed(agent, call, call, cleared), 0.0
    began = state.start(call) if state is not None else time.monotonic()
    result = await reviewed(agent, call, cleared, await execute(agent.tools, cleared, agent.context))
    return result, (time.monotonic() - began) * 1000


async def run_call(agent: Agent, call: ToolCall) -> ToolResult:
    """One call run as `agent`'s tool rounds run theirs (its hooks, permission policy and approver, then its
    tools and tool context), outside any round: for a surface that serves an agent's tools itself, as
    `sagent mcp serve` does. Never raises: a denied call is an error result starting with `denied: `."""
    result, _ = await _cleared_execute(agent, call, None)
    return result
