"""Sub-agents on other processes: AgentSpawn with `on` ("any", or a serve process's label) runs a one-shot
sub-agent on a `sagent serve` process of the fleet, which answers with the result and what it spent.

Every serve process takes spawn requests on `sagent.<fleet>.spawn.<label>` (that process only); one
started with `--worker` also on `sagent.<fleet>.spawn` in the queue group `workers` (NATS gives each
request to one of them). The child
runs there on a model like its host's, with the tools asked for among its host's (none that spawn), and
its events go out on its own events subject (`sagent fleet attach` shows them).

One budget across processes: the child gets what is left of its tree's budget as its own, and before
each of its requests it asks the parent's process to hold the request's estimate against the tree's
budget, as a local sub-agent's gate does up its chain (`persistent.TreeBudget`, `follow_spending`): the
parent refuses what would cross the budget, and counts what the child spent the moment the hold goes. So
the tree can overshoot its budget by no more than a tree in one process can: a response that costs more
than its estimate (an uncapped answer) when the limit is reached. While it runs the
fleet counts it among the parent's sub-agents elsewhere (`Fleet.remote`): when the tree's budget is spent
it is sent a `stop` whose text is the reason, and it ends as `error_max_budget_usd` (see `inbox`), even
when its parent has moved the call to the background; any other stop ends it interrupted.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import asdict, dataclass, replace
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from sagent.agent.cost import CostTracker
from sagent.agent.fleet import Envelope
from sagent.agent.session import SessionError, SessionLog
from sagent.evidence.capsules import receive_result_elsewhere, seal_spawn_elsewhere
from sagent.fleet_nats import names
from sagent.fleet_nats.policy import child_settings, parse_tree_policy, tree_policy_wire
from sagent.permissions.transfer import PolicyWireError
from sagent.tools.base import ToolError, spawns_agents
from sagent.tools.choose import Choice, Choose, Pick
from sagent.types import Usage

if TYPE_CHECKING:
    from nats.aio.msg import Msg
    from nats.aio.subscription import Subscription

    from sagent.agent.agent import Agent
    from sagent.events import Event
    from sagent.fleet_nats.bus import NatsBus
    from sagent.tools.runtime import SpawnRequest

QUEUE = "workers"
LONGEST = 24 * 3600.0  # seconds a parent waits for a remote child (a stopped parent stops waiting sooner)


@runtime_checkable
class RemoteEventSink(Protocol):
    """A hook that also takes the progress of its agent's sub-agents on other processes (their responses,
    tool results and deltas), as `Hook.on_event` takes a local sub-agent's (stream-json's records do)."""

    def on_remote_event(self, parent: Agent, label: str, session_id: str, event: Event) -> None:
        """`event` of the sub-agent `label` (its session `session_id`) that `parent` runs elsewhere."""


def spawn_subject(fleet: str, on: str) -> str:
    return f"sagent.{fleet}.spawn" if on == "any" else f"sagent.{fleet}.spawn.{names.check_label(on)}"


# ------------------------------------------------------------------------------------ the parent's side


@dataclass(frozen=True, slots=True)
class RemoteOutcome:
    """How a one-shot sub-agent on another process ended: its answer (or why it stopped), where it ran,
    and what it spent (already counted in its parent's tree)."""

    label: str
    host: str
    model: str
    subtype: str
    text: str
    num_turns: int
    cost_usd: float
    picked: Pick | None = None  # what it chose with its request's `choice` tool, if it was given one
    turns: tuple[tuple[str, str], ...] = ()  # given a Handoff: what it added to the conversation (speaker, text)

    def head(self) -> str:
        responses = f"{self.num_turns} response{'s' if self.num_turns != 1 else ''}"
        return f"{self.label} (on {self.host} {self.model}, {responses}, ${self.cost_usd:.4f})"


async def spawn_remote(bus: NatsBus, parent: Agent, request: SpawnRequest) -> str:
    """Run `request` on another process and return what AgentSpawn returns; ToolError when no process
    takes it, the budget is spent, or the child fails."""
    outcome = await run_remote(bus, parent, request)
    if isinstance(outcome, str):
        return outcome
    if outcome.subtype != "success":
        raise ToolError(f"{outcome.head()} did not finish ({outcome.subtype}): {outcome.text}")
    return f"{outcome.head()} answered:\n{outcome.text}"


async def run_remote(bus: NatsBus, parent: Agent, request: SpawnRequest) -> RemoteOutcome | str:
    """Run `request` on another process: how a one-shot child ended, or for a persistent one where to
    reach it (AgentSpawn's text). ToolError when no process takes it or the budget is spent."""
    from nats.errors import NoRespondersError

    from sagent.evidence.handoffs import bounded

    assert request.on is not None
    label = names.check_label(request.label or f"{parent.label}-{uuid.uuid4().hex[:6]}")
    if label in parent.fleet.agents or label in parent.fleet.remote:
        raise ToolError(f"the label {label!r} is taken by a running agent; choose another")
    # Nothing is held for the child: each of its requests is held against the tree's budget here first
    # (see persistent); its own budget is what the tree has left now.
    held = _allowance(parent)
    carry = parent.settings.handoff_capsules if request.capsules is None else request.capsules
    prompt, context = bounded(parent.session, carry, request.prompt, receiver=label)  # the handoffs it carries
    fields = {
        "prompt": prompt,
        "label": label,
        "parent": parent.label,
        "system": request.system,
        "tools": list(request.tools) if request.tools is not None else None,
        "max_tool_rounds": request.max_tool_rounds,
        "budget": float(held) if held is not None else None,
        "persistent": request.persistent,
        "policy": tree_policy_wire(parent),  # the worker refuses a spawn without it (see `policy`)
        "choice": request.choice.to_wire() if request.choice is not None else None,
    }
    spawned = None if request.persistent else _seal_spawn(parent, label, request, held, (prompt, context))
    subject = spawn_subject(bus.fleet, request.on)
    sinks = [hook for hook in parent.settings.hooks if isinstance(hook, RemoteEventSink)]
    watching = await _watch(bus, parent, label, sinks) if sinks else None
    from sagent.fleet_nats.persistent import follow_spending

    # Its spend joins the tree as it comes, and its requests are held here (with a budget to hold them to).
    following = await follow_spending(bus, parent, label) if request.persistent or held is not None else []
    if parent.settings.approver is not None:  # its questions come to the parent's approver
        from sagent.fleet_nats.approval import answer_questions

        following.append(await answer_questions(bus, parent, label))
    if request.persistent:
        following, watching = [], None  # followed for as long as it lives
    else:
        # While it runs, the fleet knows it as the parent's: when the tree's budget is spent, it is sent a
        # stop that says so, whether its parent still waits for it or moved the call to the background.
        parent.fleet.remote[label] = parent.label
    work = bus.nc.request(subject, json.dumps(fields).encode(), timeout=LONGEST)
    try:
        reply = await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work, bus.loop))
    except NoRespondersError:
        where = "no worker (sagent serve --worker)" if request.on == "any" else f"no serve process {request.on!r}"
        raise ToolError(f"cannot spawn: {where} takes sub-agents now (start one with `sagent serve`)") from None
    except asyncio.CancelledError:  # the parent stopped waiting (interrupted, its tree's budget spent): so does it
        why = parent.budget_reason() if parent.cost.over_budget() else ""  # a stop's text: the budget is why
        with contextlib.suppress(Exception):
            bus.deliver(Envelope(parent.label, label, text=why, control="stop"))
        raise
    finally:
        if not request.persistent and parent.fleet.remote.get(label) == parent.label:
            del parent.fleet.remote[label]
        # The child's last events and spend are handed on before its answer is.
        for sub in [watching, *following] if watching is not None else following:
            drain: Callable[[], Coroutine[Any, Any, None]] = sub.drain  # (nats-py leaves it unannotated)
            with contextlib.suppress(Exception):
                await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(drain(), bus.loop))
    answer = json.loads(reply.data)
    if "error" in answer:
        raise ToolError(f"cannot spawn on {request.on}: {answer['error']}")
    if request.persistent:
        parent.fleet.remote[label] = parent.label  # its coordinator, which stops it when it ends
        return (
            f"started {label} (on {answer.get('host', '?')} {answer.get('model', '?')}); it works on its own and "
            f"reports to you when it goes idle. Message it with AgentSend to {label!r}."
        )
    # The child's spend joins the parent's tree, not its own (a worker that held its requests here has
    # counted it there already, as it came).
    spent = CostTracker() if answer.get("lent") else CostTracker(parent=parent.cost)
    for model, usage in (answer.get("usage") or {}).items():
        spent.add(model, Usage(**usage))
    picked = answer.get("picked")
    if spawned is not None:
        responses = int(answer.get("num_turns", 0))
        with contextlib.suppress(SessionError):  # the log that failed says so on its agent's next write
            receive_result_elsewhere(
                parent, label, str(answer.get("text", "")), {"usd": spent.total_usd, "responses": responses}, spawned
            )
    return RemoteOutcome(
        label,
        str(answer.get("host", "?")),
        str(answer.get("model", "?")),
        str(answer.get("subtype")),
        str(answer.get("text", "")),
        int(answer.get("num_turns", 0)),
        spent.total_usd,
        Pick(str(picked["label"]), str(picked.get("note", ""))) if isinstance(picked, dict) else None,
        tuple((str(speaker), str(text)) for speaker, text in answer.get("turns") or ()),
    )


def _seal_spawn(
    parent: Agent, label: str, request: SpawnRequest, held: Decimal | None, sent: tuple[str, dict[str, int] | None]
) -> str | None:
    """The spawn's capsule in the parent's log (its answer's joins it there), for the prompt as `sent` (with
    the handoffs it carries, and what that saved); None when the log failed."""
    budget = {
        "max_tool_rounds": request.max_tool_rounds,
        "max_depth": 0,
        "usd_left": float(held) if held is not None else None,
        "tools": sorted(request.tools) if request.tools is not None else None,
    }
    try:
        return seal_spawn_elsewhere(parent, label, sent[0], budget, task=request.prompt, context=sent[1])
    except SessionError:
        return None


async def _watch(bus: NatsBus, parent: Agent, label: str, sinks: Sequence[RemoteEventSink]) -> Subscription:
    """Hand the events the sub-agent `label` publishes to `sinks`, on the parent's loop, in order."""
    from sagent.fleet_nats.wire import event_of

    loop = asyncio.get_running_loop()
    session = [""]

    def hand(event: Event) -> None:
        for sink in sinks:
            with contextlib.suppress(Exception):  # a failing sink never breaks the spawn
                sink.on_remote_event(parent, label, session[0], event)

    async def on_message(msg: Msg) -> None:
        try:
            data = json.loads(msg.data)
        except ValueError:
            return
        if not isinstance(data, dict):
            return
        if data.get("type") == "session_started":
            session[0] = str(data.get("session_id", ""))
        event = event_of(data)
        if event is not None:
            loop.call_soon_threadsafe(hand, event)

    subject = names.agent_subject(bus.fleet, label, "events")
    subscribing = bus.nc.subscribe(subject, cb=on_message)
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(subscribing, bus.loop))


def _allowance(parent: Agent) -> Decimal | None:
    """What is left of the tree's budget; None when there is no budget."""
    tracker = parent.cost.budgeted()
    if tracker is None or tracker.budget is None:
        return None
    left = tracker.budget - tracker.spent - tracker.reserved
    if left <= 0:
        raise ToolError(f"cannot spawn: the budget of ${float(tracker.budget):.4f} (max_budget_usd) is spent")
    return left


# ----------------------------------------------------------------------------------- the worker's side


class SpawnWorker:
    """Takes spawn requests for the serve process hosting `host` (on its loop `host_loop`)."""

    def __init__(self, bus: NatsBus, host: Agent, host_loop: asyncio.AbstractEventLoop) -> None:
        self.bus = bus
        self.host = host
        self.host_loop = host_loop
        self.running: set[asyncio.Task[None]] = set()  # persistent sub-agents' drivers

    async def listen(self, *, any_worker: bool) -> None:
        """Subscribe (on the bus's loop) to this host's own subject, and with `any_worker` to the fleet's
        queue group too (a process started to take work: `sagent serve --worker`)."""
        if any_worker:
            await self.bus.nc.subscribe(spawn_subject(self.bus.fleet, "any"), queue=QUEUE, cb=self._on_request)
        await self.bus.nc.subscribe(spawn_subject(self.bus.fleet, self.host.label), cb=self._on_request)

    async def _on_request(self, msg: Msg) -> None:
        try:
            fields = json.loads(msg.data)
            if not isinstance(fields, dict) or not isinstance(fields.get("prompt"), str):
                raise ValueError("not a spawn request")
            work = asyncio.run_coroutine_threadsafe(self._run_child(fields), self.host_loop)
            answer = await asyncio.wrap_future(work)
        except PolicyWireError as error:  # never run without the parent's policy
            answer = {"error": f"refused by {self.host.label}: {error}"}
        except Exception as error:  # a bad request, or a child that could not be built
            answer = {"error": f"{type(error).__name__}: {error}"}
        await msg.respond(json.dumps(answer).encode())

    async def _run_child(self, fields: dict[str, Any]) -> dict[str, Any]:
        from sagent.agent.agent import Agent
        from sagent.events import Result

        host = self.host
        tree = parse_tree_policy(fields.get("policy"), str(host.context.cwd))
        label = names.check_label(str(fields["label"]))
        wanted = fields.get("tools")
        tools = [t for t in host.settings.tools if (wanted is None or t.name in wanted) and not spawns_agents(t)]
        choose = Choose(Choice.from_wire(fields["choice"])) if fields.get("choice") is not None else None
        if choose is not None:
            tools.append(choose)  # a pattern's choice, made with a tool call (`sagent.tools.choose`)
        parent = str(fields.get("parent", "?"))
        after = (
            f"You keep running after your answer: {parent} is told each time you finish, and other agents may "
            "message you (AgentSend, by label); each message starts you working again."
            if fields.get("persistent")
            else "Your final answer is returned to it as the result of your work: make it complete."
        )
        note = (
            f'You are the sub-agent "{label}", started by "{parent}" in another process to do the task in the '
            f"first message. {after}"
        )
        settings = replace(
            host.settings,
            label=label,
            role=note,
            system=fields.get("system") or host.settings.system,
            tools=tuple(tools),
            max_tool_rounds=fields.get("max_tool_rounds") or host.settings.max_tool_rounds,
            max_budget_usd=fields.get("budget"),
            max_depth=0,
        )
        from sagent.fleet_nats.approval import ParentApprover

        # The stricter of the worker's policy and the parent tree's; questions go to the parent's approver.
        settings = child_settings(settings, tree, ParentApprover(self.bus, parent))
        model = host.fleet.models(host.model.provider, host.model.name)
        child = Agent(model, settings, session=SessionLog.ephemeral(), fleet=host.fleet)
        lent = fields.get("budget") is not None  # its tree has a budget, kept in the parent's process
        if fields.get("persistent"):
            from sagent.fleet_nats.persistent import PersistentChild

            child.send(fields["prompt"])
            persistent = PersistentChild(self.bus, child, parent)
            if lent:
                persistent.lend_budget()
            driver = asyncio.create_task(persistent.drive(), name=f"sagent {label}")
            self.running.add(driver)
            driver.add_done_callback(self.running.discard)
            return {"started": True, "host": self.bus.host, "model": f"{model.provider}/{model.name}"}
        from sagent.fleet_nats.persistent import SpendReport, TreeBudget

        events = names.agent_subject(self.bus.fleet, label, "events")
        report = SpendReport(self.bus, child)
        if lent:
            child.cost.lender = TreeBudget(report, parent)
        result: Result | None = None
        try:
            async for event in child.run(fields["prompt"]):
                self.bus.publish_event(events, event)
                if isinstance(event, Result):
                    result = event
        finally:
            if lent:
                report.send(done=True)  # before the answer: the parent counts it all before it reads the answer
            await child.aclose()
            await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self.bus.forget_here(label), self.bus.loop))
        assert result is not None
        usage = {m: asdict(s.usage) for m, s in child.cost.by_model.items()}
        return {
            "subtype": result.subtype,
            "text": result.text,
            "num_turns": result.num_turns,
            "usage": usage,
            "lent": lent,  # its spend went to the parent's tree as it came: the usage here is for display
            "picked": asdict(choose.picked) if choose is not None and choose.picked is not None else None,
            "turns": _turns(label, child, choose),
            "host": self.bus.host,
            "model": f"{model.provider}/{model.name}",
        }


TURNS_CHARS = 256_000  # of the conversation a child sends back with its answer: well within a NATS message


def _turns(label: str, child: Agent, choose: Choose | None) -> list[tuple[str, str]]:
    """What a child given a Handoff added to the conversation, for its parent to pass on; [] otherwise."""
    if choose is None or choose.choice.tool != "Handoff":
        return []
    from sagent.patterns.conversation import last_within, turns_of

    turns = turns_of(label, child.history, leave_out=choose.name)
    return [(t.speaker, t.text) for t in last_within(turns, TURNS_CHARS)]
