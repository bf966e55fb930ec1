"""A fake OpenAI Responses server on 127.0.0.1 streaming the real event sequence (`event: response.*`).

    with FakeResponses([responses_tools([("Read", {"path": "a.py"})]), responses_text("done")]) as fake:
        OpenAIModel(base_url=fake.url, api_key="test")...

Each step answers one POST /v1/responses: a `ResponsesReply` streamed as typed events, or a `Fault`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.sse_server import FakeServer, JSONReply, Stream, pieces


@dataclass
class ResponsesReply:
    # Simplified items: {"type": "message", "text"}, {"type": "reasoning", "summary", "encrypted_content"},
    # {"type": "function_call", "call_id", "name", "arguments" (raw JSON text)}.
    items: list[dict[str, Any]]
    usage: dict[str, int] = field(
        default_factory=lambda: {"input_tokens": 100, "cached_tokens": 0, "output_tokens": 20}
    )
    status: str = "completed"  # or "incomplete" (max_output_tokens) or "failed"
    error: dict[str, str] | None = None  # for status "failed": {"code", "message"}
    cut_after: int | None = None


@dataclass
class Fault:
    status: int
    message: str
    code: str | None = None
    headers: dict[str, str] = field(default_factory=dict)


def responses_text(text: str, **usage: int) -> ResponsesReply:
    return ResponsesReply([{"type": "message", "text": text}], usage=_usage(usage))


def responses_tools(
    calls: list[tuple[str, dict[str, Any]]], text: str = "", *, namespace: str | None = None, **usage: int
) -> ResponsesReply:
    """Function calls (after `text`, if any); `namespace` names the tool namespace they belong to, as for
    the MCP tools Codex offers (`mcp__<server>`)."""
    items: list[dict[str, Any]] = [{"type": "message", "text": text}] if text else []
    for i, (name, args) in enumerate(calls):
        call = {"type": "function_call", "call_id": f"call_{i}{name}", "name": name, "arguments": json.dumps(args)}
        items.append({**call, "namespace": namespace} if namespace else call)
    return ResponsesReply(items, usage=_usage(usage))


def responses_reasoning(summary: str, encrypted: str, text: str) -> ResponsesReply:
    return ResponsesReply(
        [{"type": "reasoning", "summary": summary, "encrypted_content": encrypted}, {"type": "message", "text": text}]
    )


def _usage(given: dict[str, int]) -> dict[str, int]:
    return {"input_tokens": 100, "cached_tokens": 0, "output_tokens": 20, **given}


def _full_item(item: dict[str, Any], index: int) -> dict[str, Any]:
    kind = item["type"]
    if kind == "message":
        return {
            "id": f"msg_{index}",
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": item["text"], "annotations": []}],
        }
    if kind == "reasoning":
        return {
            "id": f"rs_{index}",
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": item["summary"]}],
            "encrypted_content": item["encrypted_content"],
        }
    call = {
        "id": f"fc_{index}",
        "type": "function_call",
        "status": "completed",
        "call_id": item["call_id"],
        "name": item["name"],
        "arguments": item["arguments"],
    }
    if item.get("namespace"):  # a tool offered inside a namespace (codex puts each MCP server's tools in one)
        call["namespace"] = item["namespace"]
    return call


def _started_item(full: dict[str, Any]) -> dict[str, Any]:
    if full["type"] == "message":
        return {**full, "status": "in_progress", "content": []}
    if full["type"] == "reasoning":
        return {"id": full["id"], "type": "reasoning", "summary": []}
    return {**full, "status": "in_progress", "arguments": ""}


def _item_events(full: dict[str, Any], index: int) -> list[dict[str, Any]]:
    at = {"item_id": full["id"], "output_index": index}
    if full["type"] == "message":
        text = full["content"][0]["text"]
        part = {"type": "output_text", "text": "", "annotations": []}
        return [
            {"type": "response.content_part.added", **at, "content_index": 0, "part": part},
            *(
                {"type": "response.output_text.delta", **at, "content_index": 0, "delta": d, "logprobs": []}
                for d in pieces(text, 4)
            ),
            {"type": "response.output_text.done", **at, "content_index": 0, "text": text, "logprobs": []},
            {"type": "response.content_part.done", **at, "content_index": 0, "part": {**part, "text": text}},
        ]
    if full["type"] == "reasoning":
        text = full["summary"][0]["text"]
        part = {"type": "summary_text", "text": ""}
        return [
            {"type": "response.reasoning_summary_part.added", **at, "summary_index": 0, "part": part},
            *(
                {"type": "response.reasoning_summary_text.delta", **at, "summary_index": 0, "delta": d}
                for d in pieces(text, 5)
            ),
            {"type": "response.reasoning_summary_text.done", **at, "summary_index": 0, "text": text},
            {"type": "response.reasoning_summary_part.done", **at, "summary_index": 0, "part": {**part, "text": text}},
        ]
    raw = full["arguments"]
    return [
        *({"type": "response.function_call_arguments.delta", **at, "delta": d} for d in pieces(raw, 3)),
        {"type": "response.function_call_arguments.done", **at, "arguments": raw},
    ]


def stream_events(reply: ResponsesReply, model: str) -> list[dict[str, Any]]:
    """The event sequence the real API streams for `reply`."""
    base = {"id": "resp_fake01", "object": "response", "created_at": 0, "model": model, "output": []}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {**base, "status": "in_progress"}},
        {"type": "response.in_progress", "response": {**base, "status": "in_progress"}},
    ]
    output = [_full_item(item, i) for i, item in enumerate(reply.items)]
    for index, full in enumerate(output):
        events.append({"type": "response.output_item.added", "output_index": index, "item": _started_item(full)})
        events += _item_events(full, index)
        events.append({"type": "response.output_item.done", "output_index": index, "item": full})
    u = reply.usage
    final = {
        **base,
        "status": reply.status,
        "output": output,
        "usage": {
            "input_tokens": u["input_tokens"],
            "input_tokens_details": {"cached_tokens": u["cached_tokens"]},
            "output_tokens": u["output_tokens"],
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": u["input_tokens"] + u["output_tokens"],
        },
    }
    if reply.status == "incomplete":
        final["incomplete_details"] = {"reason": "max_output_tokens"}
    if reply.status == "failed":
        final["error"] = reply.error
    events.append({"type": f"response.{reply.status}", "response": final})
    return [{**event, "sequence_number": n} for n, event in enumerate(events)]


class FakeResponses(FakeServer):
    def __init__(self, steps: list[ResponsesReply | Fault] | None = None) -> None:
        super().__init__(steps, self._render, _fault(Fault(500, "fake: no scripted response left", "server_error")))

    @staticmethod
    def _render(step: ResponsesReply | Fault | JSONReply | Stream, request: dict[str, Any]) -> JSONReply | Stream:
        if isinstance(step, JSONReply | Stream):  # raw wire events, sent as given
            return step
        if isinstance(step, Fault):
            return _fault(step)
        refusal = _schema_refusal(request["body"])
        if refusal is not None:
            return _fault(Fault(400, refusal, "invalid_json_schema"))
        events = stream_events(step, request["body"].get("model", "gpt"))
        return Stream([(e["type"], e) for e in events], step.cut_after)

    @property
    def url(self) -> str:
        return f"{self.root}/v1"


def _schema_refusal(body: dict[str, Any]) -> str | None:
    """Why the real API would refuse a strict `json_schema` text format: a name missing, or an object that
    allows other properties or leaves one of its properties out of `required`."""
    fmt = (body.get("text") or {}).get("format") or {}
    if fmt.get("type") != "json_schema":
        return None
    if not fmt.get("name") or not isinstance(fmt.get("schema"), dict):
        return "text.format: json_schema needs a name and a schema"
    schema = fmt["schema"]
    if fmt.get("strict") and (
        schema.get("additionalProperties") is not False or set(schema.get("required", [])) != set(schema["properties"])
    ):
        return "Invalid schema for response_format: strict mode needs additionalProperties false and all required"
    return None


def _fault(fault: Fault) -> JSONReply:
    body = {"error": {"message": fault.message, "type": "error", "param": None, "code": fault.code}}
    return JSONReply(fault.status, body, fault.headers)
