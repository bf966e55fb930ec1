"""The Agent: one inbox, one loop, one stream of events.

    agent = Agent(model, system="You are terse.", tools=builtin_tools())
    async for event in agent.run("fix the failing test"):
        ...

The Agent is the stateful shell: it holds the settings, the model, the history, the inbox, the sub-agents
and jobs, and offers the public API (send, interrupt, spawn, switch model, compact, snapshot, ...). A run
is the loop of `sagent.agent.loop`, which alternates two phases until the model stops asking for tools: a
model call (`turns`: its stream runs in a task that posts to the inbox) and a tool round (`rounds`: every
call of the response runs concurrently, calls on the same file in order, each posting its result to the
inbox). While a phase runs, the loop reads the inbox by the rules of `inbox.Inbox`: user input waits for
the next safe point (after the current phase), an interrupt stops the phase and keeps what it produced.
Every event is written to the session log before the loop acts on it.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncGenerator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, overload

from sagent.agent.calls import tool_specs
from sagent.agent.compaction import HistoryChange, Trigger
from sagent.agent.controls import control_for, send_control
from sagent.agent.cost import CostTracker
from sagent.agent.fleet import Child, ControlKind, Envelope, Fleet, FleetError, Receipt, spawn_child
from sagent.agent.gate import RequestGate
from sagent.agent.handle import AgentError as AgentError  # its home before the run handle; still imported from here
from sagent.agent.handle import Prompt, RunHandle, read_prompt
from sagent.agent.history_window import windowed
from sagent.agent.inbox import Control, Inbox, Interrupt, Quit, ToBackground
from sagent.agent.jobs import Job, JobTable
from sagent.agent.loop import apply_controls, drive
from sagent.agent.pricing import require_price_in_tree, require_prices
from sagent.agent.resume import resume_agent
from sagent.agent.rounds import INTERRUPTED as INTERRUPTED  # the result texts, still imported from here
from sagent.agent.rounds import NOT_RUN_BUDGET as NOT_RUN_BUDGET
from sagent.agent.runtime import AgentTools
from sagent.agent.session import SessionLog, SessionWriteError, clear_results
from sagent.agent.settings import AgentSettings
from sagent.agent.sinks import EventSink
from sagent.agent.state import take_snapshot
from sagent.agent.storage import SessionStorage
from sagent.agent.tokens import ContextSize
from sagent.agent.window import ContextWindow
from sagent.events import (
    AdvisorConsulted,
    Compacted,
    Event,
    HookNotice,
    ModelSwitched,
    Result,
    SessionStarted,
    TaskListChanged,
    ToolResultsCleared,
)
from sagent.evidence.capsules import receive, seal_message
from sagent.providers.base import Model, RetryPolicy, close_model
from sagent.providers.catalog import lookup
from sagent.snapshot import AgentSnapshot, AgentStatus
from sagent.tasks import TaskList
from sagent.tools.base import Tool, ToolContext
from sagent.tools.runtime import SpawnRequest
from sagent.types import AssistantMessage, Effort, Message, ModelRequest, PeerMessage, ToolResult, Usage, UserMessage

USER = "user"  # the sender of messages a person sends to a sub-agent


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
        cwd = Path(settings.cwd or os.getcwd()).resolve()
        self.settings: AgentSettings = replace(settings, cwd=cwd)
        """How this agent works; changed only by the agent itself (a switch of effort or thinking)."""
        self.model = model
        self.tools: dict[str, Tool] = {t.name: t for t in self.settings.tools}
        self.session = session or SessionLog.ephemeral()
        self.history: list[Message] = list(history)
        self.parent = parent
        self.depth: int = parent.depth + 1 if parent is not None else 0
        above = parent.cost if parent is not None else None
        self.cost: CostTracker = CostTracker(self.settings.max_budget_usd, above, self.settings.max_subscription_tokens)
        require_prices(model, self.settings.advisor.model if self.settings.advisor else None, self.cost)
        self.fleet: Fleet = fleet or (parent.fleet if parent is not None else Fleet.for_settings(self.settings))
        self.children: dict[str, Child] = {}
        self.jobs = JobTable()
        self.task_list = TaskList()  # the list the model keeps with TodoWrite (its changes: TaskListChanged)
        folder, ephemeral = self.session.session_dir, self.session.path is None
        self.context = ToolContext(cwd=cwd, session_dir=folder, runtime=AgentTools(self), ephemeral=ephemeral)
        self.context.sandbox, self.context.roots, self.context.may_leave_sandbox = self.settings.sandboxing()
        self.window = ContextWindow(self, self.settings.compaction)
        self.gate = RequestGate(self)  # every model request of this agent passes it
        # False when the model is shared with the parent: it is closed with the parent, not with this agent.
        self.owns_model = parent is None or model is not parent.model
        self._resumed = bool(history)
        self._inbox = Inbox(self.jobs)  # what arrives, and what waits for the loop's next safe point
        self._running = False
        self._started = False
        self._closed = False
        self._retired: list[Model] = []  # models switched away from, closed with the agent
        self._sinks: list[EventSink] = []  # this agent's own sinks beside the log (not inherited)
        self._notices: list[HookNotice | AdvisorConsulted | TaskListChanged] = []  # for this agent's next event
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

    @property
    def thinking_budget(self) -> int | None:
        return self.settings.thinking_budget

    @classmethod
    def resume(
        cls,
        path: str | Path | SessionStorage,
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
        compaction (the original log is left as it is). `path` may be a `SessionStorage` holding the log."""
        chosen = AgentSettings.build(settings, **options)
        return resume_agent(
            cls, path if isinstance(path, SessionStorage) else Path(path), model, chosen, before_compaction, fleet
        )

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
        return self._inbox.pending > 0

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
            capsule, text = seal_message(self, message, text) if message in self.fleet.bus.labels() else (None, text)
            return self.fleet.bus.deliver(Envelope(self.label, message, text, capsule=capsule))
        if isinstance(message, str):
            message = UserMessage.of(message)
        self._inbox.post_input(message)
        return None

    def deliver(self, envelope: Envelope) -> Receipt:
        """Take a message from the bus: text is queued like user input; a control from a coordinator is
        applied at the next safe point, and `stop` stops this agent at once."""
        if self._closed:
            raise FleetError(f"{self.label} has stopped")
        was_working = self._running
        if envelope.control is None:
            sender = envelope.sender
            if envelope.capsule is not None:
                receive(self, envelope.capsule, envelope.text)
            self.send(UserMessage.of(envelope.text) if sender == USER else PeerMessage(sender, envelope.text))
        elif envelope.control == "stop":
            self._inbox.stopped_by = envelope.sender
            self.quit()
        else:
            self._inbox.put(control_for(envelope, self.fleet))
        return Receipt(self.label, was_working, self._inbox.pending)

    def control(self, label: str, kind: ControlKind, **fields: Any) -> Receipt:
        """As a coordinator, tell an agent below this one to change how it works (`send_control` says how:
        switch_model, tune, compact, clear_tool_results, stop), at its next safe point (`stop` at once)."""
        return send_control(self, label, kind, **fields)

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
        child.start(child.prompt)
        return child

    def retract(self, message: UserMessage | PeerMessage) -> bool:
        """Take back a message given to `send()` that has not entered the history yet (so a user can edit
        queued input). True when it was still waiting; False when it was already delivered."""
        return self._inbox.retract(message)

    async def wait_for_input(self) -> bool:
        """While idle, wait until input or a control arrives (a peer's message, a background job's
        result); controls are applied on the way. False when the agent has quit instead."""
        while not self._closed:
            self._inbox.take_idle()
            if self._inbox.controls:
                async for _ in apply_controls(self, self._inbox):
                    pass
            if self._inbox.queued:
                return True
            self._inbox.accept(await self._inbox.get())
        return False

    def interrupt(self, budget: str | None = None) -> None:
        """Stop the current model stream and tools; what they produced so far stays in the history. With
        `budget` (why), the run ends as `error_max_budget_usd`: the tree's budget is spent."""
        if self._running:
            self._inbox.put(Interrupt(budget))

    def quit(self) -> None:
        """Interrupt, and refuse further runs."""
        self._closed = True
        self._inbox.put(Quit())  # wakes a run, or an idle `wait_for_input`

    def background(self, name: str | None = None) -> None:
        """Move the tool calls running now (or those `name` picks: a sub-agent's label, a tool, a call id) to
        the background; the agent goes on, their results come later."""
        if self._running:
            self._inbox.put(ToBackground(name=name))

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
        self._inbox.put(Control(self.label, model, effort, thinking_budget, compact, focus))

    def clear_tool_results(self, call_ids: Sequence[str]) -> list[str]:
        """Replace the output of these tool calls in the history with a short note; the ids cleared."""
        present = {m.call_id for m in self.history if isinstance(m, ToolResult)}
        cleared = [c for c in call_ids if c in present]
        if cleared:
            self.apply(
                HistoryChange(ToolResultsCleared(tuple(cleared)), tuple(clear_results(self.history, set(cleared))))
            )
        return cleared

    def apply(self, change: HistoryChange) -> Event:
        """Take a change of the history (a compaction step, cleared results): its event is written to the
        session log first, then the history becomes `change.history`. The only place history is replaced."""
        self.emit(change.event)
        self.history = list(change.history)
        self.window.rewritten()
        return change.event

    async def run_compaction(self, focus: str | None, trigger: Trigger, *, keep_recent: bool = True) -> list[Event]:
        """Compact now (the loop calls this at its safe points; `compact()` is the public form): each step
        the window works out is applied before the next. The events, already persisted."""
        return [
            self.apply(change)
            async for change in self.window.compact(self.history, focus, trigger, keep_recent=keep_recent)
        ]

    def configure(self, **changes: Any) -> AgentSettings:
        """Replace these fields of the agent's settings (`effort=None`, `hooks=(...)`, ...) from its next
        model request on; the new settings. Sub-agents started later inherit them; running ones keep theirs."""
        self.settings = replace(self.settings, **changes)
        self.context.sandbox, self.context.roots, self.context.may_leave_sandbox = self.settings.sandboxing()
        return self.settings

    def send_as_user(self, label: str, text: str) -> Receipt:
        """Deliver `text` to the agent called `label` as the person's own words (not a peer's message)."""
        return self.fleet.bus.deliver(Envelope(USER, label, text))

    def stop_as_user(self, label: str) -> Receipt:
        """Stop the agent called `label` on the person's behalf (its result says the user stopped it)."""
        return self.fleet.bus.deliver(Envelope(USER, label, control="stop"))

    def cancel_job(self, job_id: str) -> tuple[str, ...]:
        """Cancel a background job: the ids of the jobs that ended (none when it had already ended).
        KeyError naming the id when there is no such job."""
        return tuple(j.id for j in self.jobs.cancel(self.jobs.get(job_id)))

    @property
    def context_window(self) -> int | None:
        """The window of the model in use, in tokens, when known (cheap: nothing is measured)."""
        return self.window.limit

    def compaction_line(self) -> str:
        """When this agent compacts by itself, for people."""
        return self.window.policy_line()

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
        events = await self.run_compaction(focus, "manual")
        return next((e for e in events if isinstance(e, Compacted)), None)

    @property
    def context_tokens(self) -> int:
        """The size of the next request in tokens: the last reported count plus an estimate since."""
        return self.window.tokens()

    def context_size(self) -> ContextSize:
        """The next request's size by part (system prompt, tools, messages, tool results)."""
        return self.window.size()

    def snapshot(
        self, *, measure: bool = True, persistent: bool = False, status: AgentStatus | None = None
    ) -> AgentSnapshot:
        """What this agent and the agents below it are doing now, as one frozen value. `measure=False`
        leaves the context size out (None), for a reader that repaints often. `persistent` and `status`
        are what the parent knows of a sub-agent."""
        own: AgentStatus = "stopped" if self._closed else "working" if self._running else "idle"
        return take_snapshot(self, measure, persistent, status or own, self._inbox.pending)

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

    async def _events(self, prompt: str | UserMessage | None) -> AsyncGenerator[Event, None]:
        if self._closed:
            raise RuntimeError("this agent has quit")
        if self._running:
            raise RuntimeError("this agent is already running: use send() to queue input for it")
        if prompt is not None:
            self.send(prompt)
        opening = None
        if not self._started:
            self._started = True
            opening = SessionStarted(
                self.session.id,
                str(self.context.cwd),
                self.model.provider,
                self.model.name,
                tuple(self.tools),
                resumed=self._resumed,
            )
        self._running = True
        try:
            async for event in drive(self, self._inbox, opening):
                while self._notices:  # what hooks had to say comes before the event that followed it
                    yield self._notices.pop(0)
                yield event
        except SessionWriteError as error:
            # Persist, then act: an event that could not be written is not acted on, and the run ends
            # here (its result cannot be logged either); the sinks still hear how it ended.
            failure = self.failure(str(error))
            for sink in self._sinks:
                sink.on_event(self, failure)
            yield failure
        finally:
            self._running = False

    def switch_model(self, model: Model) -> ModelSwitched | None:
        """Send the next model call, and every one after it, to `model` (any provider). The history goes
        with it as it is; each provider converts it (tool-call ids remapped, foreign thinking as text).
        A response already streaming finishes on the old model."""
        previous = self.model
        if model is previous:
            return None
        require_price_in_tree(model, self.cost)  # UnpricedModelError: the switch does not happen
        self.model = model
        if model in self._retired:  # back to a model used before: it is current again, not retired
            self._retired.remove(model)
        self.window.rewritten()  # the last count was in the old model's tokens
        if self.owns_model:
            self._retired.append(previous)
        self.owns_model = True
        event = ModelSwitched(model.provider, model.name, previous.provider, previous.name)
        self.emit(event)
        return event

    async def aclose(self, *, keep_model: bool = False) -> None:
        """Stop the sub-agents and background jobs, release the models' resources (a local server), and
        close the session log. `keep_model` leaves the current model open, for an agent that takes it over
        (the REPL's /clear and /resume)."""
        if keep_model:
            self.owns_model = False
        self._closed = True
        await asyncio.gather(*(child.stop() for child in list(self.children.values())), return_exceptions=True)
        self.jobs.cancel_all()
        self.fleet.leave(self)
        models = [*self._retired, self.model] if self.owns_model else self._retired
        for model in models:
            await close_model(model)
        self._retired.clear()
        self.session.close()

    # ------------------------------------------------------------------ what the loop asks of the agent

    def notify(self, notice: HookNotice | AdvisorConsulted | TaskListChanged) -> None:
        """Tell the user what a hook has to say (it failed, it blocked a prompt, it sent a message, the
        advisor was consulted): logged at once with this agent's label, and shown in the stream of the main
        agent's run (now, or the next one), before its next event: headless stderr, the REPL, stream-json.
        A change of the task list goes to this agent's own stream: each agent's list is its own."""
        notice = replace(notice, agent=self.label)
        self.emit(notice)
        root = self
        while root.parent is not None and not isinstance(notice, TaskListChanged):
            root = root.parent
        root._notices.append(notice)

    def emit(self, event: Event) -> Event:
        """Persist, then act: the session log gets every event before anything else happens."""
        self.session.record(event)
        for hook in self.settings.hooks:  # the other sinks, once the log has it
            hook.on_event(self, event)
        for sink in self._sinks:
            sink.on_event(self, event)
        return event

    def add_sink(self, sink: EventSink) -> None:
        """Hand every event this agent emits from now on to `sink` too (after the log and the hooks). Unlike
        a hook, a sink is this agent's alone: its sub-agents do not inherit it."""
        self._sinks.append(sink)

    def remove_sink(self, sink: EventSink) -> None:
        """Stop handing events to `sink` (nothing happens when it was not added)."""
        if sink in self._sinks:
            self._sinks.remove(sink)

    def request(self) -> ModelRequest:
        """The request the next model call sends (the history as it stands now)."""
        return ModelRequest(
            system=self.system,
            messages=windowed(self.history, self.settings.history_turns),
            tools=tuple(tool_specs(self.tools, self.context)),
            max_tokens=self.max_tokens,
            thinking_budget=self.thinking_budget,
            effort=self.effort,
            cache_key=self.session.id,
        )

    def budget_reason(self) -> str:
        return self.cost.stop_reason(self.label)
