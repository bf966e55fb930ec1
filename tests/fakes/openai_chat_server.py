"""A fake Chat Completions server on 127.0.0.1 streaming the real chunk format (`data: {...}`, a final
usage chunk with no choices, `data: [DONE]`). Steps are lists of chunk dicts, a `Stream` of them (to cut
it), or `(status, body[, headers])` faults."""

from __future__ import annotations

from typing import Any

from tests.fakes.sse_server import FakeServer, JSONReply, Stream


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


class FakeChat(FakeServer):
    def __init__(self, steps: list[Any] | None = None) -> None:
        super().__init__(steps, self._render, JSONReply(500, {"error": {"message": "fake: no step left"}}))

    @staticmethod
    def _render(step: Any, request: dict[str, Any]) -> JSONReply | Stream:
        if isinstance(step, tuple):
            return JSONReply(step[0], step[1], step[2] if len(step) > 2 else {})
        if isinstance(step, Stream):
            return Stream([*step.events, (None, "[DONE]")], step.cut_after)
        return Stream([*((None, c) for c in step), (None, "[DONE]")])

    @property
    def url(self) -> str:
        return f"{self.root}/v1"
