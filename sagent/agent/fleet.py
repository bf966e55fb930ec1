"""A fleet: the agents of one tree, the bus their messages travel on, and the limits that hold for all.

The root agent makes the fleet; every agent it spawns (and they spawn) joins it under a unique label.
Messages go through a `Bus`, a small interface (register a label, deliver, list labels): `LocalBus` serves
agents in one process, and a bus over a network can serve agents in several, without the agents changing.
A `Child` drives one spawned agent: a one-shot child runs its task and ends; a persistent one goes idle,
reports to its parent, and wakes when a message arrives.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, get_args

from sagent.agent.cost import CostTracker
from sagent.agent.pricing import has_price, unpriced_message
from sagent.agent.session import SessionError, SessionLog
from sagent.agent.settings import DEFAULT_MAX_AGENTS, DEFAULT_MAX_DEPTH, AgentSettings
from sagent.events import Result
from sagent.evidence.capsules import receive, seal_result, seal_spawn
from sagent.evidence.handoffs import bounded
from sagent.lib.words import plural, quantity
from sagent.providers.base import Model, ProviderError
from sagent.providers.specs import canonical_name
from sagent.tools.base import spawns_agents
from sagent.tools.runtime import SpawnRequest

if TYPE_CHECKING:
    from sagent.agent.agent import Agent
    from sagent.agent.worktrees import Worktree

__all__ = ["DEFAULT_MAX_AGENTS", "DEFAULT_MAX_DEPTH", "SpawnRequest"]  # re-exported for callers of the fleet

ControlKind = Literal["switch_model", "tune", "compact", "clear_tool_results", "stop"]
CONTROLS: tuple[str, ...] = get_args(ControlKind)
ChildStatus = Literal["working", "idle", "stopped"]

RESERVED_LABELS = frozenset({"user", "sagent"})  # senders of the person's messages and of sagent's notices


class FleetError(Exception):
    """A fleet operation was refused: a limit, an unknown or taken label, a provider not allowed."""


@dataclass(frozen=True, slots=True)
class Envelope:
    """A message between agents: text, or a control from a coordinator (with its model or focus)."""

    sender: str
    to: str
    text: str = ""
    control: ControlKind | None = None
    provider: str | None = None  # for switch_model (inferred from the model id when not given)
    model: str | None = None  # for switch_model
    focus: str | None = None  # for compact
    effort: str | None = None  # for tune (and switch_model): the reasoning effort, or "off"
    thinking: int | None = None  # for tune (and switch_model): the thinking budget in tokens; 0 turns it off
    tools: tuple[str, ...] | None = None  # for clear_tool_results: the tools whose results go
    keep_last: int | None = None  # for clear_tool_results: every result but the last N goes
    # The sealed handoff (`sagent.evidence.capsules`) the sender recorded; the receiver records it too.
    capsule: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Receipt:
    """What the sender learns: who got it, and whether they were working (it waits for their next safe
    point) or idle (it wakes them)."""

    to: str
    was_working: bool
    waiting: int  # messages the recipient has not read yet, this one included

    def describe(self) -> str:
        if self.was_working:
            return f"delivered to {self.to}; it is working and will read it at its next safe point"
        return f"delivered to {self.to}; it was idle and starts on it now"


Mailbox = Callable[[Envelope], Receipt]


class Bus(Protocol):
    def register(self, label: str, mailbox: Mailbox) -> None: ...

    def unregister(self, label: str) -> None: ...

    def deliver(self, envelope: Envelope) -> Receipt:
        """Hand `envelope` to its recipient; FleetError when no agent has that label."""
        ...

    def labels(self) -> list[str]: ...


class LocalBus:
    """Peers in this process: delivery is a call on the recipient's mailbox."""

    def __init__(self) -> None:
        self._boxes: dict[str, Mailbox] = {}

    def register(self, label: str, mailbox: Mailbox) -> None:
        if label in self._boxes:
            raise FleetError(f"the label {label!r} is taken by a running agent")
        self._boxes[label] = mailbox

    def unregister(self, label: str) -> None:
        self._boxes.pop(label, None)

    def deliver(self, envelope: Envelope) -> Receipt:
        box = self._boxes.get(envelope.to)
        if box is None:
            known = ", ".join(sorted(self._boxes)) or "none"
            raise FleetError(f"no running agent is called {envelope.to!r}; the agents are: {known}")
        return box(envelope)

    def labels(self) -> list[str]:
        return list(self._boxes)


ModelFactory = Callable[[str | None, str | None], Model]
"""Builds a model from a provider name and/or a model id (either may be None: the defaults apply)."""


def registry_models(provider: str | None, model: str | None) -> Model:
    """Models as the command line builds them: by provider name and/or model id, keys from the environment."""
    from sagent.providers.registry import build_model, choose, infer_provider

    if provider is None and model is not None and infer_provider(model) is None:
        raise FleetError(f"cannot tell the provider of {model!r}; name the provider too")
    return build_model(choose(provider, model))


class Fleet:
    """The agents of one tree, by label, with the limits every spawn is checked against."""

    def __init__(
        self,
        *,
        max_depth: int = DEFAULT_MAX_DEPTH,
        max_agents: int = DEFAULT_MAX_AGENTS,
        allow_providers: set[str] | frozenset[str] | None = None,
        models: ModelFactory | None = None,
        bus: Bus | None = None,
    ) -> None:
        self.max_depth = max_depth
        self.max_agents = max_agents
        # By canonical name, so `Anthropic` and `anthropic` are one provider here as everywhere.
        self.allow_providers = frozenset(map(canonical_name, allow_providers)) if allow_providers is not None else None
        self.models = models or registry_models
        self.bus: Bus = bus or LocalBus()
        self.agents: dict[str, Agent] = {}
        # Sub-agents running in other processes (a bus across processes): label -> its parent's. A one-shot
        # one is here while its parent's AgentSpawn call runs; a persistent one until it ends.
        self.remote: dict[str, str] = {}
        self._last_number = 0  # of the labels given out as agent-N

    @classmethod
    def for_settings(
        cls, settings: AgentSettings, *, models: ModelFactory | None = None, bus: Bus | None = None
    ) -> Fleet:
        """A fleet with the limits of `settings` (depth, number of agents, providers)."""
        return cls(
            max_depth=settings.max_depth,
            max_agents=settings.max_agents,
            allow_providers=settings.allow_providers,
            models=models,
            bus=bus,
        )

    def join(self, agent: Agent) -> None:
        self.bus.register(agent.label, agent.deliver)
        self.agents[agent.label] = agent
        agent.cost.on_reached = lambda spender: self.budget_reached(agent, spender)

    def budget_reached(self, owner: Agent, spender: CostTracker) -> None:
        """The budget of `owner`'s tree is spent (by a response counted on `spender`): every other agent of
        that tree that is working stops now, its run ending as `error_max_budget_usd` (a tool call still
        running is stopped, not waited for). The agent whose response it was stops at its next check, its
        response kept whole."""
        agents = list(self.agents.values())
        by_tracker = {id(agent.cost): agent for agent in agents}
        spent_by = next((by_tracker[id(t)] for t in spender.chain() if id(t) in by_tracker), None)
        in_tree = [agent for agent in agents if any(tracker is owner.cost for tracker in agent.cost.chain())]
        for agent in in_tree:
            if agent is not spent_by:
                agent.interrupt(budget=agent.budget_reason())
        tree = {agent.label for agent in in_tree}
        for label in [label for label, parent in self.remote.items() if parent in tree]:
            with contextlib.suppress(FleetError):  # sub-agents elsewhere stop too, told why (the stop's text)
                self.bus.deliver(Envelope(owner.label, label, owner.budget_reason(), control="stop"))

    def leave(self, agent: Agent) -> None:
        if self.agents.get(agent.label) is agent:
            del self.agents[agent.label]
            self.bus.unregister(agent.label)
        for label in [label for label, parent in self.remote.items() if parent == agent.label]:
            del self.remote[label]  # its persistent children elsewhere end with it
            with contextlib.suppress(FleetError):
                self.bus.deliver(Envelope(agent.label, label, control="stop"))

    def new_label(self, wanted: str | None) -> str:
        """`wanted` when it is free, else the next free `agent-N`."""
        if wanted:
            wanted = wanted.strip()
            if not wanted or any(c.isspace() for c in wanted):
                raise FleetError(f"a label is one word, got {wanted!r}")
            if wanted in RESERVED_LABELS:
                raise FleetError(f"{wanted!r} names the person or sagent itself; choose another label")
            if wanted in self.agents:
                raise FleetError(f"the label {wanted!r} is taken by a running agent; choose another")
            return wanted
        while True:
            self._last_number += 1
            if f"agent-{self._last_number}" not in self.agents:
                return f"agent-{self._last_number}"

    def check_room(self) -> None:
        if len(self.agents) >= self.max_agents:
            raise FleetError(
                f"cannot spawn: {quantity(len(self.agents), 'agent')} {plural(len(self.agents), 'is', 'are')} running, "
                "the limit (max_agents); "
                "wait for one to finish or stop one"
            )

    def model(self, provider: str | None, model: str | None) -> Model:
        """A new model for a spawn or a switch, refused when its provider is not allowed (or has no key)."""
        provider = canonical_name(provider) if provider is not None else None
        if self.allow_providers is not None and provider is not None and provider not in self.allow_providers:
            raise FleetError(self._not_allowed(provider))
        try:
            built = self.models(provider, model)
        except ProviderError as error:
            raise FleetError(error.message) from None
        if self.allow_providers is not None and built.provider not in self.allow_providers:
            raise FleetError(self._not_allowed(built.provider))
        return built

    def _not_allowed(self, provider: str) -> str:
        allowed = ", ".join(sorted(self.allow_providers or ())) or "none"
        return f"the provider {provider!r} is not allowed here (allowed: {allowed})"

    def is_above(self, ancestor: str, label: str) -> bool:
        """True when `ancestor` is `label`'s parent, grandparent, and so on."""
        if label in self.remote:  # a persistent sub-agent elsewhere: its parent is here
            parent = self.remote[label]
            return parent == ancestor or self.is_above(ancestor, parent)
        agent = self.agents.get(label)
        while agent is not None and agent.parent is not None:
            if agent.parent.label == ancestor:
                return True
            agent = agent.parent
        return False


class Child:
    """A spawned agent and the task that drives it."""

    def __init__(
        self,
        agent: Agent,
        parent: Agent,
        persistent: bool,
        notes: tuple[str, ...] = (),
        worktree: Worktree | None = None,
        prompt: str = "",
    ) -> None:
        self.agent = agent
        self.parent = parent
        self.persistent = persistent
        self.notes = notes
        """What of its agent file could not be applied, for the parent model."""
        self.worktree = worktree
        """Its own git worktree (`isolation: worktree`); `worktree_line` says what became of it at the end."""
        self.worktree_line = ""
        self.prompt = prompt
        """The task as sent: with the handoffs it carries (`SpawnRequest.capsules`)."""
        self.status: ChildStatus = "working"
        self.result: Result | None = None
        self._settled = asyncio.Event()  # set whenever the child is not working
        self.task: asyncio.Task[None] | None = None

    @property
    def label(self) -> str:
        return self.agent.label

    def start(self, prompt: str) -> None:
        self.agent.send(prompt)
        self.task = asyncio.create_task(self._drive(), name=f"sagent agent {self.label}")

    async def wait(self) -> Result:
        """The result of the child's current (or last) run, once it is idle or stopped."""
        await self._settled.wait()
        assert self.result is not None
        return self.result

    async def stop(self) -> None:
        """Stop the child (interrupting its work) and wait until it has shut down."""
        self.agent.quit()
        if self.task is not None and not self.task.done():
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(self.task)

    async def _drive(self) -> None:
        agent = self.agent
        try:
            while True:
                self.status = "working"
                self._settled.clear()
                try:
                    async for event in agent.run():
                        if isinstance(event, Result):
                            self.result = event
                except Exception as error:  # a bug, not a model error: those end as a Result
                    self.result = agent.failure(f"{type(error).__name__}: {error}")
                    break
                out_of_budget = self.result is not None and self.result.subtype == "error_max_budget_usd"
                if not self.persistent or agent.closed or out_of_budget:
                    break
                self.status = "idle"
                self._settled.set()
                self._report()
                if not await agent.wait_for_input():
                    break
        finally:
            if self.worktree is not None:  # before anyone reads the result: it says where the work is
                self.worktree_line = self.worktree.finish()
            self.status = "stopped"
            self._settled.set()
            if self.result is None:
                self.result = agent.failure("stopped before it finished")
            if self.persistent:
                self._report()
            else:
                self._seal_result()
            await agent.aclose()

    def _report(self) -> None:
        """Tell the parent how the run ended (it may be waiting for this)."""
        if self.parent.closed or self.result is None:
            return
        state = "stopped" if self.status == "stopped" else "idle"
        outcome = "" if self.result.subtype == "success" else f" ({self.result.subtype})"
        text = f"[{state}{outcome}] {self.result.text}".rstrip()
        if state == "stopped" and self.worktree_line:
            text = f"{text}\n{self.worktree_line}"
        with contextlib.suppress(FleetError, SessionError):
            capsule = seal_result(self.agent, self.parent, text)
            self.parent.deliver(Envelope(self.label, self.parent.label, text, capsule=capsule))

    def _seal_result(self) -> None:
        """A one-shot child's answer, sealed in both logs before its parent reads it."""
        if self.parent.closed or self.result is None:
            return
        with contextlib.suppress(SessionError):  # the log that failed says so on its agent's next write
            receive(self.parent, seal_result(self.agent, self.parent, self.result.text), self.result.text)


def spawn_child(parent: Agent, request: SpawnRequest) -> Child:
    """Check the fleet's limits and build the child agent and its driver, not started yet: its settings are
    the parent's with only what the request and its place in the fleet change."""
    if parent.closed:
        raise FleetError(f"{parent.label} has stopped and cannot spawn")
    fleet = parent.fleet
    depth = parent.depth + 1
    if depth > parent.max_depth:
        raise FleetError(
            f"cannot spawn: a sub-agent of {parent.label} would be at depth {depth}, beyond the limit of "
            f"{parent.max_depth} (max_depth); do the work yourself"
        )
    fleet.check_room()
    name = fleet.new_label(
        request.label if request.agent is None else request.label or _named(fleet, request.agent.name)
    )
    notes: tuple[str, ...] = ()
    chosen_model = None
    if request.agent is not None:
        from sagent.agent.subagents import apply_definition

        applied = apply_definition(parent, request)
        request, notes, chosen_model = applied.request, applied.notes, applied.model
    if request.tools is None:
        chosen = list(parent.tools.values())
    else:
        unknown = [t for t in request.tools if t not in parent.tools]
        if unknown:
            raise FleetError(f"unknown tool(s) {', '.join(unknown)}; the tools are: {', '.join(parent.tools)}")
        chosen = [parent.tools[t] for t in request.tools]
    if request.choice is not None:
        from sagent.tools.choose import Choose

        chosen.append(Choose(request.choice))
    wanted = request.max_depth
    deepest = parent.max_depth if wanted is None else min(parent.max_depth, depth + max(wanted, 0))
    if depth >= deepest:
        chosen = [t for t in chosen if not spawns_agents(t)]
    own_model = request.provider is not None or request.model is not None
    child_model = fleet.model(request.provider, request.model) if own_model else parent.model
    if chosen_model is not None:
        child_model, notes = _file_model(parent, request, chosen_model, notes)
    if parent.cost.budgeted() is not None and not has_price(child_model):
        # Under a budget, a child on a model without a price would spend what no one counts: refused.
        raise FleetError(f"not started: {unpriced_message(child_model)}")
    inherited = parent.settings
    settings = replace(
        inherited,
        system=inherited.system if request.system is None else request.system,
        max_tool_rounds=inherited.max_tool_rounds if request.max_tool_rounds is None else request.max_tool_rounds,
        label=name,
        role=_fleet_note(name, parent.label, request.persistent),
        agent_type=request.agent.name if request.agent is not None else "",
        tools=tuple(chosen),
        max_depth=deepest,
        # The parent's budget already holds the child: its cost tracker counts into the parent's.
        max_budget_usd=None,
        max_subscription_tokens=None,
    )
    if request.advisor is not None:
        from sagent.advisor import with_advisor

        settings = with_advisor(settings, request.advisor, fleet.model)
    worktree = None
    if request.agent is not None:
        start = settings.cwd or parent.context.cwd
        settings, notes, worktree = _file_settings(settings, request, name, notes, start)
    try:
        agent = type(parent)(
            child_model, settings, session=_child_log(parent, name, child_model), fleet=fleet, parent=parent
        )
    except BaseException:
        if worktree is not None:  # nothing ran there: it goes
            worktree.finish()
        raise
    carry = parent.settings.handoff_capsules if request.capsules is None else request.capsules
    prompt, context = bounded(parent.session, carry, request.prompt, receiver=name)
    try:  # the handoff is sealed in both logs before the child exists for anyone else
        seal_spawn(parent, agent, prompt, task=request.prompt, context=context)
    except SessionError:
        fleet.leave(agent)
        agent.session.close()
        if worktree is not None:
            worktree.finish()
        raise
    return Child(agent, parent, request.persistent, notes, worktree, prompt)


def _named(fleet: Fleet, agent: str) -> str | None:
    """A label after an agent file's name: `reviewer`, else `reviewer-2`, ...; None: the next `agent-N`."""
    base = "-".join(agent.split())
    taken = {*fleet.agents, *fleet.remote, *RESERVED_LABELS}
    return next((label for n in range(1, 100) if (label := f"{base}-{n}" if n > 1 else base) not in taken), None)


def _file_model(
    parent: Agent, request: SpawnRequest, chosen: tuple[str | None, str], notes: tuple[str, ...]
) -> tuple[Model, tuple[str, ...]]:
    """The model an agent file names, or the parent's with a note when it cannot be built here (no key, a
    provider not allowed): a file written for another setup still spawns."""
    from sagent.agent.subagents import model_note

    assert request.agent is not None
    try:
        return parent.fleet.model(*chosen), notes
    except FleetError as error:
        return parent.model, (*notes, model_note(request.agent, error, parent))


def _file_settings(
    settings: AgentSettings, request: SpawnRequest, label: str, notes: tuple[str, ...], start: Path
) -> tuple[AgentSettings, tuple[str, ...], Worktree | None]:
    """`settings` with the agent file's permission mode (only a stricter one) and its own worktree, made from
    the repository `start` is in."""
    definition = request.agent
    assert definition is not None
    if definition.permission_mode:
        from sagent.permissions.subagent import tightened

        settings, note = tightened(settings, definition.permission_mode, definition.name)
        notes = (*notes, note) if note else notes
    if definition.isolation is None:
        return settings, notes, None
    from sagent.agent.worktrees import WorktreeError, make_worktree

    if definition.isolation != "worktree":
        raise FleetError(f"agent {definition.name}: isolation {definition.isolation!r} is unknown (only 'worktree')")
    try:
        worktree = make_worktree(start, label)
    except WorktreeError as error:
        raise FleetError(f"agent {definition.name} not started: {error}") from None
    return replace(settings, cwd=worktree.cwd), notes, worktree


def _child_log(parent: Agent, label: str, model: Model) -> SessionLog:
    """A sub-agent's own log, in a folder beside the parent's log (none for an ephemeral session)."""
    folder = parent.session.session_dir
    if folder is None:
        return SessionLog.ephemeral()
    header = {"provider": model.provider, "model": model.name, "label": label, "parent": parent.session.id}
    return SessionLog.create(parent.context.cwd, header, directory=folder / "agents")


def _fleet_note(label: str, parent: str, persistent: bool) -> str:
    """What a sub-agent is told of its place in the fleet, after its system prompt."""
    after = (
        f"You keep running after your answer: {parent} is told each time you finish, and other agents may "
        "message you; each message starts you working again."
        if persistent
        else f"Your final answer is returned to {parent} as the result of your work: make it complete."
    )
    return (
        f'You are the sub-agent "{label}", started by "{parent}" to do the task in the first message. '
        f"{after} Message other agents with AgentSend, by label."
    )
