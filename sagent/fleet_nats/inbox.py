"""An agent's durable inbox on JetStream, its receipts and its heartbeat.

Messages to label L are stored in the fleet's stream under `sagent.<fleet>.agent.L.inbox`, each with a
message id (`Nats-Msg-Id`: the server drops a second copy). L's consumer hands them to the agent in the
order they were stored (so in order per sender). A text message is acknowledged only once it is in the
agent's history, that is, once its session log has it (the loop logs a message before it joins the
history): an agent killed before that gets it again when it comes back. One that was logged but whose
acknowledgement was lost (a kill in between) comes back marked as redelivered, and is dropped when the
resumed history already holds it.

While L runs, a sender's request on `…L.receipt` is answered once the message has reached the agent:
whether it was working, and how many messages it has not read yet.

A `stop` control whose text is not empty says why: its tree's budget is spent (the parent sends it so,
see `Fleet.budget_reached`). The agent then ends as `error_max_budget_usd` with that text as its reason,
as an agent of the tree in the parent's own process does, not as interrupted.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import os
import weakref
from collections import Counter
from typing import TYPE_CHECKING, Any

from sagent.agent.fleet import Envelope, FleetError, Mailbox, Receipt
from sagent.fleet_nats import names
from sagent.fleet_nats.discovery import heartbeat
from sagent.fleet_nats.wire import envelope_of
from sagent.types import PeerMessage, UserMessage

if TYPE_CHECKING:
    from nats.aio.msg import Msg
    from nats.aio.subscription import Subscription

    from sagent.agent.agent import Agent
    from sagent.fleet_nats.bus import NatsBus

ACK_CHECK = 0.02  # seconds between looks for messages that have reached the session log
HEARTBEAT_EVERY = 2.0
RECEIPT_WAIT = 1.5  # seconds a receipt waits for its message to reach the agent
CLOSE_WAIT = 1.0  # seconds closing an inbox waits for the server to drop its heartbeat
ACK_WAIT = 3600.0  # a message unacknowledged this long (the agent kept working) is handed over again

# Why each agent hosted here was stopped, when it was for its tree's budget (kept while the agent lives).
_BUDGET_STOPS: weakref.WeakKeyDictionary[Agent, str] = weakref.WeakKeyDictionary()


def budget_stop(agent: Agent) -> str | None:
    """Why `agent` was stopped, when a `stop` came because its tree's budget is spent; None otherwise."""
    return _BUDGET_STOPS.get(agent)


class DurableInbox:
    """The inbox of one agent hosted on `bus`, whose mailbox runs on `agent_loop`."""

    def __init__(self, bus: NatsBus, label: str, mailbox: Mailbox, agent_loop: asyncio.AbstractEventLoop) -> None:
        self.bus = bus
        self.label = label
        self.mailbox = mailbox
        self.agent_loop = agent_loop
        owner = getattr(mailbox, "__self__", None)
        self.agent: Agent | None = owner if hasattr(owner, "history") and hasattr(owner, "send") else None
        self._receipts: dict[str, asyncio.Future[Receipt]] = {}  # message id -> its receipt, for its sender
        self._taken: set[str] = set()  # ids handed over to the agent
        self._pending: list[tuple[UserMessage | PeerMessage, Msg]] = []  # handed over, not yet in the log
        self._logged: set[str] = set()  # ids in the log whose acknowledgement may not have reached the server
        # What the resumed history already holds: a redelivered copy of one of these is not handed over twice.
        self._resumed: Counter[UserMessage | PeerMessage] = Counter(
            m for m in (self.agent.history if self.agent else ()) if isinstance(m, UserMessage | PeerMessage)
        )
        self._subs: list[Subscription] = []
        self._tasks: list[asyncio.Task[None]] = []
        self._watcher: asyncio.Task[None] | None = None
        self._acks: set[concurrent.futures.Future[None]] = set()  # acknowledgements on their way to the server

    @property
    def fleet(self) -> str:
        return self.bus.fleet

    # ---------------------------------------------------------------------------- on the bus's loop

    async def open(self) -> None:
        from nats.errors import NoRespondersError
        from nats.errors import TimeoutError as NatsTimeout
        from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

        bus = self.bus
        receipt = names.agent_subject(self.fleet, self.label, "receipt")
        with contextlib.suppress(NoRespondersError, NatsTimeout):
            await bus.nc.request(receipt, b"", timeout=0.5)
            raise FleetError(f"the label {self.label!r} is taken by a running agent of the fleet {self.fleet!r}")
        await bus.members.put(self.label, json.dumps({"host": bus.host, "pid": os.getpid()}).encode())
        # A fresh consumer hands over at once every message not acknowledged before (the old one would
        # wait out its ack timeout for those its dead process had taken).
        stream, durable = names.inbox_stream(self.fleet), names.inbox_consumer(self.label)
        with contextlib.suppress(Exception):
            await bus.js.delete_consumer(stream, durable)
        config = ConsumerConfig(
            durable_name=durable,
            ack_policy=AckPolicy.EXPLICIT,
            deliver_policy=DeliverPolicy.ALL,
            ack_wait=ACK_WAIT,
            max_ack_pending=10_000,
        )
        self._subs.append(await bus.nc.subscribe(receipt, cb=self._on_receipt_request))
        self._subs.append(
            await bus.js.subscribe(
                names.agent_subject(self.fleet, self.label, "inbox"),
                durable=durable,
                stream=stream,
                config=config,
                manual_ack=True,
                cb=self._on_message,
            )
        )
        self._tasks.append(asyncio.create_task(self._heartbeats(), name=f"sagent heartbeat {self.label}"))

    async def close(self) -> None:
        """Stop hosting the label. A root agent keeps its place (messages wait for its restart); a
        sub-agent, which no restart brings back, leaves the fleet. Every message the agent's history holds
        is acknowledged first, and the server has confirmed it: the next agent under the label (the REPL's
        /clear moves it at once) must not be handed it again."""
        self._ack_logged()
        acks = [asyncio.wrap_future(future) for future in list(self._acks)]
        if acks:
            await asyncio.wait(acks, timeout=CLOSE_WAIT)
        for task in self._tasks:
            task.cancel()
        for sub in self._subs:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
        with contextlib.suppress(Exception):  # briefly: a server gone drops the heartbeat by itself soon
            await asyncio.wait_for(self.bus.live.delete(self.label), CLOSE_WAIT)
        if self.agent is not None and self.agent.parent is not None:
            await self.bus.forget_here(self.label)

    def _receipt(self, message_id: str) -> asyncio.Future[Receipt]:
        """The receipt of `message_id`, settled when the message reaches the agent (whichever of the
        message and its sender's request for the receipt arrives first makes it)."""
        found = self._receipts.get(message_id)
        if found is None:
            found = self._receipts[message_id] = self.bus.loop.create_future()
        return found

    async def _on_message(self, msg: Msg) -> None:
        headers = msg.headers or {}
        message_id = headers.get("Nats-Msg-Id") or f"seq-{msg.metadata.sequence.stream}"
        if message_id in self._logged:
            await msg.ack()
            return
        if message_id in self._taken:
            return  # handed over already and still waiting for the agent's next safe point
        try:
            envelope = _addressed(msg.data, self.label)
        except FleetError:
            await msg.ack()  # not an envelope for this agent: nothing to deliver, ever
            return
        self._taken.add(message_id)
        receipt = self._receipt(message_id)
        redelivered = msg.metadata.num_delivered > 1
        work = self._hand_over(envelope, msg, message_id, redelivered)
        try:
            given = await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work, self.agent_loop))
        except Exception as error:  # the agent has stopped: the message waits for its next start
            self._taken.discard(message_id)
            if not receipt.done():
                receipt.set_exception(FleetError(str(error)))
                receipt.exception()  # retrieved: its sender may be gone
            return
        if not receipt.done():
            receipt.set_result(given)

    async def _on_receipt_request(self, msg: Msg) -> None:
        message_id = msg.data.decode(errors="replace")
        reply: dict[str, Any] = {"delivered": False}
        if not message_id:
            reply = {"running": True}  # a probe: is the label taken?
        elif message_id in self._logged and message_id not in self._receipts:
            reply = {"delivered": True, "was_working": False, "waiting": 0}
        else:
            try:
                receipt = await asyncio.wait_for(asyncio.shield(self._receipt(message_id)), RECEIPT_WAIT)
                reply = {"delivered": True, "was_working": receipt.was_working, "waiting": receipt.waiting}
            except Exception:  # not handed over in time: its sender says it is queued
                pass
            finally:
                self._receipts.pop(message_id, None)
        with contextlib.suppress(Exception):
            await msg.respond(json.dumps(reply).encode())

    async def _ack(self, msg: Msg, message_id: str) -> None:
        self._logged.add(message_id)
        self._taken.discard(message_id)
        with contextlib.suppress(Exception):  # confirmed by the server, so a consumer made next never has it
            await msg.ack_sync(timeout=CLOSE_WAIT)

    async def _heartbeats(self) -> None:
        while True:
            try:
                info = await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._describe(), self.agent_loop))
                await self.bus.live.put(self.label, info)
            except asyncio.CancelledError:
                raise
            except Exception:  # the server is restarting, or the agent's loop is gone: try again later
                pass
            await asyncio.sleep(HEARTBEAT_EVERY)

    # -------------------------------------------------------------------------- on the agent's loop

    async def _describe(self) -> bytes:
        return heartbeat(self.agent, self.label, self.bus.host)

    async def _hand_over(self, envelope: Envelope, msg: Msg, message_id: str, redelivered: bool) -> Receipt:
        agent = self.agent
        if agent is None or envelope.control is not None:
            receipt = self.take_here(envelope)
            self._from_agent_loop(self._ack(msg, message_id))
            return receipt
        message: UserMessage | PeerMessage = (
            UserMessage.of(envelope.text) if envelope.sender == "user" else PeerMessage(envelope.sender, envelope.text)
        )
        if redelivered and self._resumed[message] > 0:
            self._resumed[message] -= 1  # logged before the process died; only its acknowledgement was lost
            self._from_agent_loop(self._ack(msg, message_id))
            return Receipt(self.label, agent.running, len(self._pending))
        if agent.closed:
            raise FleetError(f"{self.label} has stopped")
        was_working = agent.running
        agent.send(message)
        self._pending.append((message, msg))
        if self._watcher is None or self._watcher.done():
            self._watcher = asyncio.create_task(self._watch_log(), name=f"sagent acks {self.label}")
        return Receipt(self.label, was_working, len(self._pending))

    def take_here(self, envelope: Envelope) -> Receipt:
        """Hand `envelope` to the agent's mailbox at once: a control, or any envelope from an agent of this
        very process (which the bus hands over without the server). A stop that says why (its tree's budget
        is spent) ends a run going on as `error_max_budget_usd` with that reason."""
        agent = self.agent
        if agent is not None and envelope.control == "stop" and envelope.text.strip():
            _BUDGET_STOPS[agent] = envelope.text
            agent.interrupt(budget=envelope.text)
        return self.mailbox(envelope)

    async def _watch_log(self) -> None:
        """Acknowledge each handed-over message once the agent's history (so its log) holds it."""
        agent = self.agent
        assert agent is not None
        while self._pending and not agent.closed:
            await asyncio.sleep(ACK_CHECK)
            self._ack_logged()

    def _ack_logged(self) -> None:
        """Acknowledge each handed-over message the agent's history holds now. Called on the agent's loop,
        or on the bus's while the agent's loop waits for the inbox to close."""
        if self.agent is None or not self._pending:
            return
        present = {id(m) for m in self.agent.history}
        still: list[tuple[UserMessage | PeerMessage, Msg]] = []
        for message, msg in self._pending:
            if id(message) in present:
                headers = msg.headers or {}
                self._from_agent_loop(self._ack(msg, headers.get("Nats-Msg-Id", "")))
            else:
                still.append((message, msg))
        self._pending = still

    def _from_agent_loop(self, work: Any) -> None:
        future: concurrent.futures.Future[None] = asyncio.run_coroutine_threadsafe(work, self.bus.loop)
        self._acks.add(future)
        future.add_done_callback(self._acks.discard)


def _addressed(data: bytes, label: str) -> Envelope:
    envelope = envelope_of(data)
    if envelope.to != label:
        raise FleetError(f"a message for {envelope.to!r} in the inbox of {label!r}")
    return envelope
