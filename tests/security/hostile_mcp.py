"""A hostile MCP server over stdio, plain JSON-RPC without the SDK, for the tests of sagent's MCP client.

    python tests/security/hostile_mcp.py MODE [ARG]

MODE is what it does when a tool is called (the handshake and tools/list always answer):
- `crash-first STATE_FILE`: the first call of this server's whole life (across restarts: STATE_FILE
  counts them) kills it mid-call; later calls answer `alive <pid>`;
- `crash-always`: every call kills it;
- `exit-idle STATE_FILE`: in its first life, exits on its own shortly after listing its tools, between
  calls; later it answers `alive <pid>`;
- `huge BYTES [error]`: answers with a text result of about BYTES characters, written in pieces (marked
  `isError` with `error`);
- `hang`: never answers a call (and ignores SIGTERM);
- `flood`: writes megabytes of non-JSON garbage without line breaks, then hangs.
It writes its pid to `$HOSTILE_PIDS` (a folder) when that is set, so a test can check none survives, and
touches `$HOSTILE_CALLED` when a call arrives.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer_call(mode: str, arg: str, request_id: object) -> None:
    if mode == "crash-first":
        state = Path(arg)
        calls = int(state.read_text() or "0") if state.exists() else 0
        state.write_text(str(calls + 1))
        if calls == 0:
            sys.stderr.write("hostile: crashing on the first call\n")
            os._exit(3)
    elif mode == "crash-always":
        sys.stderr.write("hostile: crashing again\n")
        os._exit(3)
    elif mode == "huge":
        size = int(arg)
        head = '{"jsonrpc": "2.0", "id": ' + json.dumps(request_id)
        head += ', "result": {"content": [{"type": "text", "text": "'
        out = sys.stdout.buffer
        out.write(head.encode())
        piece = b"0123456789abcdef" * 65536  # 1 MiB
        left = size
        while left > 0:
            out.write(piece[: min(left, len(piece))])
            left -= len(piece)
        out.write(b'"}], "isError": ' + (b"true" if "error" in sys.argv[3:] else b"false") + b"}}\n")
        out.flush()
        return
    elif mode in ("hang", "flood"):
        if mode == "flood":
            out = sys.stdout.buffer
            for _ in range(64):
                out.write(b"garbage " * 131072)
            out.flush()
        while True:
            time.sleep(3600)
    alive = {"content": [{"type": "text", "text": f"alive {os.getpid()}"}]}
    send({"jsonrpc": "2.0", "id": request_id, "result": alive})


def exit_now(state: Path) -> None:
    state.touch()
    os._exit(0)


def main() -> None:
    mode = sys.argv[1]
    arg = sys.argv[2] if len(sys.argv) > 2 else ""
    if mode == "hang":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    pids = os.environ.get("HOSTILE_PIDS")
    if pids:
        (Path(pids) / str(os.getpid())).touch()
    tools = [
        {"name": "poke", "description": "Does what the server's mode says.", "inputSchema": {"type": "object"}},
        {"name": "other", "description": "Another tool.", "inputSchema": {"type": "object"}},
    ]
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if request_id is None:
            continue  # a notification
        if method == "initialize":
            version = message["params"].get("protocolVersion", "2025-06-18")
            send(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "result": {
                        "protocolVersion": version,
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "hostile", "version": "1"},
                    },
                }
            )
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": request_id, "result": {"tools": tools}})
            if mode == "exit-idle" and not Path(arg).exists():  # only its first life: started again, it stays
                threading.Timer(0.3, exit_now, (Path(arg),)).start()
        elif method == "tools/call":
            called = os.environ.get("HOSTILE_CALLED")
            if called:
                Path(called).touch()
            answer_call(mode, arg, request_id)
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": request_id, "result": {}})
        else:
            send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": f"no {method}"}})


if __name__ == "__main__":
    main()
