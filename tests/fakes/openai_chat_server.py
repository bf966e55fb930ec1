"""A fake Chat Completions server on 127.0.0.1 streaming the real chunk format (`data: {...}`, a final
usage chunk with no choices, `data: [DONE]`). Steps are lists of chunk dicts, or `(status, body)` faults."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, usage: dict | None = None) -> dict[str, Any]:
    choices = [] if delta is None and finish is None else [{"index": 0, "delta": delta or {}, "finish_reason": finish}]
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": choices,
        "usage": usage,
    }


def text_chunks(text: str, usage: dict | None = None) -> list[dict[str, Any]]:
    out = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({"content": text[i : i + 4]}) for i in range(0, len(text), 4)]
    out.append(chunk({}, "stop"))
    if usage is not None:
        out.append(chunk(usage=usage))
    return out


def tool_chunks(calls: list[tuple[str, str]], usage: dict | None = None) -> list[dict[str, Any]]:
    """Tool calls whose raw argument text is split over several deltas; `content` is null."""
    out = [chunk({"role": "assistant", "content": None})]
    for index, (name, raw) in enumerate(calls):
        out.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": f"call_{index}",
                            "type": "function",
                            "function": {"name": name, "arguments": ""},
                        }
                    ]
                }
            )
        )
        out += [
            chunk({"tool_calls": [{"index": index, "function": {"arguments": raw[i : i + 3]}}]})
            for i in range(0, len(raw), 3)
        ]
    out.append(chunk({}, "tool_calls"))
    if usage is not None:
        out.append(chunk(usage=usage))
    return out


class FakeChat:
    def __init__(self, steps: list[Any]) -> None:
        self.steps = list(steps)
        self.requests: list[dict[str, Any]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                fake.requests.append(body)
                step = fake.steps.pop(0) if fake.steps else (500, {"error": {"message": "fake: no step left"}})
                if isinstance(step, tuple):
                    status, payload = step[0], json.dumps(step[1]).encode()
                    self.send_response(status)
                    for k, v in {"content-type": "application/json", **(step[2] if len(step) > 2 else {})}.items():
                        self.send_header(k, v)
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()
                for c in step:
                    self.wfile.write(f"data: {json.dumps(c)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")
                self.close_connection = True

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> FakeChat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
