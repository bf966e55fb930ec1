"""What MCP servers cost a run: the wait for the first request, and the bytes of every request.

- Start-up: a real `sagent -p` process against the fake Anthropic server, with no MCP server, then with
  two in the project's `.mcp.json` (the SDK's stdio servers of tests/fakes/mcp_server.py: one of five
  tools, one of twenty), then with a third that never answers its handshake, under MCP_TIMEOUT=HANG_MS.
  Spawn to first request, median of REPEATS runs each. A headless run waits for its servers so that their
  tools are in its first request: targets, the two servers add less than SERVERS_START_MS (their own
  start, in parallel), and the hanging one holds the first request no longer than MCP_TIMEOUT and a margin
  (HANG_MS + HANG_MARGIN_MS). The REPL never waits: its servers start once its first request is out.
- Request bytes: the tools and system prompt of a request, with sagent's built-in tools alone, then with
  three connected servers of twenty tools each (their schemas found through McpToolSearch, not sent);
  target: within REQUEST_BYTES_EXTRA of none.

    uv run python benchmarks/mcp.py
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sagent.agent.agent import Agent  # noqa: E402
from sagent.agent.prompt import coding_system_prompt  # noqa: E402
from sagent.mcp.config import ServerConfig  # noqa: E402
from sagent.mcp.setup import mcp_run  # noqa: E402
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn  # noqa: E402
from sagent.tools import builtin_tools  # noqa: E402
from sagent.types import ModelRequest  # noqa: E402
from tests.fakes.anthropic_server import FakeAnthropic, text_response  # noqa: E402
from tests.trusting import trust_in  # noqa: E402

SERVER = str(ROOT / "tests" / "fakes" / "mcp_server.py")
SERVERS_START_MS = 3000
HANG_MS = 2000
HANG_MARGIN_MS = 1000
REQUEST_BYTES_EXTRA = 0.10
REPEATS = 5


def first_request_ms(project: Path, env: dict[str, str]) -> float:
    """Ms from spawning `sagent -p` to its first request reaching the fake server."""
    with FakeAnthropic([text_response("ok")]) as fake:
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "sagent.cli.main", "-p", "hi", "--ephemeral"],
            env={**env, "ANTHROPIC_BASE_URL": fake.url},
            cwd=project,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if done.returncode != 0:
            raise RuntimeError(done.stderr)
        return (fake.requests[0]["arrived"] - start) * 1000


def startup_figures() -> tuple[float, float, float]:
    """Median ms to the first request without MCP servers, with two, and with those and one that hangs
    (under MCP_TIMEOUT=HANG_MS); the kinds of run alternate, so a busy machine slows them alike."""
    with tempfile.TemporaryDirectory() as tmp:
        bare, configured, hanging = Path(tmp) / "bare", Path(tmp) / "configured", Path(tmp) / "hanging"
        for project in (bare, configured, hanging):
            (project / ".git").mkdir(parents=True)
        env = {
            **os.environ,
            "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-benchmarks",
            "XDG_DATA_HOME": str(Path(tmp) / "data"),
            "XDG_CONFIG_HOME": str(Path(tmp) / "config"),
        }
        trust_in(Path(tmp) / "config", configured, hanging)  # a folder not trusted starts no server of its own
        servers = {
            "small": {"command": sys.executable, "args": [SERVER, "many:5"]},
            "large": {"command": sys.executable, "args": [SERVER, "many:20"]},
        }
        (configured / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
        servers["slow"] = {"command": sys.executable, "args": [SERVER, "hang"]}
        (hanging / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
        without, with_servers, with_hanging = [], [], []
        for _ in range(REPEATS):
            without.append(first_request_ms(bare, env))
            with_servers.append(first_request_ms(configured, env))
            with_hanging.append(first_request_ms(hanging, {**env, "MCP_TIMEOUT": str(HANG_MS)}))
    return statistics.median(without), statistics.median(with_servers), statistics.median(with_hanging)


def request_bytes(request: ModelRequest) -> int:
    """The bytes of what every request repeats: the system prompt and the tools' specs."""
    tools = [{"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in request.tools]
    return len(request.system.encode()) + len(json.dumps(tools).encode())


async def _requests(with_servers: bool, cwd: Path) -> ModelRequest:
    run = mcp_run(
        [ServerConfig(f"s{i}", "stdio", command=sys.executable, args=(SERVER, "many:20")) for i in range(3)], cwd
    )
    assert run is not None
    model = ScriptedModel([tool_turn(("List", {"path": "."})), text_turn("ok")])
    tools = [*builtin_tools(), *(run.tools if with_servers else ())]
    agent = Agent(
        model, system=coding_system_prompt(cwd), tools=tools, hooks=(run.hook,) if with_servers else (), cwd=cwd
    )
    try:
        if with_servers:
            run.servers.start()
            await run.servers.settle(60)  # every server connected: the second request is the steady state
        async for _ in agent.run("list the files"):
            pass
        return model.requests[-1]
    finally:
        await agent.aclose()
        await run.servers.aclose()


def bytes_figures() -> tuple[int, int]:
    """(request bytes without MCP servers, with three servers of twenty tools each)."""
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        return request_bytes(asyncio.run(_requests(False, cwd))), request_bytes(asyncio.run(_requests(True, cwd)))


def report(name: str, value: float, unit: str, target: float) -> bool:
    ok = value < target
    print(f"{name:<52} {value:>9.2f} {unit:<3} target < {target:g} {unit:<3} {'ok' if ok else 'MISSED'}")
    return ok


def mcp_figures() -> list[bool]:
    bare, with_servers, with_hanging = startup_figures()
    print(f"{'spawn to first request: none → two → two and a hang':<52} {bare:>9.0f} → {with_servers:.0f} → ", end="")
    print(f"{with_hanging:.0f} ms")
    results = [
        report("first request delayed by 2 MCP servers starting", with_servers - bare, "ms", SERVERS_START_MS),
        report(
            f"... and by one that hangs (MCP_TIMEOUT={HANG_MS})", with_hanging - bare, "ms", HANG_MS + HANG_MARGIN_MS
        ),
    ]
    none, three = bytes_figures()
    print(f"{'request bytes (system + tools): none → 3×20 MCP tools':<52} {none:>9,} → {three:,} bytes")
    results.append(
        report(
            "request bytes added by 3 servers of 20 tools", 100 * (three - none) / none, "%", 100 * REQUEST_BYTES_EXTRA
        )
    )
    return results


if __name__ == "__main__":
    sys.exit(0 if all(mcp_figures()) else 1)
