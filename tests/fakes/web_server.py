"""A fake web on 127.0.0.1 for the web and paper tools: routes by path, each answering with a status,
headers and a body, or computing them from the request. Every request is recorded (method, path with
query, headers, body), so a test can say which pages were never asked for."""

from __future__ import annotations

import json
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

PAYLOADS = Path(__file__).parent / "payloads"


def payload(name: str) -> bytes:
    """A recorded response body from tests/fakes/payloads."""
    return (PAYLOADS / name).read_bytes()


@dataclass
class Answer:
    status: int = 200
    body: bytes | str = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before answering (a slow server)

    @classmethod
    def html(cls, body: bytes | str, status: int = 200) -> Answer:
        return cls(status, body, {"content-type": "text/html; charset=utf-8"})

    @classmethod
    def json(cls, data: Any, status: int = 200, **headers: str) -> Answer:
        body = data if isinstance(data, bytes) else json.dumps(data)
        return cls(status, body, {"content-type": "application/json", **headers})

    @classmethod
    def redirect(cls, location: str, status: int = 302) -> Answer:
        return cls(status, b"", {"location": location})


Route = Answer | Callable[[dict[str, Any]], Answer] | list[Answer]


class FakeWeb:
    """Serves `routes` (path without query → an answer, a function of the request, or a list of answers
    given in turn, the last repeated). Unknown paths answer 404."""

    def __init__(self, routes: dict[str, Route] | None = None, *, tls: ssl.SSLContext | None = None) -> None:
        """With `tls` (a server context holding a certificate), the fake speaks HTTPS."""
        self.routes: dict[str, Route] = dict(routes or {})
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                request = {
                    "method": self.command,
                    "path": self.path,
                    "headers": {k.lower(): v for k, v in self.headers.items()},
                    "body": body.decode("utf-8", errors="replace"),
                }
                with fake._lock:
                    fake.requests.append(request)
                    answer = fake._route(request)
                if answer.delay:
                    time.sleep(answer.delay)
                data = answer.body.encode() if isinstance(answer.body, str) else answer.body
                try:
                    self.send_response(answer.status)
                    for key, value in answer.headers.items():
                        self.send_header(key, value)
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            do_GET = do_POST = _answer

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.scheme = "https" if tls is not None else "http"
        if tls is not None:
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def _route(self, request: dict[str, Any]) -> Answer:
        route = self.routes.get(urlsplit(request["path"]).path)
        if route is None:
            return Answer(404, b"not found", {"content-type": "text/plain"})
        if isinstance(route, list):
            return route.pop(0) if len(route) > 1 else route[0]
        return route(request) if callable(route) else route

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}"

    def paths(self) -> list[str]:
        return [r["path"] for r in self.requests]

    def __enter__(self) -> FakeWeb:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
