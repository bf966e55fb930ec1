"""The team's notes, as a small MCP server on stdio (newline-delimited JSON-RPC), with no dependencies."""

import json
import sys

NOTES = {"deploy": "Deploys go out on Tuesdays and Thursdays after 10:00."}
TOOL = {
    "name": "team_note",
    "description": "Look up one of the team's notes by topic.",
    "inputSchema": {"type": "object", "properties": {"topic": {"type": "string"}}, "required": ["topic"]},
}


def answer(request):
    method = request.get("method")
    params = request.get("params") or {}
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "team-notes", "version": "1.0.0"},
        }
    if method == "tools/list":
        return {"tools": [TOOL]}
    if method == "tools/call":
        topic = (params.get("arguments") or {}).get("topic", "")
        text = NOTES.get(topic, f"no note about {topic!r}")
        return {"content": [{"type": "text", "text": text}], "isError": topic not in NOTES}
    if method == "ping":
        return {}
    raise LookupError(method)


for line in sys.stdin:
    request = json.loads(line)
    if "id" not in request:
        continue  # a notification
    try:
        reply = {"jsonrpc": "2.0", "id": request["id"], "result": answer(request)}
    except LookupError as missing:
        reply = {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": f"no method {missing}"}}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
