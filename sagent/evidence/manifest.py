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
import operator
import threading
from dataclasses import dataclass
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


def sent_messages(request: ModelRequest) -> list[JSON]:
    """`request`'s messages as they are sent: their logged form without the fields no model sees."""
    sent: list[JSON] = []
    for message in request.messages:
        data = to_dict(message)
        sent.append({k: v for k, v in data.items() if k not in NOT_SENT})
    return sent


def _unnumbered(messages: list[JSON], names: dict[str, str] | None = None) -> list[JSON]:
    """`messages` with every tool call id (a call's `id`, a result's `call_id`) replaced by its place among
    them (`#1`, `#2`, ...): the ids a model or provider gives calls differ from run to run even when
    everything else is the same. `names` holds the numbers given so far (in earlier messages) and gains the
    new ones."""
    names = {} if names is None else names

    def number(value: JSON) -> JSON:
        return names.setdefault(value, f"#{len(names) + 1}") if isinstance(value, str) else value

    out: list[JSON] = []
    for message in messages:
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
        out.append(data)
    return out


def _whole_hashes(request: ModelRequest) -> tuple[str, str]:
    """`prompt_hashes` by encoding the whole request at once."""
    tools = _tool_specs(request.tools)
    messages = sent_messages(request)
    exact: JSON = {"system": request.system, "tools": tools, "messages": messages}
    unnumbered: JSON = {"system": request.system, "tools": tools, "messages": _unnumbered(messages)}
    return hashlib.sha256(canonical_json(exact)).hexdigest(), hashlib.sha256(canonical_json(unnumbered)).hexdigest()


def _utf8_json(value: JSON) -> bytes:
    """`canonical_json(value)`, or UnicodeEncodeError where the whole document would fall back to ASCII
    escapes (a lone surrogate): the incremental hash then gives way to the whole one."""
    import json

    plain = json_thaw(value)
    return json.dumps(plain, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


@dataclass
class _Chain:
    """The hash state of a conversation's messages so far: the two SHA-256 states fed with
    `{"messages":[` and the canonical JSON of each message (comma-separated), the call ids numbered so far,
    and the messages themselves (held, so that a message is known by identity and never mistaken for
    another)."""

    messages: tuple[Message, ...]
    exact: Any  # hashlib's sha256 state
    unnumbered: Any
    names: dict[str, str]


_chains: list[_Chain] = []  # the most recent first, one per conversation a process runs at once
_CHAINS = 16
_chains_lock = threading.Lock()
_tools_json: tuple[tuple[ToolSpec, ...] | None, bytes] = (None, b"")


def _tools_bytes(tools: tuple[ToolSpec, ...]) -> bytes:
    global _tools_json
    if _tools_json[0] != tools:
        _tools_json = (tools, _utf8_json(_tool_specs(tools)))
    return _tools_json[1]


def _extend(request: ModelRequest) -> _Chain:
    """The chain for `request.messages`: the longest chain held whose messages begin them (the same
    objects, in order), fed with the rest. The canonical JSON of the whole request is the concatenation
    `{"messages":[m1,m2,...],"system":...,"tools":[...]}` (keys sorted), so feeding it message by message
    gives the same digest as hashing it at once, and each message is encoded once for the conversation."""
    messages = request.messages
    with _chains_lock:
        best: _Chain | None = None
        for chain in _chains:
            held = chain.messages
            longer = len(held) <= len(messages) and (best is None or len(held) > len(best.messages))
            if longer and all(map(operator.is_, held, messages)):
                best = chain
    if best is None:
        start = hashlib.sha256(b'{"messages":[')
        best = _Chain((), start, start.copy(), {})
    exact, unnumbered, names = best.exact.copy(), best.unnumbered.copy(), dict(best.names)
    for index in range(len(best.messages), len(messages)):
        data = to_dict(messages[index])
        sent = {k: v for k, v in data.items() if k not in NOT_SENT}
        comma = b"," if index else b""
        exact.update(comma + _utf8_json(sent))
        unnumbered.update(comma + _utf8_json(_unnumbered([sent], names)[0]))
    chain = _Chain(messages, exact, unnumbered, names)
    with _chains_lock:
        if best in _chains:  # the conversation moved on: its longer state takes the shorter one's place
            _chains.remove(best)
        _chains.insert(0, chain)
        del _chains[_CHAINS:]
    return chain


def prompt_hashes(request: ModelRequest) -> tuple[str, str]:
    """The SHA-256 of exactly what `request` asks the model: the canonical JSON of
    `{"messages": [...], "system": "...", "tools": [...]}` (tools with names, descriptions and schemas, in
    order; messages as `sent_messages` gives them); and the same with tool call ids replaced by their order.

    A request that carries the previous request's messages and more (each round of a session) encodes only
    the new messages: the hash state after the earlier ones is kept."""
    try:
        chain = _extend(request)
        tail = b'],"system":' + _utf8_json(request.system) + b',"tools":' + _tools_bytes(request.tools) + b"}"
    except UnicodeEncodeError:  # a lone surrogate somewhere: the whole document is escaped to ASCII
        return _whole_hashes(request)
    exact, unnumbered = chain.exact.copy(), chain.unnumbered.copy()
    exact.update(tail)
    unnumbered.update(tail)
    return exact.hexdigest(), unnumbered.hexdigest()


def manifest(provider: str, model: str, request: ModelRequest, *, own: bool) -> dict[str, Any]:
    """The generation parameters of `request` sent to `provider`/`model`."""
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
        **dict(zip(("prompt_sha256", "prompt_unnumbered_sha256"), prompt_hashes(request), strict=True)),
        "purpose": "turn" if own else "aside",
    }


def manifest_record(provider: str, model: str, request: ModelRequest, *, own: bool) -> dict[str, Any]:
    """The log record of a request's manifest."""
    return {"kind": MANIFEST_KIND, "manifest": manifest(provider, model, request, own=own)}
