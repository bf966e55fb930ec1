"""The HTTP part every fake provider server shares: scripted steps answered in order on 127.0.0.1.

A fake renders each step to either a `JSONReply` (a fault, or any plain JSON answer) or a `Stream` of SSE
events. Every request is recorded as `{"path", "headers", "body"}`. With no step left, the server answers
500 so a test that runs out fails loudly instead of hanging.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
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
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                request = {"path": self.path, "headers": dict(self.headers), "body": body}
                with fake._lock:
                    fake.requests.append(request)
                    queue = fake.scripts.get(fake.route(request), []) if fake.route else fake.steps
                    step = queue.pop(0) if queue else None
                if callable(step):  # a step that answers from what was asked
                    step = step(request)
                reply = no_step_left if step is None else render(step, request)
                if isinstance(reply, JSONReply):
                    self._send_json(reply)
                else:
                    self._send_stream(reply)

            def _send_json(self, reply: JSONReply) -> None:
                payload = json.dumps(reply.body).encode()
                self.send_response(reply.status)
                for k, v in {"content-type": "application/json", **reply.headers}.items():
                    self.send_header(k, v)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _send_stream(self, stream: Stream) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                for n, (name, data) in enumerate(stream.events):
                    if stream.cut_after is not None and n >= stream.cut_after:
                        break
                    if stream.delay:
                        time.sleep(stream.delay)
                    text = data if isinstance(data, str) else json.dumps(data)
                    head = f"event: {name}\n" if name else ""
                    try:
                        self.wfile.write(f"{head}data: {text}\n\n".encode())
                        self.wfile.flush()
                    except (BrokenPipeError, ConnectionResetError):
                        return  # the client went away (an interrupted stream)
                self.close_connection = True

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
