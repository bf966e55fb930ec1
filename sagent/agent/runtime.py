"""`AgentTools`: what the agent tools (AgentSpawn, AgentSend, AgentSelf, Jobs) see of the agent running
them. It turns the agent's typed operations into the text a model reads, and refusals into `ToolError`.

It sees the agent as a `ToolsAgent`: the agent's public methods and its snapshot (`snapshot`, `spawn`,
`send`, `control`, `request_change`, `cancel_job`, `compaction_line`, ...), like any other client of the
agent, and three parts the agent keeps for its tools: the fleet (AgentSelf's peers, models to switch to),
the job table (Jobs wait) and the request gate (a tool's question to a small model). The protocol is the
whole surface: the type checker refuses any other reach into the agent."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, cast

from sagent.agent.calls import SPAWN_TOOL, backgroundable, is_named
from sagent.agent.cost import BudgetExceededError, CostTracker
from sagent.agent.fleet import Child, ControlKind, Fleet, FleetError, Receipt
from sagent.agent.pricing import require_price_in_tree
from sagent.events import AdvisorConsulted, Event, HookNotice, SmallModelCall, TaskListChanged
from sagent.lib.words import quantity
from sagent.providers.base import Model, ProviderError, close_model
from sagent.providers.catalog import SMALL_MODELS, cost_of, lookup
from sagent.tasks import TaskList
from sagent.tools.base import Tool, ToolError
from sagent.tools.runtime import SpawnRequest
from sagent.types import (
    AssistantMessage,
    Effort,
    Message,
    ModelRequest,
    PeerMessage,
    ToolCall,
    ToolResult,
    UserMessage,
)

SMALL_MODEL_MAX_TOKENS = 2048

if TYPE_CHECKING:
    from sagent.agent.gate import RequestGate
    from sagent.agent.jobs import JobTable
    from sagent.agent.settings import AgentSettings
    from sagent.agent.tokens import ContextSize
    from sagent.snapshot import AgentSnapshot
    from sagent.tools.editor import Editor


class ToolsAgent(Protocol):
    """What `AgentTools` uses of the agent running the tools, and nothing else."""

    @property
    def label(self) -> str: ...
    @property
    def model(self) -> Model: ...
    @property
    def parent(self) -> object: ...
    @property
    def history(self) -> Sequence[Message]: ...
    @property
    def fleet(self) -> Fleet: ...
    @property
    def cost(self) -> CostTracker: ...
    @property
    def jobs(self) -> JobTable: ...
    @property
    def gate(self) -> RequestGate: ...
    @property
    def tools(self) -> Mapping[str, Tool]: ...
    @property
    def settings(self) -> AgentSettings: ...

    task_list: TaskList

    def spawn(self, prompt: SpawnRequest) -> Child: ...
    def send(self, message: str, text: str) -> Receipt: ...
    def control(self, label: str, kind: ControlKind, **fields: Any) -> Receipt: ...
    def snapshot(self, *, measure: bool = True) -> AgentSnapshot: ...
    def context_size(self) -> ContextSize: ...
    def compaction_line(self) -> str: ...
    def fits(self, model_name: str) -> str | None: ...
    def request_change(
        self,
        *,
        model: Model | None = None,
        effort: Effort | None = None,
        thinking_budget: int | None = None,
        compact: bool = False,
        focus: str | None = None,
    ) -> None: ...
    def clear_tool_results(self, call_ids: Sequence[str]) -> list[str]: ...
    def cancel_job(self, job_id: str) -> tuple[str, ...]: ...
    def background(self, name: str | None = None) -> None: ...
    def retract(self, message: UserMessage | PeerMessage) -> bool: ...
    def emit(self, event: Event) -> Event: ...
    def notify(self, notice: HookNotice | AdvisorConsulted | TaskListChanged) -> None: ...


def _for_elsewhere(request: SpawnRequest, have: list[str]) -> SpawnRequest:
    """An agent file's request for another process of the fleet: its prompt and tools go with it (the
    process's own model and policy apply there); a worktree is made only here."""
    from dataclasses import replace

    from sagent.agent.subagents import tool_names

    definition = request.agent
    assert definition is not None
    if definition.isolation is not None:
        raise ToolError(f"agent {definition.name} runs in its own worktree, which `on` cannot give; leave out `on`")
    tools = request.tools
    if tools is None and definition.tools is not None:
        tools = tuple(tool_names(definition.tools, have)[0])
    system = definition.system if request.system is None else request.system
    return replace(request, system=system, tools=tools, agent=None)


class AgentTools:
    def __init__(self, agent: ToolsAgent) -> None:
        self.agent = agent

    def tool_names(self) -> Collection[str]:
        return self.agent.tools.keys()

    # -------------------------------------------------------------------------------------- peers

    def peers(self) -> list[str]:
        me = self.agent
        lines = []
        for label, other in me.fleet.agents.items():
            if other is me:
                continue
            if other is me.parent:
                relation = "your parent"
            elif other.parent is me:
                relation = "your sub-agent"
            else:
                relation = f"started by {other.parent.label}" if other.parent is not None else "the top agent"
            state = "working" if other.running else "idle"
            lines.append(f"{label}: {relation}, {other.model.provider}/{other.model.name}, {state}")
        # A bus across processes also knows the agents running elsewhere (by their heartbeats).
        elsewhere = getattr(me.fleet.bus, "agents", None)
        try:
            remote = elsewhere() if callable(elsewhere) else []
        except FleetError as error:
            return [*lines, f"(agents in other processes cannot be listed now: {error})"]
        for info in remote:
            if info.label not in me.fleet.agents:
                where = f"in another process ({info.host}:{info.pid})"
                lines.append(f"{info.label}: {where}, {info.model}, {info.status}, ${info.cost_usd:.4f}")
        return lines

    async def spawn(self, request: SpawnRequest) -> str:
        if request.on is not None and request.agent is not None:
            request = _for_elsewhere(request, list(self.agent.tools))
        if request.on is not None:
            # Another process of a fleet on NATS runs it (a bus that can place sub-agents says how).
            elsewhere = getattr(self.agent.fleet.bus, "spawn_remote", None)
            if elsewhere is None:
                raise ToolError("`on` runs a sub-agent on another process: this fleet has no NATS bus")
            return cast(str, await elsewhere(self.agent, request))
        try:
            child = self.agent.spawn(request)
        except FleetError as error:
            raise ToolError(str(error)) from None
        where = f"{child.agent.model.provider}/{child.agent.model.name}"
        notes = "".join(f"\nnote: {note}" for note in child.notes)
        if child.worktree is not None:
            notes += f"\nit works in worktree {child.worktree.path} on branch {child.worktree.branch}"
        if request.persistent:
            return (
                f"started {child.label} ({where}); it works on its own and reports to you when it goes idle. "
                f"Message it with AgentSend to {child.label!r}.{notes}"
            )
        try:
            result = await child.wait()
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await child.stop()
            raise
        spent = f"${result.total_cost_usd:.4f}"
        responses = f"{result.num_turns} response{'s' if result.num_turns != 1 else ''}"
        head = f"{child.label} ({where}, {responses}, {spent})"
        if child.worktree_line:
            notes = f"{notes}\n{child.worktree_line}"
        if result.is_error:
            raise ToolError(f"{head} did not finish ({result.subtype}): {result.text}{notes}")
        return f"{head} answered:\n{result.text}{notes}"

    def send(self, to: str, text: str, control: str | None, **fields: Any) -> str:
        me = self.agent
        if to == me.label:
            raise ToolError("that is you: AgentSend is for other agents")
        try:
            if control is not None:
                kind = cast(ControlKind, control)
                receipt = me.control(to, kind, **{k: v for k, v in fields.items() if v is not None})
                if kind == "stop":
                    return f"stop sent to {to}: it stops now"
                when = (
                    "it is working and applies it at its next safe point"
                    if receipt.was_working
                    else "it applies it now"
                )
                return f"{control} sent to {to}: {when}"
            return me.send(to, text).describe()
        except FleetError as error:
            raise ToolError(str(error)) from None

    # --------------------------------------------------------------------------------------- self

    def status(self) -> str:
        me = self.agent
        now = me.snapshot()
        lines = [
            f"label: {now.label} (depth {now.depth}; sub-agents may go to depth {now.max_depth})",
            f"model: {now.provider}/{now.model}",
            f"effort: {now.effort or 'default'}; thinking budget: {now.thinking_budget or 'off'}",
            *me.context_size().lines(),
            f"  {quantity(now.messages, 'message')}; {me.compaction_line()}",
            f"cost: ${now.own_usd:.4f} yours, ${now.total_usd:.4f} with your sub-agents",
        ]
        if now.budget_usd is not None:
            lines.append(f"budget: ${now.budget_spent_usd or 0:.4f} of ${now.budget_usd:.4f} spent")
        for child in now.children:
            lines.append(f"sub-agent {child.label}: {child.model}, {child.status}, ${child.total_usd:.4f}")
        peers = self.peers()
        lines.append("reachable with AgentSend:" + ("" if peers else " no other agent is running now"))
        lines += [f"  {line}" for line in peers]
        running = now.running_jobs()
        if running:
            lines.append("jobs: " + "; ".join(j.line for j in running))
        return "\n".join(lines)

    async def switch(self, provider: str | None, model: str | None, effort: str | None, thinking: int | None) -> str:
        me = self.agent
        if provider is None and model is None and effort is None and thinking is None:
            raise ToolError("switch needs a provider, a model, an effort or a thinking budget")
        built = None
        if provider is not None or model is not None:
            if provider is None and model is not None and model == me.model.name:
                raise ToolError(f"you are already on {model}")
            try:
                built = me.fleet.model(provider, model)
                require_price_in_tree(built, me.cost)  # an unpriced model under a budget: no switch
            except (FleetError, ProviderError) as error:
                raise ToolError(f"cannot switch: {error}") from None
            refusal = me.fits(built.name)
            if refusal is not None:
                await close_model(built)
                raise ToolError(f"cannot switch: {refusal}")
        if thinking is not None and thinking < 0:
            raise ToolError("thinking is a number of tokens, 0 or more")
        me.request_change(model=built, effort=cast(Effort | None, effort), thinking_budget=thinking)
        changes = []
        if built is not None:
            changes.append(f"model {built.provider}/{built.name}")
        if effort is not None:
            changes.append(f"effort {effort}")
        if thinking is not None:
            changes.append(f"thinking {'off' if thinking == 0 else quantity(thinking, 'token')}")
        return f"from your next response on: {', '.join(changes)}"

    def compact(self, focus: str | None) -> str:
        self.agent.request_change(compact=True, focus=focus)
        return "the conversation will be compacted into a summary before your next response"

    def clear_tool_results(self, ids: list[str] | None, keep_last: int | None) -> str:
        me = self.agent
        # The calls of the response being answered now are not cleared: their results are still arriving.
        turn = next((m for m in reversed(me.history) if isinstance(m, AssistantMessage)), None)
        current = {c.id for c in turn.tool_calls} if turn is not None else set()
        results = [m.call_id for m in me.history if isinstance(m, ToolResult) and m.call_id not in current]
        if ids:
            unknown = [i for i in ids if i not in results]
            if unknown:
                raise ToolError(f"no tool result with id {', '.join(unknown)}")
            chosen = list(ids)
        elif keep_last is not None and keep_last >= 0:
            chosen = results[: max(len(results) - keep_last, 0)]
        else:
            raise ToolError("give the ids to clear, or keep_last")
        cleared = me.clear_tool_results(chosen)
        return f"cleared {len(cleared)} tool result(s)" if cleared else "nothing to clear"

    def detach(self, name: str) -> str:
        # AgentSelf runs in a round, alongside the other calls of the same response: those whose results
        # have not come in are the calls running now. A call moved to the background before (by the time
        # limit, a message, `background: true`) is a job already.
        me = self.agent
        running = [
            c for c in self._running_calls() if backgroundable(me.tools, c.name) and me.jobs.of_call(c.id) is None
        ]
        chosen = [c for c in running if is_named(c, name)]
        if not chosen:
            jobs = [j for j in me.jobs.running() if is_named(j.call, name)]
            if jobs:
                return f"{name} already runs in the background as {', '.join(j.id for j in jobs)}; Jobs manages it"
            names = sorted({_call_name(c) for c in running}) or ["nothing"]
            also = [f"{j.id} {_call_name(j.call)}" for j in me.jobs.running()]
            jobs_line = f"; in the background already: {', '.join(also)}" if also else ""
            raise ToolError(f"no running tool call is called {name!r}; running: {', '.join(names)}{jobs_line}")
        me.background(name)
        what = ", ".join(c.name if _call_name(c) == c.name else f"{c.name}({_call_name(c)})" for c in chosen)
        return (
            f"moving {what} to the background: this round no longer waits for it, and its result arrives "
            "later as a message (Jobs lists it)"
        )

    def _running_calls(self) -> list[ToolCall]:
        """The calls of the response being answered now whose results have not come in."""
        history = self.agent.history
        at = next((i for i in range(len(history) - 1, -1, -1) if isinstance(history[i], AssistantMessage)), None)
        if at is None:
            return []
        turn = history[at]
        assert isinstance(turn, AssistantMessage)
        answered = {m.call_id for m in history[at + 1 :] if isinstance(m, ToolResult)}
        return [c for c in turn.tool_calls if c.id not in answered]

    # --------------------------------------------------------------------------------------- jobs

    def jobs(self) -> str:
        jobs = self.agent.snapshot(measure=False).jobs
        return "\n".join(j.line for j in jobs) if jobs else "no background jobs"

    def cancel_job(self, job_id: str) -> str:
        try:
            ended = self.agent.cancel_job(job_id)
        except KeyError as error:
            raise ToolError(str(error.args[0])) from None
        if not ended:
            state = next((j.state for j in self.agent.snapshot(measure=False).jobs if j.id == job_id), "ended")
            return f"{job_id} is already {state}"
        return "cancelled " + ", ".join(ended)

    async def wait_job(self, job_id: str, timeout: float) -> str:
        me = self.agent
        try:
            job = me.jobs.get(job_id)
        except KeyError as error:
            raise ToolError(str(error.args[0])) from None
        if job.state == "running":
            job.waited = True
            outcome = await me.jobs.wait(job, timeout)
            if outcome != "done":
                job.waited = False
                if outcome == "stopped":  # a message came: it is read now, and the run does not end before the job
                    job.foreground = True
                    return (
                        f"{job.id} is still running; stopped waiting because a message came for you: read it now. "
                        "Its result comes as a message when it ends (or wait again)."
                    )
                return f"{job.id} is still running after {timeout:.0f} s; wait again, or go on and its result will come"
        if job.state == "cancelled":
            return f"{job.id} was cancelled"
        assert job.result is not None
        if job.delivered is not None:
            me.retract(job.delivered)  # it finished before the wait: the message is not needed
        text = job.result.text or "(no output)"
        if job.result.is_error:
            raise ToolError(f"{job.summary()} failed:\n{text}")
        return f"{job.summary()} finished after {job.duration_ms / 1000:.1f} s:\n{text}"

    # --------------------------------------------------------------------------------- task list

    def set_task_list(self, tasks: TaskList) -> None:
        """Make `tasks` the agent's task list (TodoWrite): logged first, then shown by every surface."""
        self.agent.notify(TaskListChanged(tasks))
        self.agent.task_list = tasks

    # --------------------------------------------------------------------------- models for tools

    def accepts_images(self) -> bool:
        return accepts_images(self.agent.model)

    def editor(self) -> Editor | None:
        return self.agent.settings.editor

    def history_window(self) -> int | None:
        """How many turns the agent sends to its model (None: all): with a window, Recall searches this
        session's earlier turns too."""
        return self.agent.settings.history_turns

    async def ask_small_model(self, tool: str, system: str, prompt: str) -> str:
        me = self.agent
        model, owned = self._small_model()
        request = ModelRequest(system, (UserMessage.of(prompt),), max_tokens=SMALL_MODEL_MAX_TOKENS)
        try:
            message = await me.gate.complete(model, request)  # refused there past the window or the budget
        except BudgetExceededError as error:
            raise ToolError(f"not asked: {error.message}") from None
        except ProviderError as error:
            raise ToolError(f"{model.provider}/{model.name} could not answer: {error.message}") from None
        finally:
            if owned:
                await close_model(model)
        cost = cost_of(message.model, message.usage)
        me.emit(SmallModelCall(tool, model.provider, message.model, message.usage, cost))
        return message.text

    def _small_model(self) -> tuple[Model, bool]:
        """The provider's cheap model and whether it is new (to close); the agent's own model otherwise."""
        me = self.agent
        name = SMALL_MODELS.get(me.model.provider)
        if name is None or name == me.model.name:
            return me.model, False
        try:
            return me.fleet.model(me.model.provider, name), True
        except FleetError:
            return me.model, False


def _call_name(call: ToolCall) -> str:
    """How a running call is named to the model: the label of the sub-agent it spawns, else its tool."""
    label = call.arguments.get("label") if call.name == SPAWN_TOOL else None
    return str(label) if label else call.name


def accepts_images(model: Model) -> bool:
    """What the model says of itself (an `accepts_images` attribute), else the catalog; unknown models are
    taken not to, as an image sent to a text-only model fails the whole request."""
    said = getattr(model, "accepts_images", None)
    if isinstance(said, bool):
        return said
    info = lookup(model.name)
    return info.images if info is not None else False
