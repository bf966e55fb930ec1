"""The run manifest: the generation parameters of each model request, logged before it is sent.

    {"kind": "manifest", "manifest": {"provider": "anthropic", "model": "claude-sonnet-4-6",
     "max_tokens": 32000, "effort": "high", "thinking_budget": null, "temperature": null,
     "system_sha256": "…", "tools_sha256": "…", "tools": ["Bash", "Edit", …], "messages": 12,
     "purpose": "turn"}}

With it a run can be reproduced (`sagent replay`) and two runs compared knowing what each model was asked
with. The system prompt and the tool set are logged as hashes (the session's header and its messages
hold the rest); `purpose` is `turn` for the agent's own next response, `aside` for a compaction summary or
a tool's question to a small model. Logs written before manifests existed simply have none.
"""

from __future__ import annotations

import hashlib
from typing import Any

from sagent.lib.json import JSON, canonical_json
from sagent.types import ModelRequest, ToolSpec

MANIFEST_KIND = "manifest"

_tools_cache: tuple[tuple[ToolSpec, ...] | None, str] = (None, "")


def tools_sha256(tools: tuple[ToolSpec, ...]) -> str:
    """The SHA-256 of the tool set as the model is told it (names, descriptions, schemas; in order)."""
    global _tools_cache
    if _tools_cache[0] == tools:  # the same tools from request to request: hashed once
        return _tools_cache[1]
    specs: list[JSON] = [{"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in tools]
    digest = hashlib.sha256(canonical_json(specs)).hexdigest()
    _tools_cache = (tools, digest)
    return digest


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
        "purpose": "turn" if own else "aside",
    }


def manifest_record(provider: str, model: str, request: ModelRequest, *, own: bool) -> dict[str, Any]:
    """The log record of a request's manifest."""
    return {"kind": MANIFEST_KIND, "manifest": manifest(provider, model, request, own=own)}
