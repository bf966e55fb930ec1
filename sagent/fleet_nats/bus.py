"""`NatsBus`: the fleet's bus on a NATS server, so agents in different processes and machines message each
other by label.

The client runs on its own thread and event loop: `Bus.deliver` is a plain call (an agent's AgentSend
blocks for the round trips, a millisecond or two on a local network), and the agents' own loops never
wait on the network otherwise. A message to an agent of another process is stored first in the fleet's
JetStream stream (deduplicated by its message id), then the recipient is asked for a receipt; an agent
that is down gets it when it comes back (see `sagent.fleet_nats.inbox`). Agents registered on this bus
in this process are called directly, as on `LocalBus`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import os
import socket
import ssl
import threading
import uuid
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from sagent.agent.fleet import Envelope, FleetError, Mailbox, Receipt
from sagent.fleet_nats import names
from sagent.fleet_nats.discovery import AgentInfo, read_agents
from sagent.fleet_nats.wire import envelope_bytes

if TYPE_CHECKING:
    from nats.aio.client import Client
    from nats.js.api import KeyValueConfig
    from nats.js.client import JetStreamContext
    from nats.js.kv import KeyValue

    from sagent.agent.agent import Agent
    from sagent.events import Event
    from sagent.fleet_nats.inbox import DurableInbox
    from sagent.fleet_nats.remote import RemoteOutcome
    from sagent.tools.runtime import SpawnRequest

T = TypeVar("T")

RECEIPT_WAIT = 2.0  # seconds a sender waits for a running recipient's receipt
HEARTBEAT_TIMEOUT = 10.0  # seconds after its last heartbeat that an agent drops out of the listing


@dataclass(frozen=True, slots=True)
class NatsAuth:
    """Credentials for the NATS server, passed through to the client as they are: a token, a user and
    password, a creds file (JWT and nkey) or an nkey seed file, and TLS (a CA, a client certificate)."""

    token: str | None = None
    user: str | None = None
    password: str | None = None
    creds: str | None = None
    nkey_seed: str | None = None
    tls_ca: str | None = None
    tls_cert: str | None = None
    tls_key: str | None = None

    def check_hint(self) -> str:
        """What to check when the server refuses these credentials, naming the settings that gave them."""
        if self.creds or self.nkey_seed:
            return "check the creds or nkey file (--nats-creds, --nats-nkey)"
        if self.user:
            return "check the user and password (--nats-user, --nats-password or SAGENT_NATS_PASSWORD)"
        if self.token:
            return "the token is wrong: check --nats-token or SAGENT_NATS_TOKEN"
        return "the server asks for credentials: give its token with --nats-token or SAGENT_NATS_TOKEN"

    def options(self) -> dict[str, Any]:
        """The keyword arguments of `nats.connect` these credentials give."""
        found: dict[str, Any] = {}
        if self.token:
            found["token"] = self.token
        if self.user:
            found["user"] = self.user
            found["password"] = self.password or ""
        if self.creds:
            found["user_credentials"] = self.creds
        if self.nkey_seed:
            found["nkeys_seed"] = self.nkey_seed
        if self.tls_ca or self.tls_cert:
            context = ssl.create_default_context(cafile=self.tls_ca)
            if self.tls_cert:
                context.load_cert_chain(self.tls_cert, self.tls_key)
            found["tls"] = context
        return found


def _refuses_credentials(error: BaseException) -> bool:
    """Whether the client's error is the server refusing the credentials (not a network failure)."""
    from nats.errors import AuthorizationError

    text = str(error).lower()
    return isinstance(error, AuthorizationError) or "authorization violation" in text or "authentication" in text


@dataclass(frozen=True, slots=True)
class QueuedReceipt(Receipt):
    """The recipient is not running now: the message is stored and waits for it."""

    def describe(self) -> str:
        return (
            f"queued for {self.to}: it is not running now and gets the message when it comes back "
            f"({self.waiting} waiting)"
        )


class NatsBus:
    """A `Bus` over NATS for the agents of the fleet `fleet` (every subject is `sagent.<fleet>.…`).

    Connecting happens here, with a bounded wait (`connect_timeout`): an unreachable server is a
    FleetError saying so. The client reconnects by itself when the server restarts; JetStream keeps the
    stored messages. `close()` releases the connection (agents that close unregister themselves)."""

    def __init__(
        self,
        url: str = "nats://127.0.0.1:4222",
        *,
        fleet: str = "default",
        auth: NatsAuth | None = None,
        connect_timeout: float = 5.0,
        heartbeat_timeout: float = HEARTBEAT_TIMEOUT,
    ) -> None:
        self.url = url
        self.fleet = names.check_fleet(fleet)
        self.host = socket.gethostname()
        self.heartbeat_timeout = heartbeat_timeout
        self._auth = auth or NatsAuth()
        self._local: dict[str, Mailbox] = {}
        self._members: set[str] = set()  # labels known to be in the fleet (forgotten by `forget`)
        self._inboxes: dict[str, DurableInbox] = {}
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=f"sagent nats {fleet}", daemon=True)
        self._thread.start()
        self._closed = False
        try:
            self.call(self._connect(connect_timeout), connect_timeout + 5)
        except FleetError:
            self._stop_thread()
            raise

    # --------------------------------------------------------------------------- the client's thread

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The event loop the NATS client runs on (its own thread)."""
        return self._loop

    def call(self, work: Coroutine[Any, Any, T], timeout: float) -> T:
        """Run `work` on the client's loop and wait for it (from any other thread), at most `timeout`."""
        if self._closed:
            work.close()
            raise FleetError(f"the bus of fleet {self.fleet!r} is closed")
        future = asyncio.run_coroutine_threadsafe(work, self._loop)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise FleetError(f"the NATS server at {self.url} did not answer within {timeout:g} s") from None

    async def _connect(self, timeout: float) -> None:
        import nats
        from nats.js.api import KeyValueConfig, RetentionPolicy, StorageType, StreamConfig

        refused: list[Exception] = []  # the server's refusals of the credentials, while connecting
        said_no = asyncio.Event()

        async def quiet(error: Exception) -> None:  # reconnects are the client's business, not the terminal's
            if not said_no.is_set() and _refuses_credentials(error):
                refused.append(error)
                said_no.set()

        connecting = asyncio.ensure_future(
            nats.connect(
                self.url,
                connect_timeout=timeout,
                max_reconnect_attempts=-1,
                reconnect_time_wait=0.25,
                allow_reconnect=True,
                error_cb=quiet,
                name=f"sagent {self.host} {os.getpid()}",
                **self._auth.options(),
            )
        )
        refusal = asyncio.ensure_future(said_no.wait())
        try:
            await asyncio.wait({connecting, refusal}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            if refused:  # the client would retry for ever: the credentials are wrong, say so now
                connecting.cancel()
                with contextlib.suppress(BaseException):
                    client = await connecting
                    await client.close()
                raise FleetError(
                    f"the NATS server at {self.url} refused the credentials ({refused[0]}): {self._auth.check_hint()}"
                )
            if not connecting.done():
                connecting.cancel()
                raise TimeoutError()
            self.nc: Client = connecting.result()
        except FleetError:
            raise
        except (TimeoutError, OSError) as error:
            raise FleetError(f"cannot reach the NATS server at {self.url} ({str(error) or 'no answer'})") from None
        except Exception as error:  # the client's own errors: no servers, authorization, a bad URL
            problem = str(error) or type(error).__name__
            if _refuses_credentials(error):
                raise FleetError(
                    f"the NATS server at {self.url} refused the credentials ({problem}): {self._auth.check_hint()}"
                ) from None
            raise FleetError(f"cannot connect to the NATS server at {self.url}: {problem}") from None
        finally:
            refusal.cancel()
        self.js: JetStreamContext = self.nc.jetstream(timeout=timeout)
        try:
            stream = StreamConfig(
                name=names.inbox_stream(self.fleet),
                subjects=[names.inbox_subjects(self.fleet)],
                retention=RetentionPolicy.WORK_QUEUE,
                storage=StorageType.FILE,
                duplicate_window=120.0,
            )
            await self.js.add_stream(stream)
            members = KeyValueConfig(bucket=names.members_bucket(self.fleet), storage=StorageType.FILE)
            self.members: KeyValue = await self._bucket(members)
            live = KeyValueConfig(
                bucket=names.live_bucket(self.fleet), ttl=self.heartbeat_timeout, storage=StorageType.FILE
            )
            self.live: KeyValue = await self._bucket(live)
        except Exception as error:
            await self.nc.close()
            raise FleetError(
                f"the NATS server at {self.url} has no usable JetStream (run it with -js): {error}"
            ) from None

    async def _bucket(self, config: KeyValueConfig) -> KeyValue:
        """The bucket, made when the fleet is new; as it is when it exists (its first maker's settings hold)."""
        from nats.js.errors import APIError

        try:
            return await self.js.create_key_value(config)
        except APIError:
            assert config.bucket is not None
            return await self.js.key_value(config.bucket)

    # ----------------------------------------------------------------------------------- the Bus

    def register(self, label: str, mailbox: Mailbox) -> None:
        """Host `label` here: its durable inbox, its receipts and its heartbeat. FleetError when another
        process runs an agent of that label in this fleet."""
        names.check_label(label)
        if label in self._local:
            raise FleetError(f"the label {label!r} is taken by a running agent")
        from sagent.fleet_nats.inbox import DurableInbox

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            raise FleetError("an agent on a NATS bus is made inside the event loop it runs on") from None
        inbox = DurableInbox(self, label, mailbox, loop)
        self.call(inbox.open(), 15)
        self._local[label] = inbox.take_here  # from this process: no trip through the server
        self._inboxes[label] = inbox

    def unregister(self, label: str) -> None:
        """`label` stops here; its place in the fleet stays, and messages to it wait in its inbox."""
        self._local.pop(label, None)
        inbox = self._inboxes.pop(label, None)
        if inbox is not None and not self._closed and self.connected:  # a server gone has nothing to close
            with contextlib.suppress(FleetError):
                self.call(inbox.close(), 5)

    def deliver(self, envelope: Envelope) -> Receipt:
        box = self._local.get(envelope.to)
        if box is not None:
            return box(envelope)
        names.check_label(envelope.to)
        try:
            return self.call(self._send(envelope), RECEIPT_WAIT + 10)
        except FleetError:
            raise
        except Exception as error:  # the server went away mid-send, or refused the message
            problem = str(error) or type(error).__name__
            raise FleetError(f"the NATS server at {self.url} did not take the message: {problem}") from None

    def labels(self) -> list[str]:
        """Every label of the fleet, running or waiting for its agent to come back."""
        return sorted(set(self._local) | set(self.call(self._member_labels(), 10)))

    # ------------------------------------------------------------------------------ more than a Bus

    def running(self, label: str) -> bool:
        """Whether an agent of the fleet runs under `label` now (its inbox answers a probe)."""
        return self.call(self._probe(label), 10)

    async def _probe(self, label: str) -> bool:
        from nats.errors import NoRespondersError
        from nats.errors import TimeoutError as NatsTimeout

        try:
            reply = await self.nc.request(names.agent_subject(self.fleet, label, "receipt"), b"", timeout=1.0)
        except (NoRespondersError, NatsTimeout):
            return False
        with contextlib.suppress(ValueError):
            return bool(json.loads(reply.data).get("running"))
        return False

    def agents(self) -> list[AgentInfo]:
        """The agents running now (by their heartbeats), by label."""
        return self.call(read_agents(self.live), 10)

    async def spawn_remote(self, parent: Agent, request: SpawnRequest) -> str:
        """Run a one-shot sub-agent of `parent` on another process (`request.on`); AgentSpawn's answer."""
        from sagent.fleet_nats.remote import spawn_remote

        return await spawn_remote(self, parent, request)

    async def run_remote(self, parent: Agent, request: SpawnRequest) -> RemoteOutcome | str:
        """`spawn_remote`, giving how a one-shot sub-agent ended as a value (`sagent.patterns` reads it)."""
        from sagent.fleet_nats.remote import run_remote

        return await run_remote(self, parent, request)

    def publish_event(self, subject: str, event: Event) -> None:
        """Send `event` to whoever listens on `subject` (`sagent fleet attach`); nobody listening costs nothing."""
        from sagent.types import to_dict

        data = json.dumps(to_dict(event), ensure_ascii=False).encode()
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(self.nc.publish(subject, data), self._loop)

    def forget(self, label: str) -> None:
        """Take `label` out of the fleet: its place, its waiting messages and its inbox go."""
        self.call(self._forget(label), 10)

    async def forget_here(self, label: str) -> None:
        """`forget`, on the client's own loop."""
        await self._forget(label)

    @property
    def connected(self) -> bool:
        """Whether the client is connected to the server now (False while the server is gone)."""
        return not self._closed and bool(self.nc.is_connected)

    def close(self) -> None:
        """Unregister the agents hosted here and close the connection (at once when the server is gone:
        nothing is waited for, and nothing raises)."""
        if self._closed:
            return
        for label in list(self._inboxes):
            self.unregister(label)
        with contextlib.suppress(Exception):  # the server is gone, or went while draining
            self.call(self.nc.drain() if self.nc.is_connected else self.nc.close(), 5)
        self._closed = True
        self._stop_thread()

    def _stop_thread(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)

    # ------------------------------------------------------------------------- on the client's loop

    async def _member_labels(self) -> list[str]:
        from nats.js.errors import NoKeysError

        try:
            return list(await self.members.keys())
        except NoKeysError:
            return []

    async def _send(self, envelope: Envelope) -> Receipt:
        from nats.errors import NoRespondersError
        from nats.errors import TimeoutError as NatsTimeout
        from nats.js.errors import KeyNotFoundError

        label = envelope.to
        if label not in self._members:
            try:
                await self.members.get(label)
            except KeyNotFoundError:
                known = ", ".join(sorted(set(await self._member_labels()) | set(self._local))) or "none"
                raise FleetError(
                    f"no agent is called {label!r} in the fleet {self.fleet!r}; its agents are: {known}"
                ) from None
            self._members.add(label)
        message_id = uuid.uuid4().hex
        # The receipt is asked for while the message is being stored: the recipient answers once the
        # message has reached it, which is after it was stored.
        stored = asyncio.ensure_future(
            self.js.publish(
                names.agent_subject(self.fleet, label, "inbox"),
                envelope_bytes(envelope),
                headers={"Nats-Msg-Id": message_id},
            )
        )
        receipt_subject = names.agent_subject(self.fleet, label, "receipt")
        asked = asyncio.ensure_future(self.nc.request(receipt_subject, message_id.encode(), timeout=RECEIPT_WAIT))
        try:
            await stored
        except BaseException:
            asked.cancel()
            raise
        try:
            reply = await asked
        except (NoRespondersError, NatsTimeout):
            return QueuedReceipt(label, False, await self._waiting(label))
        data = json.loads(reply.data)
        if not data.get("delivered"):
            return QueuedReceipt(label, False, await self._waiting(label))
        return Receipt(label, bool(data["was_working"]), int(data["waiting"]))

    async def _waiting(self, label: str) -> int:
        """Messages stored for `label` that it has not taken (1 at least: the one just sent)."""
        try:
            info = await self.js.consumer_info(names.inbox_stream(self.fleet), names.inbox_consumer(label))
            return max(1, int(info.num_pending or 0) + int(info.num_ack_pending or 0))
        except Exception:  # no inbox yet: the agent never ran; the stream holds the message for it
            return 1

    async def _forget(self, label: str) -> None:
        self._members.discard(label)
        with contextlib.suppress(Exception):
            await self.members.delete(label)
        with contextlib.suppress(Exception):
            await self.live.delete(label)
        with contextlib.suppress(Exception):
            await self.js.delete_consumer(names.inbox_stream(self.fleet), names.inbox_consumer(label))
        with contextlib.suppress(Exception):
            await self.js.purge_stream(
                names.inbox_stream(self.fleet), subject=names.agent_subject(self.fleet, label, "inbox")
            )
