"""The Agent: one inbox, one loop, one stream of events.

    agent = Agent(model, system="You are terse.", tools=builtin_tools())
    async for event in agent.run("fix the failing test"):
        ...

The loop alternates two phases until the model stops asking for tools: a model call (its stream runs in a
task that posts to the inbox) and a tool round (every call of the response runs concurrently, calls on the
same file in order, each posting its result to the inbox). While a phase runs, the loop reads the inbox:
user input waits for the next safe point (after the current phase), an interrupt stops the phase and keeps
what it produced. Every event is written to the session log before the loop acts on it.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sagent.agent.cost import CostTracker
from sagent.agent.inbox import InboxItem, Interrupt, ModelFailed, ModelOutput, Quit, ToolDone, UserInput
from sagent.agent.session import SessionLog
from sagent.events import (
    Compacted,
    ErrorEvent,
    Event,
    MessageAdded,
    ModelSwitched,
    ResponseComplete,
    Result,
    ResultSubtype,
    Retrying,
    SessionStarted,
    TextDelta,
    ToolFinished,
    ToolStarted,
    TurnFinished,
)
from sagent.providers.base import Model, ProviderError, RetryPolicy, stream_with_retry
from sagent.tools.base import Tool, ToolContext, ToolError, check_arguments, output_content, tool_spec
from sagent.types import (
    AssistantMessage,
    Effort,
    Message,
    ModelRequest,
    PeerMessage,
    TextPart,
    ToolCall,
    ToolResult,
    Usage,
    UserMessage,
)

INTERRUPTED = "interrupted by the user before this tool call finished"
NOT_RUN_BUDGET = "not run: the budget (max_budget_usd) was reached before this tool call"
COMPACT_PREFIX = "[This conversation was compacted. A summary of everything before this point:]"
COMPACT_INSTRUCTION = (
    "Stop working on the task for a moment and summarise this conversation so far, so that it can continue "
    "from your summary alone. Do not call tools. Keep: the user's goal and every instruction or preference "
    "they gave; decisions made and why; files read, created or changed, with what matters in each; commands "
    "run and their results where they matter; errors met and how they were solved; what is done; and what "
    "remains, in order, with the next step first. Quote exact names, paths, values and error messages."
)


class AgentError(Exception):
    """Raised by `Agent.ask` when the run ends in anything but success."""

    def __init__(self, result: Result) -> None:
        super().__init__(result.text)
        self.result = result


@dataclass
class _Run:
    """Counters and outcome of one `run()`."""

    started: float
    turns: int = 0
    rounds: int = 0
    usage: Usage = Usage()
    api_ms: float = 0.0
    last: AssistantMessage | None = None
    outcome: ResultSubtype | None = None
    reason: str = ""

    def stop(self, outcome: ResultSubtype, reason: str) -> None:
        self.outcome, self.reason = outcome, reason


class Agent:
    def __init__(
        self,
        model: Model,
        *,
        system: str = "",
        tools: Sequence[Tool] = (),
        max_tool_rounds: int | None = None,
        max_budget_usd: float | None = None,
        max_tokens: int | None = None,
        thinking_budget: int | None = None,
        effort: Effort | None = None,
        cwd: str | Path | None = None,
        session: SessionLog | None = None,
        history: Sequence[Message] = (),
        retry: RetryPolicy | None = None,
    ) -> None:
        self.model = model
        self.system = system
        self.tools: dict[str, Tool] = {t.name: t for t in tools}
        self.max_tool_rounds = max_tool_rounds
        self.max_tokens = max_tokens
        self.thinking_budget = thinking_budget
        self.effort = effort
        self.retry = retry or RetryPolicy()
        self.session = session or SessionLog.ephemeral()
        self.history: list[Message] = list(history)
        self.cost = CostTracker(max_budget_usd)
        self.context = ToolContext(cwd=Path(cwd or os.getcwd()).resolve(), session_dir=self.session.session_dir)
        self._resumed = bool(history)
        self._inbox: asyncio.Queue[InboxItem] = asyncio.Queue()
        self._queued: list[UserMessage | PeerMessage] = []
        self._unread_input = 0  # UserInput items in the inbox not yet moved to `_queued`
        self._epoch = 0
        self._running = False
        self._started = False
        self._closed = False
        self._retired: list[Model] = []  # models switched away from, closed with the agent

    @classmethod
    def resume(cls, path: str | Path, model: Model, **settings: Any) -> Agent:
        """Reopen a session log and continue it. Tool calls the log shows without a result (the process
        died mid-tool) are answered as interrupted, so the model sees a consistent history."""
        log, state = SessionLog.open(Path(path))
        settings.setdefault("cwd", state.header.get("cwd"))
        agent = cls(model, session=log, history=state.history, **settings)
        for result in state.dangling:
            agent._add_tool_result(ToolFinished(result, 0.0))
        return agent

    # ------------------------------------------------------------------------------------ public API

    @property
    def session_id(self) -> str:
        return self.session.id

    @property
    def running(self) -> bool:
        return self._running

    @property
    def has_pending_input(self) -> bool:
        """True when input was sent that no run has taken yet."""
        return bool(self._queued) or self._unread_input > 0

    def send(self, message: str | UserMessage | PeerMessage) -> None:
        """Queue input. While the agent works it is delivered at the next safe point (after the current
        model response or tool round); when idle, the next `run()` picks it up."""
        if isinstance(message, str):
            message = UserMessage.of(message)
        self._unread_input += 1
        self._inbox.put_nowait(UserInput(message))

    def retract(self, message: UserMessage | PeerMessage) -> bool:
        """Take back a message given to `send()` that has not entered the history yet (so a user can edit
        queued input). True when it was still waiting; False when it was already delivered."""
        for index, queued in enumerate(self._queued):
            if queued is message:
                del self._queued[index]
                return True
        waiting = []
        found = False
        while not self._inbox.empty():
            item = self._inbox.get_nowait()
            if not found and isinstance(item, UserInput) and item.message is message:
                found = True
                self._unread_input -= 1
            else:
                waiting.append(item)
        for item in waiting:
            self._inbox.put_nowait(item)
        return found

    def interrupt(self) -> None:
        """Stop the current model stream and tools; what they produced so far stays in the history."""
        if self._running:
            self._inbox.put_nowait(Interrupt())

    def quit(self) -> None:
        """Interrupt, and refuse further runs."""
        self._closed = True
        if self._running:
            self._inbox.put_nowait(Quit())

    async def compact(self, focus: str | None = None) -> Compacted | None:
        """Replace the history with a summary the model writes of it, to free context. The summary keeps
        the thread: the task, decisions and why, files touched, what is done and what is next. `focus`
        says what matters most. Only between runs; None when there is nothing to compact."""
        if self._running:
            raise RuntimeError("cannot compact while the agent is running")
        if not self.history:
            return None
        ask = COMPACT_INSTRUCTION + (f"\n\nGive most room to: {focus}" if focus else "")
        request = replace(self._request(), messages=(*self.history, UserMessage.of(ask)))
        message: AssistantMessage | None = None
        async for event in stream_with_retry(self.model, request, self.retry):
            if isinstance(event, ResponseComplete):
                message = event.message
        assert message is not None
        summary_text = message.text.strip()
        if not summary_text:
            raise ProviderError("the model returned an empty summary; the history is unchanged")
        cost = self.cost.add(self.model.name, message.usage)
        summary = UserMessage.of(f"{COMPACT_PREFIX}\n\n{summary_text}")
        event = Compacted(summary, len(self.history), message.usage, cost, self.model.name)
        self._emit(event)
        self.history = [summary]
        return event

    async def ask(self, prompt: str | UserMessage) -> AssistantMessage:
        """Run `prompt` to the end and return the final assistant message; raise `AgentError` otherwise."""
        last: AssistantMessage | None = None
        async for event in self.run(prompt):
            if isinstance(event, TurnFinished):
                last = event.message
            elif isinstance(event, Result) and event.is_error:
                raise AgentError(event)
        assert last is not None
        return last

    async def run(self, prompt: str | UserMessage | None = None) -> AsyncIterator[Event]:
        """Work on `prompt` (and any queued input) until the model answers without tools, a limit is
        reached, or an interrupt; yields every event and ends with one `Result`."""
        if self._closed:
            raise RuntimeError("this agent has quit")
        if self._running:
            raise RuntimeError("this agent is already running: use send() to queue input for it")
        if prompt is not None:
            self.send(prompt)
        self._running = True
        try:
            async for event in self._drive():
                yield event
        finally:
            self._running = False

    def switch_model(self, model: Model) -> None:
        """Send the next model call, and every one after it, to `model` (any provider). The history goes
        with it as it is; each provider converts it (tool-call ids remapped, foreign thinking as text).
        A response already streaming finishes on the old model."""
        previous = self.model
        if model is previous:
            return
        self.model = model
        self._retired.append(previous)
        self._emit(ModelSwitched(model.provider, model.name, previous.provider, previous.name))

    async def aclose(self) -> None:
        """Release the models' resources (a local server) and close the session log."""
        for model in (*self._retired, self.model):
            close = getattr(model, "aclose", None)
            if close is not None:
                await close()
        self._retired.clear()
        self.session.close()

    # ------------------------------------------------------------------------------------------ loop

    def _emit(self, event: Event) -> Event:
        """Persist, then act: the session log gets every event before anything else happens."""
        self.session.record(event)
        return event

    async def _drive(self) -> AsyncIterator[Event]:
        run = _Run(started=time.monotonic())
        if not self._started:
            self._started = True
            yield self._emit(
                SessionStarted(
                    self.session.id,
                    str(self.context.cwd),
                    self.model.provider,
                    self.model.name,
                    tuple(self.tools),
                    resumed=self._resumed,
                )
            )
        self._take_idle_inbox()
        if not self._queued:
            raise ValueError("nothing to run: pass a prompt to run() or send() input first")
        while run.outcome is None:
            for message in self._queued:
                yield self._emit(MessageAdded(message))
                self.history.append(message)
            self._queued.clear()
            if self.cost.over_budget():
                run.stop("error_max_budget_usd", self._budget_reason())
                break
            async for event in self._call_model(run):
                yield event
            if run.outcome is not None:
                break
            assert run.last is not None
            calls = run.last.tool_calls
            if not calls:
                self._take_idle_inbox()
                if not self._queued:
                    run.stop("success", run.last.text)
                continue
            if self.cost.over_budget():
                for call in calls:
                    yield self._add_tool_result(ToolFinished(ToolResult.of(call, NOT_RUN_BUDGET, is_error=True), 0))
                run.stop("error_max_budget_usd", self._budget_reason())
                break
            async for event in self._run_tools(calls, run):
                yield event
            if run.outcome is None:
                run.rounds += 1
                if self.max_tool_rounds is not None and run.rounds >= self.max_tool_rounds:
                    run.stop(
                        "error_max_turns",
                        f"stopped after {run.rounds} tool rounds, the limit (max_tool_rounds); "
                        "continue the session to go on",
                    )
        yield self._emit(
            Result(
                run.outcome,
                run.reason,
                run.turns,
                run.usage,
                self.cost.total_usd,
                (time.monotonic() - run.started) * 1000,
                run.api_ms,
                self.session.id,
            )
        )

    def _budget_reason(self) -> str:
        return (
            f"stopped: spent ${self.cost.total_usd:.4f}, which reaches the budget of "
            f"${self.cost.max_budget_usd:.4f} (max_budget_usd)"
        )

    def _take_idle_inbox(self) -> None:
        """At a safe point: move waiting input to the queue; drop what no phase is waiting for."""
        while not self._inbox.empty():
            self._accept(self._inbox.get_nowait())

    def _accept(self, item: InboxItem) -> None:
        if isinstance(item, UserInput):
            self._unread_input -= 1
            self._queued.append(item.message)

    def _on_busy(self, item: InboxItem, run: _Run) -> bool:
        """The rule for input that arrives while a phase runs, in one place. True when the phase must stop."""
        if isinstance(item, UserInput):
            self._accept(item)
            return False
        if isinstance(item, Interrupt | Quit):
            run.stop("interrupted", "interrupted by the user" if isinstance(item, Interrupt) else "quit")
            return True
        return False  # stale output of a cancelled phase

    def _next_epoch(self) -> int:
        self._epoch += 1
        return self._epoch

    # ------------------------------------------------------------------------------------ model call

    def _request(self) -> ModelRequest:
        return ModelRequest(
            system=self.system,
            messages=tuple(self.history),
            tools=tuple(tool_spec(t) for t in self.tools.values()),
            max_tokens=self.max_tokens,
            thinking_budget=self.thinking_budget,
            effort=self.effort,
            cache_key=self.session.id,
        )

    async def _pump(self, request: ModelRequest, epoch: int) -> None:
        try:
            async for event in stream_with_retry(self.model, request, self.retry):
                self._inbox.put_nowait(ModelOutput(event, epoch))
        except Exception as error:
            self._inbox.put_nowait(ModelFailed(error, epoch))

    async def _call_model(self, run: _Run) -> AsyncIterator[Event]:
        epoch = self._next_epoch()
        started = time.monotonic()
        partial: list[str] = []
        message: AssistantMessage | None = None
        task = asyncio.create_task(self._pump(self._request(), epoch))
        try:
            while message is None:
                item = await self._inbox.get()
                if isinstance(item, ModelOutput) and item.epoch == epoch:
                    event = item.event
                    if isinstance(event, ResponseComplete):
                        message = event.message
                        break
                    if isinstance(event, Retrying):
                        partial.clear()
                    elif isinstance(event, TextDelta):
                        partial.append(event.text)
                    yield self._emit(event)
                elif isinstance(item, ModelFailed) and item.epoch == epoch:
                    yield self._emit(_error_event(item.error))
                    run.stop("error_during_execution", _describe(item.error))
                    return
                elif self._on_busy(item, run):
                    if not partial:
                        return
                    # Keep what was streamed: the model and the user both saw it.
                    message = AssistantMessage(
                        (TextPart("".join(partial)),),
                        self.model.provider,
                        self.model.name,
                        stop_reason="interrupted",
                    )
        finally:
            task.cancel()
        elapsed = (time.monotonic() - started) * 1000
        if not message.model:
            message = replace(message, provider=self.model.provider, model=self.model.name)
        cost = self.cost.add(message.model, message.usage)
        run.turns += 1
        run.usage = run.usage + message.usage
        run.api_ms += elapsed
        run.last = message
        yield self._emit(TurnFinished(message, message.usage, cost, self.cost.total_usd, elapsed))
        self.history.append(message)

    # ------------------------------------------------------------------------------------ tool round

    def _add_tool_result(self, event: ToolFinished) -> ToolFinished:
        self._emit(event)
        self.history.append(event.result)
        return event

    async def _run_tools(self, calls: Sequence[ToolCall], run: _Run) -> AsyncIterator[Event]:
        epoch = self._next_epoch()
        for call in calls:
            yield self._emit(ToolStarted(call))
        # Calls on the same resource (a file) run in order, in one task; all others run concurrently.
        groups: dict[object, list[ToolCall]] = {}
        for call in calls:
            groups.setdefault(self._resource(call), []).append(call)
        tasks = [asyncio.create_task(self._run_group(group, epoch)) for group in groups.values()]
        pending = {call.id: call for call in calls}
        try:
            while pending:
                item = await self._inbox.get()
                if isinstance(item, ToolDone) and item.epoch == epoch:
                    pending.pop(item.result.call_id, None)
                    yield self._add_tool_result(ToolFinished(item.result, item.duration_ms))
                elif self._on_busy(item, run):
                    for task in tasks:
                        task.cancel()
                    await asyncio.gather(*tasks, return_exceptions=True)
                    for call in pending.values():
                        yield self._add_tool_result(ToolFinished(ToolResult.of(call, INTERRUPTED, is_error=True), 0))
                    return
        finally:
            for task in tasks:
                task.cancel()

    def _resource(self, call: ToolCall) -> object:
        tool = self.tools.get(call.name)
        try:
            key = tool.resource(call.arguments, self.context) if tool and not call.invalid_arguments else None
        except Exception:
            key = None
        return key if key is not None else call.id

    async def _run_group(self, calls: list[ToolCall], epoch: int) -> None:
        for call in calls:
            started = time.monotonic()
            result = await self._execute(call)
            self._inbox.put_nowait(ToolDone(result, (time.monotonic() - started) * 1000, epoch))

    async def _execute(self, call: ToolCall) -> ToolResult:
        """Run one tool call. Every failure becomes an error result the model can read; none escapes."""
        tool = self.tools.get(call.name)
        if tool is None:
            names = ", ".join(self.tools) or "none"
            return ToolResult.of(call, f"unknown tool {call.name!r}; the tools are: {names}", is_error=True)
        if call.invalid_arguments is not None:
            return ToolResult.of(
                call,
                f"the arguments were not a valid JSON object: {call.invalid_arguments[:500]!r}; "
                "call the tool again with a JSON object matching its schema",
                is_error=True,
            )
        try:
            check_arguments(tool.input_schema, call.arguments)
            output = await tool.run(call.arguments, self.context)
            return ToolResult(call.id, call.name, output_content(output))
        except ToolError as error:
            return ToolResult.of(call, str(error), is_error=True)
        except Exception as error:
            return ToolResult.of(call, f"{call.name} failed: {type(error).__name__}: {error}", is_error=True)


def _describe(error: Exception) -> str:
    if isinstance(error, ProviderError):
        where = f"{error.provider} " if error.provider else ""
        status = f" (HTTP {error.status})" if error.status else ""
        return f"{where}{error.kind.replace('_', ' ')}{status}: {error.message}"
    return f"{type(error).__name__}: {error}"


def _error_event(error: Exception) -> ErrorEvent:
    kind = error.kind if isinstance(error, ProviderError) else "internal"
    return ErrorEvent(_describe(error), kind)  # type: ignore[arg-type]
