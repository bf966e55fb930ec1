"""The HTTP part every fake provider server shares: scripted steps answered in order on 127.0.0.1.

A fake renders each step to either a `JSONReply` (a fault, or any plain JSON answer) or a `Stream` of SSE
events. Every request is recorded as `{"path", "headers", "body"}`. With no step left, the server answers
500 so a test that runs out fails loudly instead of hanging. A record also holds `arrived` and `answered`,
the `time.perf_counter()` at which the request was read and its response fully sent, and `size`, the bytes
of its body as sent, for benchmarks. A GET (a client asking for a model list, say) takes no step: it is
recorded in `gets` and answered 404 with a JSON error.

Transport faults work for every provider's fake: wrap any step in `Faulty(step, ...)` to change how its
stream is sent (chunked and cut, paused, reset), or script `Drop()` for a connection reset before any
response.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class JSONReply:
    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Stream:
    # (event name or None, data): data is JSON-encoded unless it is already a str.
    events: list[tuple[str | None, Any]]
    # Close the connection after this many events (a stream cut mid-way), or None.
    cut_after: int | None = None
    # Seconds to wait before each event, for a stream slow enough to interrupt.
    delay: float = 0.0
    # Send the body with `transfer-encoding: chunked`, as the real APIs do: a cut then leaves the body
    # incomplete (no closing chunk), which clients see as a protocol error rather than a clean end.
    chunked: bool = False
    # (n, seconds): go silent for that long before event n, the connection held open (an idle stream).
    pause: tuple[int, float] | None = None
    # Reset the connection (TCP RST) after this many events, or None.
    reset_after: int | None = None
    # Send event n with its JSON cut in half (a chunk no parser accepts), or None.
    garble: int | None = None


@dataclass
class Faulty:
    """Any provider's step, streamed with these `Stream` fields changed (cut_after, chunked, pause,
    reset_after, garble, delay)."""

    step: Any
    changes: dict[str, Any]

    def __init__(self, step: Any, **changes: Any) -> None:
        self.step, self.changes = step, changes


@dataclass
class Drop:
    """Reset the connection as soon as the request is read: no status line, no headers."""


Render = Callable[[Any, dict[str, Any]], JSONReply | Stream]


class FakeServer:
    def __init__(
        self,
        steps: list[Any] | None,
        render: Render,
        no_step_left: JSONReply,
        *,
        scripts: dict[str, list[Any]] | None = None,
        route: Callable[[dict[str, Any]], str] | None = None,
    ) -> None:
        """Steps are answered in order; or, for concurrent clients (a fleet of agents), `route` names the
        script in `scripts` each request takes its next step from. A step may be a function of the
        recorded request that returns the step to answer with."""
        self.steps: list[Any] = list(steps or [])
        self.scripts = {key: list(value) for key, value in (scripts or {}).items()}
        self.route = route
        self.requests: list[dict[str, Any]] = []
        self.gets: list[dict[str, Any]] = []
        # Keep connections open between streamed answers (chunked bodies), as the real APIs do; off by
        # default, so every stream ends with the connection (the transport-fault tests rely on that).
        self.keep_alive = False
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def setup(self) -> None:
                super().setup()
                # Each SSE event goes out as written, as from the real APIs' servers: with Nagle's algorithm a
                # kept connection holds small writes back for the client's delayed ACK (40 ms a round).
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                raw = self.rfile.read(length)
                arrived = time.perf_counter()  # the whole request is in; parsing it is the fake's own time
                body = json.loads(raw or b"{}")
                request = {"path": self.path, "headers": dict(self.headers), "body": body, "arrived": arrived}
                request["size"] = len(raw)
                request["peer"] = self.client_address[1]  # the client's port: one per connection
                with fake._lock:
                    fake.requests.append(request)
                    queue = fake.scripts.get(fake.route(request), []) if fake.route else fake.steps
                    step = queue.pop(0) if queue else None
                if callable(step):  # a step that answers from what was asked
                    step = step(request)
                if isinstance(step, Drop):
                    self._reset()
                    return
                changes = {}
                if isinstance(step, Faulty):
                    step, changes = step.step, step.changes
                reply = no_step_left if step is None else render(step, request)
                if isinstance(reply, Stream) and changes:
                    reply = replace(reply, **changes)
                if isinstance(reply, JSONReply):
                    self._send_json(reply)
                else:
                    self._send_stream(reply)
                request["answered"] = time.perf_counter()

            def do_GET(self) -> None:
                with fake._lock:
                    fake.gets.append({"path": self.path, "headers": dict(self.headers), "arrived": time.perf_counter()})
                self._send_json(JSONReply(404, {"error": {"message": f"fake: no GET {self.path}", "code": 404}}))

            def _send_json(self, reply: JSONReply) -> None:
                payload = json.dumps(reply.body).encode()
                self.send_response(reply.status)
                for k, v in {"content-type": "application/json", **reply.headers}.items():
                    self.send_header(k, v)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _reset(self) -> None:
                # SO_LINGER with a zero timeout makes close() send RST instead of FIN.
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()
                self.close_connection = True

            def _send_stream(self, stream: Stream) -> None:
                faulty = stream.cut_after is not None or stream.reset_after is not None or stream.garble is not None
                keep = fake.keep_alive and not faulty
                if keep:  # as the real APIs: a chunked body, and the connection kept for the next request
                    stream = replace(stream, chunked=True)
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                if not keep:
                    self.send_header("connection", "close")
                if stream.chunked:
                    self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                self.close_connection = not keep
                for n, (name, data) in enumerate(stream.events):
                    if stream.cut_after is not None and n >= stream.cut_after:
                        return  # a chunked body stays without its closing chunk
                    if stream.reset_after is not None and n >= stream.reset_after:
                        self._reset()
                        return
                    if stream.pause is not None and n == stream.pause[0]:
                        time.sleep(stream.pause[1])
                    if stream.delay:
                        time.sleep(stream.delay)
                    text = data if isinstance(data, str) else json.dumps(data)
                    if n == stream.garble:
                        text = text[: len(text) // 2]
                    head = f"event: {name}\n" if name else ""
                    if not self._write(f"{head}data: {text}\n\n".encode(), stream.chunked):
                        return  # the client went away (an interrupted stream, or one it gave up on)
                if stream.chunked:
                    self._write(b"", chunked=True)

            def _write(self, payload: bytes, chunked: bool) -> bool:
                if chunked:  # an empty payload is the closing chunk
                    payload = f"{len(payload):x}\r\n".encode() + payload + b"\r\n"
                try:
                    self.wfile.write(payload)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    return False
                return True

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        # A short poll interval: shutdown() waits up to one interval, and tests start many servers.
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    @property
    def root(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def url(self) -> str:
        return self.root

    def add(self, *steps: Any) -> None:
        with self._lock:
            self.steps.extend(steps)

    def bodies(self) -> list[Any]:
        return [r["body"] for r in self.requests]

    def __enter__(self) -> Any:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def pieces(text: str, size: int) -> list[str]:
    """`text` in chunks of `size` characters, as a server streams it (at least one chunk)."""
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]
