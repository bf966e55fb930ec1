"""A fake Slack on 127.0.0.1: the Web API methods sagent-slack calls and a Socket Mode WebSocket endpoint.

`FakeSlack` answers `POST /api/<method>` (form or JSON bodies, token in the Authorization header) and serves
Socket Mode on a second port: `apps.connections.open` returns `ws://127.0.0.1:<port>/link`, where the fake
sends `hello` and then each event given to `deliver()` wrapped in an `events_api` envelope, and records the
acknowledgements (`acked`). An envelope not acknowledged when its connection drops is sent again (with
`retry_attempt` counted up) on the next connection, as Slack does.

Faults: `fail(method, error)` answers that method's next call with `{"ok": false, "error": ...}`;
`rate_limit(method, seconds)` answers its next call 429 with `Retry-After`; `revoke(token)` makes a token
`invalid_auth`; `drop()` closes the current WebSocket; `redeliver_last()` sends the last acknowledged
envelope again on the next connection (a retry that crossed its acknowledgement).
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

from websockets.exceptions import ConnectionClosed
from websockets.sync.server import ServerConnection, serve

BOT_USER = "UBOT"
BOT_ID = "BBOT"
TEAM = "T1"


class FakeSlack:
    """One workspace: channels, the messages posted and edited, reactions, and the Socket Mode link."""

    def __init__(self, bot_token: str = "xoxb-test", app_token: str = "xapp-test") -> None:
        self.tokens = {bot_token, app_token}
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.call_times: list[float] = []  # time.monotonic() of each call, as `calls`
        self.channels: dict[str, dict[str, Any]] = {"C0GENERAL": {"id": "C0GENERAL", "name": "general"}}
        self.posted: list[dict[str, Any]] = []  # every chat.postMessage, with its ts
        self.updates: list[dict[str, Any]] = []  # every chat.update
        self.reactions: list[dict[str, Any]] = []
        self.acked: list[str] = []
        self.sent: list[str] = []  # envelope ids, each time one is sent (a resend counts again)
        self.sent_at: dict[str, float] = {}  # the event's ts -> time.monotonic() it was first sent
        self.connections = 0
        self._faults: dict[str, list[tuple[int, dict[str, Any], dict[str, str]]]] = {}
        self._pending: list[dict[str, Any]] = []  # envelopes not acknowledged yet, in order
        self._last_acked: dict[str, Any] | None = None
        self._redeliver = False
        self._ws: ServerConnection | None = None
        self._lock = threading.Condition()
        self._ids = itertools.count(1)
        self._clock = itertools.count(1)
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._http.daemon_threads = True
        self._wss = serve(self._socket, "127.0.0.1", 0)

    # ------------------------------------------------------------------ lifecycle

    def __enter__(self) -> FakeSlack:
        threading.Thread(target=self._http.serve_forever, daemon=True).start()
        threading.Thread(target=self._wss.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.shutdown()
        self._http.server_close()
        self._wss.shutdown()

    @property
    def url(self) -> str:
        """The Web API base URL, for `WebClient(base_url=...)` and `--slack-api-url`."""
        return f"http://127.0.0.1:{self._http.server_address[1]}/api/"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self._wss.socket.getsockname()[1]}/link"

    # ------------------------------------------------------------------ what a test does

    def fail(self, method: str, error: str) -> None:
        self._faults.setdefault(method, []).append((200, {"ok": False, "error": error}, {}))

    def rate_limit(self, method: str, seconds: int) -> None:
        body = {"ok": False, "error": "ratelimited"}
        self._faults.setdefault(method, []).append((429, body, {"Retry-After": str(seconds)}))

    def revoke(self, token: str) -> None:
        self.tokens.discard(token)

    def drop(self) -> None:
        """Close the current Socket Mode connection (the client should reconnect)."""
        with self._lock:
            ws = self._ws
        if ws is not None:
            ws.close()

    def redeliver_last(self) -> None:
        with self._lock:
            self._redeliver = True

    def channel(self, name: str) -> str:
        """The id of channel `name`, created when new."""
        for channel in self.channels.values():
            if channel["name"] == name:
                return str(channel["id"])
        cid = f"C{next(self._ids):04d}"
        self.channels[cid] = {"id": cid, "name": name}
        return cid

    def deliver(self, event: dict[str, Any]) -> str:
        """Send `event` (a Slack event: message, app_mention, reaction_added) in an envelope; its event id."""
        event_id = f"Ev{next(self._ids):06d}"
        event.setdefault("event_ts", self.new_ts())
        if event.get("type") in ("message", "app_mention"):
            event.setdefault("ts", event["event_ts"])
        envelope = {
            "envelope_id": f"env-{event_id}",
            "type": "events_api",
            "accepts_response_payload": False,
            "retry_attempt": 0,
            "retry_reason": "",
            "payload": {"type": "event_callback", "team_id": TEAM, "event_id": event_id, "event": event},
        }
        with self._lock:
            self._pending.append(envelope)
            ws = self._ws
        if ws is not None:
            self._send(ws, envelope)
        return event_id

    def message(self, text: str, channel: str = "C0GENERAL", user: str = "UHUMAN", **fields: Any) -> str:
        """A person's message event (fields add thread_ts, channel_type, bot_id, ...); its ts."""
        event = {"type": "message", "channel": channel, "user": user, "text": text, "ts": self.new_ts(), **fields}
        self.deliver(event)
        return str(event["ts"])

    def wait(self, check: Callable[[], Any], timeout: float = 20.0) -> Any:
        """Wait until `check()` is truthy (what the service did arrives asynchronously); its value."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = check()
            if value:
                return value
            time.sleep(0.01)
        raise AssertionError(f"fake slack: timed out waiting; calls so far: {[m for m, _ in self.calls]}")

    def wait_connected(self, count: int = 1) -> None:
        self.wait(lambda: self.connections >= count and self._ws is not None)

    def texts(self, channel: str | None = None) -> list[str]:
        """What the bot posted (then edited to), in order: each message's latest text."""
        latest = {u["ts"]: u["text"] for u in self.updates}
        return [latest.get(p["ts"], p["text"]) for p in self.posted if channel is None or p["channel"] == channel]

    def new_ts(self) -> str:
        return f"{1700000000 + next(self._clock)}.000100"

    # ------------------------------------------------------------------ Web API

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                method = self.path.rsplit("/", 1)[-1]
                raw = self.rfile.read(int(self.headers.get("content-length") or 0)).decode()
                if "json" in (self.headers.get("content-type") or ""):
                    params = json.loads(raw or "{}")
                else:
                    params = {k: v[0] for k, v in parse_qs(raw).items()}
                token = (self.headers.get("authorization") or "").removeprefix("Bearer ")
                status, body, headers = fake._answer(method, params, token)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

        return Handler

    def _answer(self, method: str, params: dict[str, Any], token: str) -> tuple[int, dict[str, Any], dict[str, str]]:
        self.calls.append((method, params))
        self.call_times.append(time.monotonic())
        if token not in self.tokens:
            return 200, {"ok": False, "error": "invalid_auth"}, {}
        faults = self._faults.get(method)
        if faults:
            return faults.pop(0)
        answer = self._methods().get(method)
        if answer is None:
            return 200, {"ok": False, "error": "unknown_method"}, {}
        return 200, {"ok": True, **answer(params)}, {}

    def _methods(self) -> dict[str, Callable[[dict[str, Any]], dict[str, Any]]]:
        return {
            "auth.test": lambda p: {"user_id": BOT_USER, "bot_id": BOT_ID, "team_id": TEAM, "user": "sagent"},
            "apps.connections.open": lambda p: {"url": self.ws_url},
            "chat.postMessage": self._post,
            "chat.update": self._update,
            "reactions.add": lambda p: self.reactions.append(p) or {},
            "conversations.create": self._create,
            "conversations.list": lambda p: {"channels": list(self.channels.values()), "response_metadata": {}},
            "conversations.join": lambda p: {"channel": self.channels.get(p.get("channel", ""), {})},
        }

    def _post(self, params: dict[str, Any]) -> dict[str, Any]:
        ts = self.new_ts()
        message = {**params, "ts": ts}
        if isinstance(message.get("metadata"), str):
            message["metadata"] = json.loads(message["metadata"])
        self.posted.append(message)
        return {"channel": params.get("channel"), "ts": ts}

    def _update(self, params: dict[str, Any]) -> dict[str, Any]:
        self.updates.append(params)
        return {"channel": params.get("channel"), "ts": params.get("ts")}

    def _create(self, params: dict[str, Any]) -> dict[str, Any]:
        name = str(params.get("name", ""))
        if any(c["name"] == name for c in self.channels.values()):
            return {"ok": False, "error": "name_taken"}
        return {"channel": self.channels[self.channel(name)]}

    # ------------------------------------------------------------------ Socket Mode

    def _socket(self, ws: ServerConnection) -> None:
        with self._lock:
            self.connections += 1
            old = self._ws
            self._ws = ws
            pending = list(self._pending)
            if self._redeliver and self._last_acked is not None:
                pending.insert(0, self._last_acked)
                self._redeliver = False
        if old is not None:
            old.close()
        try:
            ws.send(json.dumps({"type": "hello", "num_connections": 1, "connection_info": {"app_id": "A1"}}))
            for envelope in pending:
                envelope["retry_attempt"] += 1
                self._send(ws, envelope)
            for raw in ws:
                self._acknowledged(json.loads(raw))
        except ConnectionClosed:
            pass
        finally:
            with self._lock:
                if self._ws is ws:
                    self._ws = None

    def _send(self, ws: ServerConnection, envelope: dict[str, Any]) -> None:
        try:
            ws.send(json.dumps(envelope))
            self.sent.append(envelope["envelope_id"])
            self.sent_at.setdefault(str(envelope["payload"]["event"].get("ts")), time.monotonic())
        except ConnectionClosed:
            pass  # sent again on the next connection

    def _acknowledged(self, reply: dict[str, Any]) -> None:
        envelope_id = reply.get("envelope_id")
        with self._lock:
            for envelope in self._pending:
                if envelope["envelope_id"] == envelope_id:
                    self._pending.remove(envelope)
                    self._last_acked = envelope
                    self.acked.append(str(envelope_id))
                    break
