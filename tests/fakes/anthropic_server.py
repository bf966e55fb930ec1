"""A fake Anthropic Messages server on 127.0.0.1 that streams the real SSE event sequence.

    with FakeAnthropic([tool_use_response([("Read", {"path": "a.py"})]), text_response("done")]) as fake:
        AnthropicModel(base_url=fake.url, api_key="test")...
        fake.requests[0]["body"]   # what the client sent

Each scripted step answers one POST /v1/messages: a streamed message (`Reply`) or a fault (`Fault`). With
no step left, the server answers 500 with a clear message, so a test that runs out fails loudly.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from tests.fakes.anthropic_cache import PromptCache
from tests.fakes.sse_server import FakeServer, JSONReply, Stream, pieces


@dataclass
class Reply:
    blocks: list[dict[str, Any]]
    stop_reason: str = "end_turn"
    usage: dict[str, int] = field(default_factory=lambda: {"input_tokens": 100, "output_tokens": 20})
    # Close the connection after this many SSE events (a stream cut mid-way), or None.
    cut_after: int | None = None
    # Seconds before each SSE event: a slow stream, to interrupt.
    delay: float = 0.0


@dataclass
class Fault:
    status: int
    error_type: str
    message: str
    headers: dict[str, str] = field(default_factory=dict)


Step = Reply | Fault


def text_response(text: str, **usage: int) -> Reply:
    return Reply([{"type": "text", "text": text}], usage={"input_tokens": 100, "output_tokens": 20, **usage})


def tool_use_response(calls: list[tuple[str, dict[str, Any]]], text: str = "", **usage: int) -> Reply:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    for i, (name, args) in enumerate(calls):
        blocks.append(
            {"type": "tool_use", "id": f"toolu_{i:02d}{abs(hash(name)) % 10**6}", "name": name, "input": args}
        )
    return Reply(blocks, "tool_use", {"input_tokens": 100, "output_tokens": 20, **usage})


def thinking_response(thinking: str, signature: str, text: str) -> Reply:
    return Reply([{"type": "thinking", "thinking": thinking, "signature": signature}, {"type": "text", "text": text}])


def raw_tool_json_response(name: str, raw_json: str) -> Reply:
    """A tool_use whose streamed argument JSON is `raw_json` as given (malformed on purpose)."""
    return Reply([{"type": "tool_use", "id": "toolu_bad01", "name": name, "raw": raw_json}], "tool_use")


def advisor_block(
    advice: str, *, model: str = "claude-opus-4-7", redacted: bool = False, **usage: int
) -> dict[str, Any]:
    """A consultation of Anthropic's server-side advisor within a reply: a `server_tool_use` block, its
    `advisor_tool_result` and an `advisor_message` usage iteration."""
    content = (
        {"type": "advisor_redacted_result", "encrypted_content": "ENC:" + advice}
        if redacted
        else {"type": "advisor_result", "text": advice, "stop_reason": "end_turn"}
    )
    spent = {"input_tokens": 900, "output_tokens": 300, **usage}
    return {"type": "advisor", "content": content, "model": model, "usage": spent}


def fault_429(retry_after: float = 0) -> Fault:
    return Fault(429, "rate_limit_error", "rate limited", {"retry-after": str(retry_after)})


def fault_529() -> Fault:
    return Fault(529, "overloaded_error", "Overloaded")


def sse_events(reply: Reply, model: str, message_id: str = "msg_fake01") -> list[tuple[str, dict[str, Any]]]:
    """The event sequence the real API streams for `reply`, as message `message_id`."""
    usage = reply.usage
    start_usage = {k: v for k, v in usage.items() if k != "output_tokens"} | {"output_tokens": 1}
    events: list[tuple[str, dict[str, Any]]] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": start_usage,
                },
            },
        ),
        ("ping", {"type": "ping"}),
    ]
    iterations: list[dict[str, Any]] = []
    index = 0
    for block in reply.blocks:
        kind = block["type"]
        if kind == "advisor":  # two blocks: the server's call, then the advisor's result
            use_id = f"srvtoolu_{index:02d}advisor"
            use = {"type": "server_tool_use", "id": use_id, "name": "advisor", "input": {}}
            result = {"type": "advisor_tool_result", "tool_use_id": use_id, "content": block["content"]}
            for content_block in (use, result):
                start_event = {"type": "content_block_start", "index": index, "content_block": content_block}
                events.append(("content_block_start", start_event))
                events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
                index += 1
            spent = block["usage"]
            iterations.append(
                {"type": "advisor_message", "model": block["model"], "cache_read_input_tokens": 0, **spent}
                | {"cache_creation_input_tokens": 0}
            )
            continue
        if kind == "text":
            start: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": c} for c in pieces(block["text"], 7)]
        elif kind == "thinking":
            start = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [{"type": "thinking_delta", "thinking": c} for c in pieces(block["thinking"], 7)]
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            raw = block.get("raw", json.dumps(block.get("input", {})))
            deltas = [{"type": "input_json_delta", "partial_json": c} for c in pieces(raw, 5)]
        events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": start}))
        events += [("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}) for d in deltas]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1
    delta_usage: dict[str, Any] = {"output_tokens": usage.get("output_tokens", 0)}
    if iterations:  # the executor's own sampling, then each consultation, as the API reports them
        executor = {"type": "message", "input_tokens": usage.get("input_tokens", 0), **delta_usage}
        delta_usage["iterations"] = [executor | {"cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}]
        delta_usage["iterations"] += iterations
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": reply.stop_reason, "stop_sequence": None},
                "usage": delta_usage,
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


class FakeAnthropic(FakeServer):
    def __init__(
        self,
        steps: list[Step] | None = None,
        *,
        scripts: dict[str, list[Step]] | None = None,
        route: Callable[[dict[str, Any]], str] | None = None,
        cache: PromptCache | None = None,
        advisor_pairs: set[tuple[str, str]] | None = None,
    ) -> None:
        """With `cache`, each reply's input usage is what Anthropic's prompt cache would report for the
        request (see `anthropic_cache`), instead of the scripted numbers. The advisor tool is checked as the
        API checks it (its beta header, its blocks only with the tool offered); with `advisor_pairs`, only
        those (executor, advisor) pairs are accepted, and an empty set refuses the tool as an endpoint that
        does not know it would."""
        empty = JSONReply(500, _error_body("api_error", "fake: no scripted response left"))
        self.cache = cache
        self.advisor_pairs = advisor_pairs
        self.streamed = 0
        """Messages streamed so far: each has an id of its own (msg_fake01, msg_fake02...), as from the API,
        for clients that join streamed pieces into one message by its id."""
        super().__init__(steps, self._render, empty, scripts=scripts, route=route)

    def _render(self, step: Step | JSONReply | Stream, request: dict[str, Any]) -> JSONReply | Stream:
        if isinstance(step, JSONReply | Stream):  # raw wire events, sent as given
            return step
        refusal = _advisor_refusal(request, self.advisor_pairs)
        if refusal is not None:  # answered as the API does; the scripted step answers the next request
            with self._lock:
                self.steps.insert(0, step)
            return JSONReply(400, _error_body("invalid_request_error", refusal))
        if isinstance(step, Fault):
            return JSONReply(step.status, _error_body(step.error_type, step.message), step.headers)
        refusal = _tool_choice_refusal(request["body"])
        if refusal is not None:
            return JSONReply(400, _error_body("invalid_request_error", refusal))
        if self.cache is not None:
            usage = self.cache.usage(request["body"]) | {"output_tokens": step.usage.get("output_tokens", 0)}
            step = replace(step, usage=usage)
            request["usage"] = usage
        with self._lock:
            self.streamed += 1
            message_id = f"msg_fake{self.streamed:02d}"
        events = sse_events(step, request["body"].get("model", "claude"), message_id)
        return Stream(events, step.cut_after, step.delay)


def _advisor_refusal(request: dict[str, Any], pairs: set[tuple[str, str]] | None) -> str | None:
    """Why the real API would refuse this request's use of the advisor tool, or None."""
    body = request["body"]
    tools = [t for t in body.get("tools", []) if t.get("type") == "advisor_20260301"]
    blocks = [
        b
        for m in body.get("messages", [])
        if isinstance(m.get("content"), list)
        for b in m["content"]
        if b.get("type") in ("server_tool_use", "advisor_tool_result")
    ]
    if blocks and not tools:
        return "messages: advisor blocks are only allowed when the advisor tool is in tools"
    if not tools:
        return None
    beta = {k.lower(): v for k, v in request["headers"].items()}.get("anthropic-beta", "")
    if "advisor-tool-2026-03-01" not in beta:
        return "tools.0: the advisor tool needs the beta header advisor-tool-2026-03-01"
    pair = (body.get("model", ""), tools[0].get("model", ""))
    if pairs is not None and pair not in pairs:
        return f"the advisor tool does not support executor {pair[0]} with advisor {pair[1]}"
    return None


def _tool_choice_refusal(body: dict[str, Any]) -> str | None:
    """Why the real API would refuse this request's `tool_choice` (a forced tool, as for structured output):
    a tool it does not offer, or thinking on with a forced tool."""
    choice = body.get("tool_choice")
    if not isinstance(choice, dict) or choice.get("type") not in ("tool", "any"):
        return None
    if choice["type"] == "tool" and choice.get("name") not in [t.get("name") for t in body.get("tools", [])]:
        return f"tool_choice: tool {choice.get('name')!r} is not in tools"
    if (body.get("thinking") or {}).get("type") == "enabled":
        return "Thinking may not be enabled when tool_choice forces tool use."
    return None


def _error_body(error_type: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": error_type, "message": message}}


if __name__ == "__main__":  # a standalone fake for trying the CLI by hand: python -m tests.fakes.anthropic_server
    import sys
    import time

    with FakeAnthropic([text_response(" ".join(sys.argv[1:]) or "hello from the fake")]) as server:
        print(server.url, flush=True)
        time.sleep(3600)
