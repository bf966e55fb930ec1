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
from typing import Any, overload

from sagent.agent.calls import (
    backgroundable,
    execute,
    moved_note,
    resource_of,
    started_note,
    tool_specs,
    wants_background,
)
from sagent.agent.cost import BudgetExceededError, CostTracker
from sagent.agent.fleet import CONTROLS, Child, ControlKind, Envelope, Fleet, FleetError, Receipt, spawn_child
from sagent.agent.gate import RequestGate
from sagent.agent.handle import AgentError as AgentError  # its home before the run handle; still imported from here
from sagent.agent.handle import Prompt, RunHandle, read_prompt
from sagent.agent.hooks import Deny, Rewrite
from sagent.agent.inbox import (
    Control,
    InboxItem,
    Interrupt,
    ModelFailed,
    ModelOutput,
    Quit,
    ToBackground,
    ToolDone,
    UserInput,
)
from sagent.agent.jobs import Job, JobTable
from sagent.agent.runtime import AgentTools
from sagent.agent.session import SessionLog, SessionWriteError, clear_results
from sagent.agent.settings import AgentSettings
from sagent.agent.tokens import ContextSize
from sagent.agent.window import ContextWindow
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
    ToolResultsCleared,
    ToolStarted,
    TurnFinished,
)
from sagent.providers.base import (
    ContextTooLongError,
    Model,
    ProviderError,
    RetryPolicy,
    close_model,
)
from sagent.providers.catalog import cost_of, lookup
from sagent.snapshot import AgentSnapshot, AgentStatus, JobSnapshot
from sagent.tools.base import Tool, ToolContext, recover_note
from sagent.tools.runtime import SpawnRequest
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

USER = "user"  # the sender of messages a person sends to a sub-agent

INTERRUPTED = "interrupted by the user before this tool call finished"
NOT_RUN_BUDGET = "not run: the budget (max_budget_usd) was reached before this tool call"


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
    overflows: int = 0  # "context too long" answers met, each followed by a compaction
    call_again: bool = False
    auto_compact: bool = True  # off for the rest of the run once an automatic compaction failed

    def stop(self, outcome: ResultSubtype, reason: str) -> None:
        self.outcome, self.reason = outcome, reason


class Agent:
    def __init__(
        self,
        model: Model,
        settings: AgentSettings | None = None,
        *,
        session: SessionLog | None = None,
        history: Sequence[Message] = (),
        fleet: Fleet | None = None,
        parent: Agent | None = None,
        **options: Any,
    ) -> None:
        """`settings` says how the agent works (`AgentSettings`); keyword `options` name the same fields
        (`system=`, `tools=`, `max_budget_usd=`, `hooks=`, ...) and replace them, so `Agent(model,
        system="...")` and `Agent(model, AgentSettings(system="..."))` are the same agent.

        `session` is the log every event goes to first (an in-memory one when None), `history` the
        conversation so far. `fleet` holds how sub-agents' models are built and the bus they talk on; a
        root agent makes its own from the settings' limits when none is given, and a fleet given brings its
        own limits (`max_depth`, `max_agents`, `allow_providers`). `parent` is set by `spawn`."""
        settings = AgentSettings.build(settings, **options)
        if parent is None and fleet is not None:
            # A fleet given holds the limits of its whole tree.
            settings = replace(
                settings,
                max_depth=fleet.max_depth,
                max_agents=fleet.max_agents,
                allow_providers=fleet.allow_providers,
            )
        # Resolved once, here: sub-agents inherit the directory itself, not "the process's at the time".
        self.settings: AgentSettings = replace(settings, cwd=Path(settings.cwd or os.getcwd()).resolve())
        """How this agent works; changed only by the agent itself (a switch of effort or thinking)."""
        self.model = model
        self.tools: dict[str, Tool] = {t.name: t for t in self.settings.tools}
        self.session = session or SessionLog.ephemeral()
        self.history: list[Message] = list(history)
        self.parent = parent
        self.depth = parent.depth + 1 if parent is not None else 0
        self.cost = CostTracker(self.settings.max_budget_usd, parent.cost if parent is not None else None)
        self.fleet = fleet or (parent.fleet if parent is not None else Fleet.for_settings(self.settings))
        self.children: dict[str, Child] = {}
        self.jobs = JobTable()
        self.context = ToolContext(
            cwd=self.settings.cwd, session_dir=self.session.session_dir, runtime=AgentTools(self)
        )
        self.window = ContextWindow(self, self.settings.compaction)
        self.gate = RequestGate(self)  # every model request of this agent passes it
        # False when the model is shared with the parent: it is closed with the parent, not with this agent.
        self.owns_model = parent is None or model is not parent.model
        self._resumed = bool(history)
        self._inbox: asyncio.Queue[InboxItem] = asyncio.Queue()
        self._queued: list[UserMessage | PeerMessage] = []
        self._controls: list[Control] = []
        self._unread_input = 0  # UserInput items in the inbox not yet moved to `_queued`
        self._epoch = 0
        self._running = False
        self._started = False
        self._closed = False
        self._stopped_by: str | None = None
        self._retired: list[Model] = []  # models switched away from, closed with the agent
        self.fleet.join(self)

    # ------------------------------------------------------------------- settings, read where they live

    @property
    def system(self) -> str:
        """The system prompt the model is sent (a sub-agent's note on its place in the fleet included)."""
        return self.settings.prompt

    @property
    def base_system(self) -> str:
        """The system prompt without a sub-agent's note: what its own sub-agents inherit."""
        return self.settings.system

    @property
    def label(self) -> str:
        return self.settings.label

    @property
    def max_tool_rounds(self) -> int | None:
        return self.settings.max_tool_rounds

    @property
    def max_tokens(self) -> int | None:
        return self.settings.max_tokens

    @property
    def retry(self) -> RetryPolicy:
        return self.settings.retry

    @property
    def background_after(self) -> float | None:
        return self.settings.background_after

    @property
    def max_depth(self) -> int:
        """The deepest level agents below this one may reach."""
        return self.settings.max_depth

    @property
    def effort(self) -> Effort | None:
        return self.settings.effort

    @effort.setter
    def effort(self, effort: Effort | None) -> None:
        self.settings = replace(self.settings, effort=effort)

    @property
    def thinking_budget(self) -> int | None:
        return self.settings.thinking_budget

    @thinking_budget.setter
    def thinking_budget(self, budget: int | None) -> None:
        self.settings = replace(self.settings, thinking_budget=budget)

    @classmethod
    def resume(
        cls,
        path: str | Path,
        model: Model,
        settings: AgentSettings | None = None,
        *,
        before_compaction: bool = False,
        fleet: Fleet | None = None,
        **options: Any,
    ) -> Agent:
        """Reopen a session log and continue it, with `settings` and `options` as for `Agent()` (the
        working directory is the session's unless one is given). Tool calls the log shows without a result
        (the process died mid-tool) are answered as interrupted, so the model sees a consistent history.
        `before_compaction` continues instead a new session forked from the log as it was before its last
        compaction (the original log is left as it is)."""
        path = Path(path)
        if before_compaction:
            path = SessionLog.fork_before_compaction(path)
        log, state = SessionLog.open(path)
        chosen = AgentSettings.build(settings, **options)
        if chosen.cwd is None and state.header.get("cwd"):
            chosen = replace(chosen, cwd=Path(state.header["cwd"]))
        agent = cls(model, chosen, session=log, history=state.history, fleet=fleet)
        agent.window.thread = state.thread
        calls = {c.id: c for m in state.history if isinstance(m, AssistantMessage) for c in m.tool_calls}
        for result in state.dangling:
            # The tool may clean up what the dead run left (processes) and say so in the result.
            note = recover_note(agent.tools.get(result.name), calls[result.call_id], agent.context)
            if note:
                result = ToolResult.of(calls[result.call_id], f"{result.text} {note}", is_error=True)
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

    @property
    def closed(self) -> bool:
        """True once the agent has quit (or was stopped by its coordinator)."""
        return self._closed

    @overload
    def send(self, message: str | UserMessage | PeerMessage) -> None: ...

    @overload
    def send(self, message: str, text: str) -> Receipt: ...

    def send(self, message: str | UserMessage | PeerMessage, text: str | None = None) -> Receipt | None:
        """`send(message)`: queue input for this agent. While it works, input is delivered at the next
        safe point (after the current model response or tool round); when idle, the next `run()` takes it.

        `send(label, text)`: message the agent called `label` (any agent of the fleet) from this one. It
        gets the text at its next safe point; the receipt says whether it was working or idle."""
        if text is not None:
            assert isinstance(message, str)
            return self.fleet.bus.deliver(Envelope(self.label, message, text))
        if isinstance(message, str):
            message = UserMessage.of(message)
        self._unread_input += 1
        self._inbox.put_nowait(UserInput(message))
        return None

    def deliver(self, envelope: Envelope) -> Receipt:
        """Take a message from the bus: text is queued like user input; a control from a coordinator is
        applied at the next safe point, and `stop` stops this agent at once."""
        if self._closed:
            raise FleetError(f"{self.label} has stopped")
        was_working = self._running
        if envelope.control is None:
            sender = envelope.sender
            self.send(UserMessage.of(envelope.text) if sender == USER else PeerMessage(sender, envelope.text))
        elif envelope.control == "stop":
            self._stopped_by = envelope.sender
            self.quit()
        else:
            model = None
            if envelope.control == "switch_model":
                if not envelope.model and not envelope.provider:
                    raise FleetError("switch_model needs a model (or a provider)")
                model = self.fleet.model(envelope.provider, envelope.model)
            self._inbox.put_nowait(
                Control(envelope.sender, model=model, compact=envelope.control == "compact", focus=envelope.focus)
            )
        return Receipt(self.label, was_working, len(self._queued) + self._unread_input)

    def control(
        self,
        label: str,
        kind: ControlKind,
        *,
        provider: str | None = None,
        model: str | None = None,
        focus: str | None = None,
    ) -> Receipt:
        """As a coordinator, tell an agent below this one to `switch_model` (to `provider`/`model`),
        `compact` (keeping `focus`) or `stop`. It applies the change at its next safe point (`stop` at once)."""
        if kind not in CONTROLS:
            raise FleetError(f"unknown control {kind!r}; the controls are: {', '.join(CONTROLS)}")
        if not self.fleet.is_above(self.label, label):
            raise FleetError(f"{self.label} does not coordinate {label!r}: controls go only to agents it started")
        envelope = Envelope(self.label, label, control=kind, provider=provider, model=model, focus=focus)
        return self.fleet.bus.deliver(envelope)

    def spawn(
        self,
        prompt: str | SpawnRequest,
        *,
        label: str | None = None,
        system: str | None = None,
        provider: str | None = None,
        model: str | None = None,
        tools: Sequence[str] | None = None,
        max_tool_rounds: int | None = None,
        max_depth: int | None = None,
        persistent: bool = False,
    ) -> Child:
        """Start a sub-agent on `prompt` (or on a whole `SpawnRequest`), running concurrently; `await
        child.wait()` gives its result. Its settings are this agent's, with only what is given replaced
        (and its label and place in the fleet). A persistent child stays after its answer, under its label:
        it reports to this agent each time it goes idle and wakes when a message arrives. FleetError when a
        limit (depth, number of agents, providers) refuses it."""
        request = (
            prompt
            if isinstance(prompt, SpawnRequest)
            else SpawnRequest(prompt, label, system, provider, model, tools, max_tool_rounds, max_depth, persistent)
        )
        child = spawn_child(self, request)
        self.children[child.label] = child
        child.start(request.prompt)
        return child

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

    async def wait_for_input(self) -> bool:
        """While idle, wait until input or a control arrives (a peer's message, a background job's
        result); controls are applied on the way. False when the agent has quit instead."""
        while not self._closed:
            self._take_idle_inbox()
            if self._controls:
                async for _ in self._apply_controls():
                    pass
            if self._queued:
                return True
            self._accept(await self._inbox.get())
        return False

    def interrupt(self) -> None:
        """Stop the current model stream and tools; what they produced so far stays in the history."""
        if self._running:
            self._inbox.put_nowait(Interrupt())

    def quit(self) -> None:
        """Interrupt, and refuse further runs."""
        self._closed = True
        self._inbox.put_nowait(Quit())  # wakes a run, or an idle `wait_for_input`

    def background(self) -> None:
        """Move the tool calls running now to the background; the agent goes on, their results come later."""
        if self._running:
            self._inbox.put_nowait(ToBackground())

    def foreground(self, job_id: str) -> Job:
        """Keep the current run going until this background job is done (its result arrives as input)."""
        job = self.jobs.get(job_id)
        job.foreground = True
        return job

    def fits(self, model_name: str) -> str | None:
        """Why `model_name` cannot hold the current context, or None when it can (or its window is unknown)."""
        info = lookup(model_name)
        if info is None:
            return None
        used = self.context_tokens
        room = info.context_window - min(info.max_output, info.context_window // 4)
        if used > room:
            return f"{model_name} holds {info.context_window:,} tokens and the context is {used:,}; compact first"
        return None

    def request_change(
        self,
        *,
        model: Model | None = None,
        effort: Effort | None = None,
        thinking_budget: int | None = None,
        compact: bool = False,
        focus: str | None = None,
    ) -> None:
        """Change this agent's model, effort or thinking, or compact it, at the next safe point (between
        model calls): at once when idle, never in the middle of a response."""
        self._inbox.put_nowait(Control(self.label, model, effort, thinking_budget, compact, focus))

    def clear_tool_results(self, call_ids: Sequence[str]) -> list[str]:
        """Replace the output of these tool calls in the history with a short note; the ids cleared."""
        present = {m.call_id for m in self.history if isinstance(m, ToolResult)}
        cleared = [c for c in call_ids if c in present]
        if cleared:
            self.emit(ToolResultsCleared(tuple(cleared)))
            self.window.rewrite(clear_results(self.history, set(cleared)))
        return cleared

    def failure(self, reason: str) -> Result:
        """A result for a run that could not finish (used when a sub-agent's task dies)."""
        return Result("error_during_execution", reason, 0, Usage(), self.cost.total_usd, 0.0, 0.0, self.session.id)

    async def compact(self, focus: str | None = None) -> Compacted | None:
        """Free context now: prune old reproducible tool outputs, then replace the older history with a
        summary the model writes (checked to keep the goal, every user message and the files touched); the
        most recent turns stay verbatim. `focus` says what the summary must keep above all. Only between
        runs; None when there is nothing to compact. The session log keeps the history from before."""
        if self._running:
            raise RuntimeError("cannot compact while the agent is running")
        events = await self.window.compact(focus, "manual")
        return next((e for e in events if isinstance(e, Compacted)), None)

    @property
    def context_tokens(self) -> int:
        """The size of the next request in tokens: the last reported count plus an estimate since."""
        return self.window.tokens()

    def context_size(self) -> ContextSize:
        """The next request's size by part (system prompt, tools, messages, tool results)."""
        return self.window.size()

    def snapshot(self, *, persistent: bool = False, status: AgentStatus | None = None) -> AgentSnapshot:
        """What this agent and the agents below it are doing now, as one frozen value."""
        budget = self.cost.limiting() or self.cost.budgeted()  # a spent budget up the tree first
        jobs = tuple(JobSnapshot(j.id, j.call.name, j.state, j.line()) for j in self.jobs.all())
        own_status: AgentStatus = "stopped" if self._closed else "working" if self._running else "idle"
        return AgentSnapshot(
            label=self.label,
            provider=self.model.provider,
            model=self.model.name,
            status=status or own_status,
            depth=self.depth,
            max_depth=self.max_depth,
            persistent=persistent,
            effort=self.effort,
            thinking_budget=self.thinking_budget,
            own_usd=self.cost.own_usd,
            total_usd=self.cost.total_usd,
            budget_usd=budget.max_budget_usd if budget is not None else None,
            budget_spent_usd=budget.total_usd if budget is not None else None,
            usage=self.cost.usage,
            context_tokens=self.context_tokens,
            context_window=self.window.limit,
            messages=len(self.history),
            queued=len(self._queued) + self._unread_input,
            jobs=jobs,
            children=tuple(c.agent.snapshot(persistent=c.persistent, status=c.status) for c in self.children.values()),
        )

    async def ask(self, prompt: Prompt) -> AssistantMessage:
        """Run `prompt` to the end and return the final assistant message; raise `AgentError` otherwise."""
        return (await self.run(prompt)).message

    def run(self, prompt: Prompt | None = None) -> RunHandle:
        """Work on `prompt` (and any queued input) until the model answers without tools, a limit is
        reached, or an interrupt. Iterate the handle for every event, ending with one `Result`; or await it
        for a `Reply` (the final message; `AgentError` when the run did not succeed). `prompt` is text, a
        `UserMessage` or a directive `{"prompt": ...}` (see `sagent.agent.handle`)."""
        message, directive = read_prompt(prompt)
        return RunHandle(self._events(message), directive)

    async def _events(self, prompt: str | UserMessage | None) -> AsyncIterator[Event]:
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
        except SessionWriteError as error:
            # Persist, then act: an event that could not be written is not acted on, and the run ends
            # here (its result cannot be logged either).
            yield self.failure(str(error))
        finally:
            self._running = False

    def switch_model(self, model: Model) -> ModelSwitched | None:
        """Send the next model call, and every one after it, to `model` (any provider). The history goes
        with it as it is; each provider converts it (tool-call ids remapped, foreign thinking as text).
        A response already streaming finishes on the old model."""
        previous = self.model
        if model is previous:
            return None
        self.model = model
        self.window.meter.rewritten()  # the last count was in the old model's tokens
        if self.owns_model:
            self._retired.append(previous)
        self.owns_model = True
        event = ModelSwitched(model.provider, model.name, previous.provider, previous.name)
        self.emit(event)
        return event

    async def aclose(self) -> None:
        """Stop the sub-agents and background jobs, release the models' resources (a local server), and
        close the session log."""
        self._closed = True
        await asyncio.gather(*(child.stop() for child in list(self.children.values())), return_exceptions=True)
        self.jobs.cancel_all()
        self.fleet.leave(self)
        models = [*self._retired, self.model] if self.owns_model else self._retired
        for model in models:
            await close_model(model)
        self._retired.clear()
        self.session.close()

    # ------------------------------------------------------------------------------------------ loop

    def emit(self, event: Event) -> Event:
        """Persist, then act: the session log gets every event before anything else happens."""
        self.session.record(event)
        for hook in self.settings.hooks:  # the other sinks, once the log has it
            hook.on_event(self, event)
        return event

    async def _drive(self) -> AsyncIterator[Event]:
        run = _Run(started=time.monotonic())
        if not self._started:
            self._started = True
            yield self.emit(
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
            async for event in self._apply_controls():
                yield event
            # The safe point: every message waiting now joins the history, including any that arrives
            # while these events are being handled, so the next request carries all of them.
            while not self._drain(run) and self._queued:
                message = self._queued.pop(0)
                yield self.emit(MessageAdded(message))
                self.history.append(message)
            if run.outcome is not None:
                break
            if self.cost.over_budget():
                run.stop("error_max_budget_usd", self.budget_reason())
                break
            async for event in self._keep_room(run):
                yield event
            if run.outcome is not None:
                break
            async for event in self._call_model(run):
                yield event
            if run.outcome is not None:
                break
            if run.call_again:  # the context was too long for the provider and has been compacted
                run.call_again = False
                continue
            assert run.last is not None
            calls = run.last.tool_calls
            if not calls:
                async for event in self._settle(run):
                    yield event
                if run.outcome is None and not self._queued:
                    run.stop("success", run.last.text)
                continue
            if self.cost.over_budget():
                for call in calls:
                    yield self._add_tool_result(ToolFinished(ToolResult.of(call, NOT_RUN_BUDGET, is_error=True), 0))
                run.stop("error_max_budget_usd", self.budget_reason())
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
        yield self.emit(
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

    async def _settle(self, run: _Run) -> AsyncIterator[Event]:
        """After an answer without tool calls: take waiting input, and wait while work this run holds open
        (persistent sub-agents working, background jobs brought to the foreground) may still bring some."""
        while not self._drain(run):
            async for event in self._apply_controls():
                yield event
            if self._queued or not self._holds_open():
                return
            self._on_busy(await self._inbox.get(), run)

    def _holds_open(self) -> bool:
        # A child counts as working from the moment a message reaches it, before its driver wakes.
        working = any(
            c.persistent and (c.status == "working" or c.agent.has_pending_input) for c in self.children.values()
        )
        return working or self.jobs.holds_run()

    async def _apply_controls(self) -> AsyncIterator[Event]:
        """Apply the runtime changes that arrived (a switch, effort, thinking, compaction), in order."""
        controls, self._controls = self._controls, []
        for control in controls:
            if control.model is not None:
                refusal = self.fits(control.model.name)
                if refusal is not None:
                    self._queued.append(PeerMessage("sagent", f"not switched to {control.model.name}: {refusal}"))
                    await close_model(control.model)
                else:
                    switched = self.switch_model(control.model)
                    if switched is not None:
                        yield switched
            if control.effort is not None:
                self.effort = control.effort
            if control.thinking_budget is not None:
                self.thinking_budget = control.thinking_budget or None
            if control.compact:
                try:
                    for event in await self.window.compact(control.focus, "manual"):
                        yield event
                except ProviderError as error:
                    yield self.emit(ErrorEvent(f"compaction failed, the history is unchanged: {error.message}"))

    async def _keep_room(self, run: _Run) -> AsyncIterator[Event]:
        """Before a request: compact when the context has crossed the threshold of the model's window."""
        if not run.auto_compact or not self.window.over_threshold():
            return
        try:
            events = await self.window.compact(None, "auto")
        except BudgetExceededError as error:
            run.stop("error_max_budget_usd", error.message)
            return
        except ProviderError as error:
            run.auto_compact = False
            yield self.emit(ErrorEvent(f"automatic compaction failed, the history is unchanged: {error.message}"))
            return
        for event in events:
            yield event
        if any(isinstance(e, Compacted) for e in events) and self.window.over_threshold():
            # The recent turns alone fill the threshold: summarising again each round would buy nothing.
            run.auto_compact = False

    def budget_reason(self) -> str:
        tracker = self.cost.limiting() or self.cost
        whose = "" if tracker is self.cost else f" by the tree of agents {self.label} belongs to"
        return (
            f"stopped: ${tracker.total_usd:.4f} spent{whose}, which reaches the budget of "
            f"${tracker.max_budget_usd or 0:.4f} (max_budget_usd)"
        )

    def _drain(self, run: _Run) -> bool:
        """At a safe point of a run: take everything waiting in the inbox; True when it stops the run."""
        while not self._inbox.empty():
            if self._on_busy(self._inbox.get_nowait(), run):
                return True
        return run.outcome is not None

    def _take_idle_inbox(self) -> None:
        """At a safe point: move waiting input to the queue; drop what no phase is waiting for."""
        while not self._inbox.empty():
            self._accept(self._inbox.get_nowait())

    def _accept(self, item: InboxItem) -> None:
        """Keep what must outlive the phase it arrived in: input, controls, background jobs' results."""
        if isinstance(item, UserInput):
            self._unread_input -= 1
            self._queued.append(item.message)
        elif isinstance(item, Control):
            self._controls.append(item)
        elif isinstance(item, ToolDone):
            job = self.jobs.finish(item.result, item.duration_ms)
            if job is not None and not job.waited:
                job.delivered = job.message()
                self._queued.append(job.delivered)

    def _on_busy(self, item: InboxItem, run: _Run) -> bool:
        """The rule for input that arrives while a phase runs, in one place. True when the phase must stop."""
        if isinstance(item, Interrupt):
            run.stop("interrupted", "interrupted by the user")
            return True
        if isinstance(item, Quit):
            run.stop("interrupted", f"stopped by {self._stopped_by}" if self._stopped_by else "quit")
            return True
        self._accept(item)  # input, controls and job results wait for the next safe point
        return False

    def _next_epoch(self) -> int:
        self._epoch += 1
        return self._epoch

    # ------------------------------------------------------------------------------------ model call

    def request(self) -> ModelRequest:
        """The request the next model call sends (the history as it stands now)."""
        return ModelRequest(
            system=self.system,
            messages=tuple(self.history),
            tools=tuple(tool_specs(self.tools, self.context)),
            max_tokens=self.max_tokens,
            thinking_budget=self.thinking_budget,
            effort=self.effort,
            cache_key=self.session.id,
        )

    async def _pump(self, request: ModelRequest, epoch: int) -> None:
        try:
            async for event in self.gate.stream(self.model, request, own=True):
                self._inbox.put_nowait(ModelOutput(event, epoch))
        except Exception as error:
            self._inbox.put_nowait(ModelFailed(error, epoch))

    async def _call_model(self, run: _Run) -> AsyncIterator[Event]:
        epoch = self._next_epoch()
        started = time.monotonic()
        partial: list[str] = []
        message: AssistantMessage | None = None
        counted = False  # a complete response is counted by the gate; a partial one kept here is not
        request = self.request()
        for hook in self.settings.hooks:
            request = await hook.before_request(self, request)
        task = asyncio.create_task(self._pump(request, epoch))
        try:
            while message is None:
                item = await self._inbox.get()
                if isinstance(item, ModelOutput) and item.epoch == epoch:
                    event = item.event
                    if isinstance(event, ResponseComplete):
                        message, counted = event.message, True
                        break
                    if isinstance(event, Retrying):
                        partial.clear()
                    elif isinstance(event, TextDelta):
                        partial.append(event.text)
                    yield self.emit(event)
                elif isinstance(item, ModelFailed) and item.epoch == epoch:
                    if isinstance(item.error, BudgetExceededError):
                        run.stop("error_max_budget_usd", item.error.message)
                        return
                    if isinstance(item.error, ContextTooLongError) and run.overflows < 2 and not partial:
                        async for event in self._recover_overflow(run):
                            yield event
                        return
                    yield self.emit(_error_event(item.error))
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
        cost = cost_of(message.model, message.usage) if counted else self.cost.add(message.model, message.usage)
        run.turns += 1
        run.usage = run.usage + message.usage
        run.api_ms += elapsed
        run.last = message
        yield self.emit(TurnFinished(message, message.usage, cost, self.cost.total_usd, elapsed))
        self.history.append(message)
        self.window.observed(request, message.usage)
        for hook in self.settings.hooks:
            await hook.after_response(self, message)

    async def _recover_overflow(self, run: _Run) -> AsyncIterator[Event]:
        """The provider said the request is too long: compact and send it again. The second time, nothing
        is kept verbatim."""
        run.overflows += 1
        try:
            for event in await self.window.compact(None, "overflow", keep_recent=run.overflows == 1):
                yield event
        except BudgetExceededError as error:
            run.stop("error_max_budget_usd", error.message)
            return
        except ProviderError as error:
            yield self.emit(_error_event(error))
            run.stop("error_during_execution", f"the context is too long and compaction failed: {_describe(error)}")
            return
        run.call_again = True

    # ------------------------------------------------------------------------------------ tool round

    def _add_tool_result(self, event: ToolFinished) -> ToolFinished:
        self.emit(event)
        self.history.append(event.result)
        return event

    async def _run_tools(self, calls: Sequence[ToolCall], run: _Run) -> AsyncIterator[Event]:
        epoch = self._next_epoch()
        started = time.monotonic()
        for call in calls:
            yield self.emit(ToolStarted(call))
        foreground: list[ToolCall] = []
        for call in calls:
            if wants_background(self.tools, call):
                job = self.jobs.add(call, None)
                job.task = asyncio.create_task(self._run_group([call], 0))
                yield self._add_tool_result(ToolFinished(ToolResult.of(call, started_note(job)), 0))
            else:
                foreground.append(call)
        # Calls on the same resource (a file) run in order, in one task; all others run concurrently.
        groups: dict[object, list[ToolCall]] = {}
        for call in foreground:
            groups.setdefault(resource_of(self.tools, call, self.context), []).append(call)
        tasks = {asyncio.create_task(self._run_group(group, epoch)): group for group in groups.values()}
        task_of = {call.id: task for task, group in tasks.items() for call in group}
        pending = {call.id: call for call in foreground}
        timer = None
        if self.background_after is not None and pending:
            loop = asyncio.get_running_loop()
            timer = loop.call_later(self.background_after, self._inbox.put_nowait, ToBackground(epoch))
        try:
            while pending:
                item = await self._inbox.get()
                if isinstance(item, ToolDone) and item.epoch == epoch and item.result.call_id in pending:
                    pending.pop(item.result.call_id)
                    yield self._add_tool_result(ToolFinished(item.result, item.duration_ms))
                elif isinstance(item, ToBackground) and item.epoch in (None, epoch):
                    # The calls keep running as jobs; their tool calls are answered now, their results come later.
                    # Waiting on jobs or messaging is not work to move: those calls stay (each runs on its own).
                    for call in [c for c in pending.values() if backgroundable(self.tools, c.name)]:
                        task = task_of[call.id]
                        job = self.jobs.add(call, task, started)
                        tasks.pop(task, None)
                        del pending[call.id]
                        note = moved_note(job, time.monotonic() - started)
                        yield self._add_tool_result(ToolFinished(ToolResult.of(call, note), 0))
                elif self._on_busy(item, run):
                    for task in tasks:
                        task.cancel()
                    await asyncio.gather(*tasks, return_exceptions=True)
                    for call in pending.values():
                        yield self._add_tool_result(ToolFinished(ToolResult.of(call, INTERRUPTED, is_error=True), 0))
                    return
        finally:
            if timer is not None:
                timer.cancel()
            for task in tasks:
                task.cancel()

    async def _run_group(self, calls: list[ToolCall], epoch: int) -> None:
        for call in calls:
            started = time.monotonic()
            result = await self._hooked_execute(call)
            self._inbox.put_nowait(ToolDone(result, (time.monotonic() - started) * 1000, epoch))

    async def _hooked_execute(self, call: ToolCall) -> ToolResult:
        """Run one call as the hooks decide: allowed, denied (never run) or with rewritten arguments."""
        hooks = self.settings.hooks
        ran = call
        for hook in hooks:
            try:
                decision = await hook.before_tool(self, ran)
            except Exception as error:  # a failing approval never lets a call through
                decision = Deny(f"{type(hook).__name__} failed: {type(error).__name__}: {error}")
            if isinstance(decision, Deny):
                result = ToolResult.of(call, f"denied: {decision.reason}", is_error=True)
                break
            if isinstance(decision, Rewrite):
                ran = replace(ran, arguments=dict(decision.arguments))
        else:
            result = await execute(self.tools, ran, self.context)
        for hook in hooks:
            await hook.after_tool(self, ran, result)
        return result


def _describe(error: Exception) -> str:
    if isinstance(error, ProviderError):
        where = f"{error.provider} " if error.provider else ""
        status = f" (HTTP {error.status})" if error.status else ""
        return f"{where}{error.kind.replace('_', ' ')}{status}: {error.message}"
    return f"{type(error).__name__}: {error}"


def _error_event(error: Exception) -> ErrorEvent:
    kind = error.kind if isinstance(error, ProviderError) else "internal"
    return ErrorEvent(_describe(error), kind)  # type: ignore[arg-type]
