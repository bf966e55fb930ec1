"""A fake Gemini API server on 127.0.0.1 streaming `streamGenerateContent?alt=sse` in the real shape.

    with FakeGemini([gemini_tools([("Read", {"path": "a.py"})]), gemini_text("done")]) as fake:
        GoogleModel(base_url=fake.url, api_key="test")...

Each step answers one POST .../models/{model}:streamGenerateContent: a `GeminiReply` whose parts (the
API's own camelCase part objects) are streamed over several chunks, or a `Fault` with Google's error body.
The same steps answer the Interactions API (POST .../interactions, streamed), rendered as its SSE events
(`interaction.created`, `step.start` / `step.delta` / `step.stop` per step, `interaction.completed`): each
interaction is named `int_fakeNN`, NN counting the interactions requested; a lost one is a scripted
`Fault(404, "Interaction 'int_fake01' not found.")`. A plain `:generateContent` (not streamed, as the
Gemini CLI's side requests are) gets the whole reply as one JSON response.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.sse_server import FakeServer, JSONReply, Stream, pieces

_STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


@dataclass
class GeminiReply:
    parts: list[dict[str, Any]]
    finish: str = "STOP"
    # Gemini's own counts: prompt includes cached tokens; thoughts are separate from candidates.
    usage: dict[str, int] = field(default_factory=lambda: {"promptTokenCount": 100, "candidatesTokenCount": 20})
    cut_after: int | None = None
    finish_message: str | None = None


@dataclass
class Fault:
    status: int
    message: str
    details: list[dict[str, Any]] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)


def gemini_text(text: str, **usage: int) -> GeminiReply:
    return GeminiReply([{"text": text}], usage=_usage(usage))


def gemini_tools(calls: list[tuple[str, dict[str, Any]]], text: str = "", signature: str | None = None) -> GeminiReply:
    """Function calls, the first one signed when `signature` is given (as Gemini signs the first call)."""
    parts: list[dict[str, Any]] = [{"text": text}] if text else []
    for i, (name, args) in enumerate(calls):
        part: dict[str, Any] = {"functionCall": {"name": name, "args": args}}
        if i == 0 and signature:
            part["thoughtSignature"] = signature
        parts.append(part)
    return GeminiReply(parts)


def gemini_thinking(thought: str, signature: str, text: str) -> GeminiReply:
    return GeminiReply([{"text": thought, "thought": True}, {"text": text, "thoughtSignature": signature}])


def _usage(given: dict[str, int]) -> dict[str, int]:
    return {"promptTokenCount": 100, "candidatesTokenCount": 20, **given}


def _chunk_parts(parts: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Text parts split over several chunks; a signature rides on the last piece of its part."""
    chunks: list[list[dict[str, Any]]] = []
    for part in parts:
        if "text" not in part:
            chunks.append([part])
            continue
        texts = pieces(part["text"], 6)
        for n, piece in enumerate(texts):
            out = {**part, "text": piece}
            if n < len(texts) - 1:
                out.pop("thoughtSignature", None)
            chunks.append([out])
    return chunks


def gemini_malformed_call(text: str = "print(default_api.Read(path=") -> GeminiReply:
    """What Gemini streams when the model writes a tool call that does not parse: no parts at all, the
    finish reason MALFORMED_FUNCTION_CALL."""
    return GeminiReply([], finish="MALFORMED_FUNCTION_CALL", finish_message=f"Malformed function call: {text}")


def stream_chunks(reply: GeminiReply, model: str) -> list[dict[str, Any]]:
    chunks = _chunk_parts(reply.parts) or [[]]  # a reply with no parts still ends with its finish reason
    out = []
    for n, parts in enumerate(chunks):
        candidate: dict[str, Any] = (
            {"content": {"role": "model", "parts": parts}, "index": 0} if parts else {"index": 0}
        )
        last = n == len(chunks) - 1
        if last:
            candidate["finishReason"] = reply.finish
            if reply.finish_message:
                candidate["finishMessage"] = reply.finish_message
        u = reply.usage
        total = u.get("promptTokenCount", 0) + u.get("candidatesTokenCount", 0) + u.get("thoughtsTokenCount", 0)
        out.append(
            {
                "candidates": [candidate],
                "usageMetadata": {**u, "totalTokenCount": total}
                if last
                else {"promptTokenCount": u["promptTokenCount"]},
                "modelVersion": model,
                "responseId": "gresp_fake01",
            }
        )
    return out


class FakeGemini(FakeServer):
    def __init__(self, steps: list[GeminiReply | Fault] | None = None) -> None:
        super().__init__(steps, self._render, _fault(Fault(500, "fake: no scripted response left")))

    def _render(self, step: GeminiReply | Fault | JSONReply | Stream, request: dict[str, Any]) -> JSONReply | Stream:
        if isinstance(step, JSONReply | Stream):  # raw wire events, sent as given
            return step
        if isinstance(step, Fault):
            return _fault(step)
        if request["path"].split("?")[0].endswith("/interactions"):
            number = sum(r["path"].split("?")[0].endswith("/interactions") for r in self.requests)
            events = interaction_events(step, f"int_fake{number:02d}")
            return Stream([(e["event_type"], e) for e in events], step.cut_after)
        config = request["body"].get("generationConfig") or {}
        if "responseJsonSchema" in config and config.get("responseMimeType") != "application/json":
            return _fault(Fault(400, "responseJsonSchema needs responseMimeType application/json"))
        model = request["path"].split("/models/")[-1].split(":")[0]
        chunks = stream_chunks(step, model)
        if ":generateContent" in request["path"]:  # not streamed: the chunks' parts in one response
            parts = [p for c in chunks for p in c["candidates"][0].get("content", {}).get("parts", [])]
            candidate = {**chunks[-1]["candidates"][0], "content": {"role": "model", "parts": parts}}
            return JSONReply(200, {**chunks[-1], "candidates": [candidate]})
        return Stream([(None, c) for c in chunks], step.cut_after)


def interaction_events(reply: GeminiReply, interaction_id: str) -> list[dict[str, Any]]:
    """A reply as the Interactions API streams it: a signature rides on a `thought` step before the part
    it signs, text and thought summaries come in pieces, a call's arguments as one JSON delta."""
    events: list[dict[str, Any]] = []

    def step(start: dict[str, Any], deltas: list[dict[str, Any]]) -> None:
        index = sum(e["event_type"] == "step.start" for e in events)
        events.append({"event_type": "step.start", "index": index, "step": start})
        events.extend({"event_type": "step.delta", "index": index, "delta": d} for d in deltas)
        events.append({"event_type": "step.stop", "index": index})

    events.append({"event_type": "interaction.created", "interaction": {"id": interaction_id, "status": "in_progress"}})
    calls = 0
    for part in reply.parts:
        signature = (
            [{"type": "thought_signature", "signature": part["thoughtSignature"]}]
            if part.get("thoughtSignature")
            else []
        )
        if part.get("thought"):
            summary = [
                {"type": "thought_summary", "content": {"type": "text", "text": t}} for t in pieces(part["text"], 6)
            ]
            step({"type": "thought"}, summary + signature)
            continue
        if signature:
            step({"type": "thought"}, signature)
        if "functionCall" in part:
            calls += 1
            call = {
                "type": "function_call",
                "id": f"call_{calls}",
                "name": part["functionCall"]["name"],
                "arguments": {},
            }
            step(call, [{"type": "arguments_delta", "arguments": json.dumps(part["functionCall"].get("args") or {})}])
        elif part.get("text"):
            step({"type": "model_output"}, [{"type": "text", "text": t} for t in pieces(part["text"], 6)])
    u = reply.usage
    usage = {
        "total_input_tokens": u.get("promptTokenCount", 0),
        "total_output_tokens": u.get("candidatesTokenCount", 0),
        "total_thought_tokens": u.get("thoughtsTokenCount", 0),
        "total_cached_tokens": u.get("cachedContentTokenCount", 0),
    }
    status = "requires_action" if calls else {"MAX_TOKENS": "incomplete"}.get(reply.finish, "completed")
    done = {"id": interaction_id, "status": status, "usage": usage}
    events.append({"event_type": "interaction.completed", "interaction": done})
    return events


def _fault(fault: Fault) -> JSONReply:
    error = {
        "code": fault.status,
        "message": fault.message,
        "status": _STATUS_NAMES.get(fault.status, "UNKNOWN"),
        "details": fault.details,
    }
    return JSONReply(fault.status, {"error": error}, fault.headers)
