"""The run manifest: the generation parameters of each model request, logged before it is sent.

    {"kind": "manifest", "manifest": {"provider": "anthropic", "model": "claude-sonnet-4-6",
     "max_tokens": 32000, "effort": "high", "thinking_budget": null, "temperature": null,
     "system_sha256": "…", "tools_sha256": "…", "tools": ["Bash", "Edit", …], "messages": 12,
     "prompt_sha256": "…", "prompt_unnumbered_sha256": "…", "purpose": "turn"}}

With it a run can be reproduced (`sagent replay`) and two runs compared knowing what each model was asked
with. The system prompt and the tool set are logged as hashes (the session's header and its messages
hold the rest); `prompt_sha256` names exactly what was sent, the SHA-256 of the canonical JSON of
`{"messages": [...], "system": "...", "tools": [...]}`, so two runs can be told to have sent the same
prompts turn by turn (`sagent compare`; manifests written before it have none: "not recorded"), and
`prompt_unnumbered_sha256` the same with tool call ids replaced by their order, since those differ from run
to run when all else is the same. `purpose`
is `turn` for the agent's own next response, `aside` for a compaction summary or a tool's question to a
small model. Logs written before manifests existed simply have none.
"""

from __future__ import annotations

import hashlib
from typing import Any

from sagent.lib.json import JSON, canonical_json, json_thaw
from sagent.types import Message, ModelRequest, ToolSpec, to_dict

MANIFEST_KIND = "manifest"

_tools_cache: tuple[tuple[ToolSpec, ...] | None, str] = (None, "")


def tools_sha256(tools: tuple[ToolSpec, ...]) -> str:
    """The SHA-256 of the tool set as the model is told it (names, descriptions, schemas; in order)."""
    global _tools_cache
    if _tools_cache[0] == tools:  # the same tools from request to request: hashed once
        return _tools_cache[1]
    digest = hashlib.sha256(canonical_json(_tool_specs(tools))).hexdigest()
    _tools_cache = (tools, digest)
    return digest


def _tool_specs(tools: tuple[ToolSpec, ...]) -> list[JSON]:
    return [{"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in tools]


NOT_SENT = frozenset({"usage", "stop_reason", "response_id", "provider", "model", "typed"})
"""Fields of a logged message that no provider is sent (what the response cost, what the user typed)."""


def sent_message(message: Message) -> JSON:
    """`message` as it is sent: its logged form without the fields no model sees."""
    return {k: v for k, v in to_dict(message).items() if k not in NOT_SENT}


def sent_messages(request: ModelRequest) -> list[JSON]:
    """`request`'s messages as they are sent: their logged form without the fields no model sees."""
    return [sent_message(message) for message in request.messages]


def _unnumbered_message(message: JSON, names: dict[str, str]) -> JSON:
    """`message` with every tool call id (a call's `id`, a result's `call_id`) replaced by its place among
    the ids seen so far (`#1`, `#2`, ...; `names` records them): the ids a model or provider gives calls
    differ from run to run even when everything else is the same."""

    def number(value: JSON) -> JSON:
        return names.setdefault(value, f"#{len(names) + 1}") if isinstance(value, str) else value

    assert isinstance(message, dict)
    data = dict(message)
    if "call_id" in data:
        data["call_id"] = number(data["call_id"])
    content = data.get("content")
    if isinstance(content, list):
        data["content"] = [
            {**part, "id": number(part.get("id"))}
            if isinstance(part, dict) and part.get("type") == "tool_call"
            else part
            for part in content
        ]
    return data


def _unnumbered(messages: list[JSON]) -> list[JSON]:
    """`messages` with every tool call id replaced by its place among them (`_unnumbered_message`)."""
    names: dict[str, str] = {}
    return [_unnumbered_message(message, names) for message in messages]


def prompt_hashes(request: ModelRequest) -> tuple[str, str]:
    """The SHA-256 of exactly what `request` asks the model: the canonical JSON of
    `{"messages": [...], "system": "...", "tools": [...]}` (tools with names, descriptions and schemas, in
    order; messages as `sent_messages` gives them); and the same with tool call ids replaced by their order."""
    tools = _tool_specs(request.tools)
    messages = sent_messages(request)
    exact: JSON = {"system": request.system, "tools": tools, "messages": messages}
    unnumbered: JSON = {"system": request.system, "tools": tools, "messages": _unnumbered(messages)}
    return hashlib.sha256(canonical_json(exact)).hexdigest(), hashlib.sha256(canonical_json(unnumbered)).hexdigest()


class PromptHasher:
    """`prompt_hashes` for one agent's requests, at the cost of the messages a request adds.

    An agent's next request repeats the last one's messages (the same frozen objects) and adds a few, so
    the canonical JSON of `{"messages": [m1, ..., mN], ...}` (keys sorted: the messages come first) is
    hashed as it grows: the hashes' states after the last request's messages are kept, and only the new
    messages are encoded. A request that does not start with exactly those messages (compaction, a
    rewind, cleared tool results) is hashed from the start. The figures are `prompt_hashes`'s, byte for
    byte; a prompt whose JSON must be escaped to ASCII (a lone surrogate) is left to it too."""

    def __init__(self) -> None:
        self._messages: list[Message] = []
        self._exact = hashlib.sha256(b'{"messages":[')
        self._unnumbered = hashlib.sha256(b'{"messages":[')
        self._names: dict[str, str] = {}
        self._tail: tuple[str | None, tuple[ToolSpec, ...] | None, bytes] = (None, None, b"")

    def _restart(self) -> None:
        self._messages = []
        self._exact = hashlib.sha256(b'{"messages":[')
        self._unnumbered = hashlib.sha256(b'{"messages":[')
        self._names = {}

    def hashes(self, request: ModelRequest) -> tuple[str, str]:
        """`prompt_hashes(request)`."""
        known = self._messages
        if len(request.messages) < len(known) or any(a is not b for a, b in zip(known, request.messages, strict=False)):
            self._restart()
            known = self._messages
        for message in request.messages[len(known) :]:
            sent = sent_message(message)
            try:
                exact = _utf8_canonical(sent)
                unnumbered = _utf8_canonical(_unnumbered_message(sent, self._names))
            except UnicodeEncodeError:
                self._restart()
                return prompt_hashes(request)
            comma = b"," if known else b""
            self._exact.update(comma + exact)
            self._unnumbered.update(comma + unnumbered)
            known.append(message)
        if self._tail[0] is not request.system or self._tail[1] is not request.tools:
            # The system prompt and the tools are the same objects from round to round: encoded once.
            try:
                tail = b'],"system":' + _utf8_canonical(request.system)
                tail += b',"tools":' + _utf8_canonical(_tool_specs(request.tools)) + b"}"
            except UnicodeEncodeError:
                return prompt_hashes(request)
            self._tail = (request.system, request.tools, tail)
        tail = self._tail[2]
        exact_hash, unnumbered_hash = self._exact.copy(), self._unnumbered.copy()
        exact_hash.update(tail)
        unnumbered_hash.update(tail)
        return exact_hash.hexdigest(), unnumbered_hash.hexdigest()


def _utf8_canonical(value: JSON) -> bytes:
    """`canonical_json(value)` when it needs no ASCII escaping; UnicodeEncodeError when it does."""
    import json

    return json.dumps(json_thaw(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def manifest(
    provider: str, model: str, request: ModelRequest, *, own: bool, hasher: PromptHasher | None = None
) -> dict[str, Any]:
    """The generation parameters of `request` sent to `provider`/`model`; `hasher` (the agent's) hashes
    its prompt at the cost of what it adds to the last one."""
    return {
        "provider": provider,
        "model": model,
        "max_tokens": request.max_tokens,
        "effort": request.effort,
        "thinking_budget": request.thinking_budget,
        "temperature": request.temperature,
        "system_sha256": hashlib.sha256(request.system.encode("utf-8", "surrogatepass")).hexdigest(),
        "tools_sha256": tools_sha256(request.tools),
        "tools": [t.name for t in request.tools],
        "messages": len(request.messages),
        **dict(
            zip(
                ("prompt_sha256", "prompt_unnumbered_sha256"),
                (hasher.hashes if hasher else prompt_hashes)(request),
                strict=True,
            )
        ),
        "purpose": "turn" if own else "aside",
    }


def manifest_record(
    provider: str, model: str, request: ModelRequest, *, own: bool, hasher: PromptHasher | None = None
) -> dict[str, Any]:
    """The log record of a request's manifest."""
    return {"kind": MANIFEST_KIND, "manifest": manifest(provider, model, request, own=own, hasher=hasher)}
