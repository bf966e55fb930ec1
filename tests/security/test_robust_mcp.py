"""MCP servers cannot hang or break a run: a crashed server is started again on the next call (up to three
times) and its tools stay known meanwhile; a huge result (100 MB) is cut and spilled like every tool's
output, read in bounded memory. Against `hostile_mcp.py`, a plain JSON-RPC server with hostile modes."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from sagent.agent.agent import Agent
from sagent.agent.session import SessionLog
from sagent.events import ToolFinished
from sagent.mcp.config import ServerConfig
from sagent.mcp.setup import McpRun, mcp_run
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.tools.base import MAX_OUTPUT, tool
from sagent.types import ToolResult

HOSTILE = str(Path(__file__).with_name("hostile_mcp.py"))
GUARD = 300.0  # a run that hangs fails the test after this long, instead of hanging the suite


def server(mode: str, *args: str, env: dict[str, str] | None = None) -> ServerConfig:
    return ServerConfig("h", "stdio", command=sys.executable, args=(HOSTILE, mode, *args), env=env or {})


def run_with(config: ServerConfig, tmp_path: Path) -> McpRun:
    run = mcp_run([config], tmp_path)
    assert run is not None
    for connection in run.servers.connections.values():
        connection.connect_timeout = 60
    return run


LOAD = tool_turn(("ToolSearch", {"query": "select:mcp__h__poke,mcp__h__other"}))


async def results(run: McpRun, steps: list, tmp_path: Path, session: SessionLog | None = None) -> list[ToolResult]:
    agent = Agent(ScriptedModel(steps), tools=list(run.tools), hooks=(run.hook,), cwd=tmp_path, session=session)

    async def go() -> list[ToolResult]:
        return [e.result async for e in agent.run("go") if isinstance(e, ToolFinished)]

    try:
        return await asyncio.wait_for(go(), GUARD)
    finally:
        await agent.aclose()
        await run.servers.aclose()


async def test_a_crashed_server_is_started_again_and_its_tools_stay_known(tmp_path: Path) -> None:
    run = run_with(server("crash-first", str(tmp_path / "calls")), tmp_path)
    poke = tool_turn(("mcp__h__poke", {}))
    done = await results(run, [LOAD, poke, poke, tool_turn(("mcp__h__other", {})), text_turn("done")], tmp_path)
    search, crashed, again, other = done
    assert "mcp__h__poke" in search.text
    assert crashed.is_error and "stopped during tool poke" in crashed.text and "crashing" in crashed.text
    assert not again.is_error and again.text.startswith("alive"), again.text
    assert not other.is_error and other.text == again.text  # the same, restarted, server


@tool
async def pause(marker: str) -> str:
    """Wait until the server has exited, and a moment more for sagent to see it.

    Args:
        marker: the file the server touches as it exits
    """
    for _ in range(600):
        if Path(marker).exists():
            break
        await asyncio.sleep(0.05)
    await asyncio.sleep(1.0)
    return "waited"


async def test_a_server_that_exited_between_calls_is_started_again_before_the_next(tmp_path: Path) -> None:
    run = run_with(server("exit-idle", str(tmp_path / "exited")), tmp_path)
    pause_until = tool_turn(("pause", {"marker": str(tmp_path / "exited")}))
    steps = [LOAD, pause_until, tool_turn(("mcp__h__poke", {})), text_turn("done")]
    agent = Agent(ScriptedModel(steps), tools=[pause, *run.tools], hooks=(run.hook,), cwd=tmp_path)
    try:
        done = [e.result async for e in agent.run("go") if isinstance(e, ToolFinished)]
    finally:
        await agent.aclose()
        await run.servers.aclose()
    assert (tmp_path / "exited").exists()  # its first life ended on its own
    poke = done[-1]
    assert not poke.is_error and poke.text.startswith("alive"), poke.text


async def test_a_server_that_keeps_crashing_is_started_three_more_times_then_left(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    pids.mkdir()
    run = run_with(server("crash-always", env={"HOSTILE_PIDS": str(pids)}), tmp_path)
    poke = tool_turn(("mcp__h__poke", {}))
    done = await results(run, [LOAD, *[poke] * 6, text_turn("done")], tmp_path)
    calls = done[1:]
    assert len(list(pids.iterdir())) == 4  # the first start and three more
    assert all(r.is_error for r in calls)
    assert not any("unknown tool" in r.text for r in calls), [r.text for r in calls]
    assert all("stopped during tool poke" in r.text for r in calls[:4])
    assert all("MCP server h is not available" in r.text for r in calls[4:])


async def test_a_100_mb_result_is_cut_and_spilled(tmp_path: Path) -> None:
    size = 100_000_000
    run = run_with(server("huge", str(size)), tmp_path)
    log = SessionLog.create(tmp_path, {})
    done = await results(run, [LOAD, tool_turn(("mcp__h__poke", {})), text_turn("done")], tmp_path, log)
    log.close()
    result = done[1]
    assert not result.is_error, result.text[:500]
    assert len(result.text) <= MAX_OUTPUT
    assert log.session_dir is not None
    (spill,) = [p for p in (log.session_dir / "outputs").iterdir()]
    assert str(spill) in result.text
    assert spill.stat().st_size >= size
    assert oct(spill.stat().st_mode & 0o777) == "0o600"
    assert result.text.count("0123456789abcdef") > 100  # the head and tail of what it sent


@pytest.mark.parametrize("size", [1_000_000, 20_000_000], ids=["read whole", "over the message cap"])
async def test_a_huge_error_result_is_cut_and_spilled_too(tmp_path: Path, size: int) -> None:
    run = run_with(server("huge", str(size), "error"), tmp_path)
    log = SessionLog.create(tmp_path, {})
    done = await results(run, [LOAD, tool_turn(("mcp__h__poke", {})), text_turn("done")], tmp_path, log)
    log.close()
    result = done[1]
    assert len(result.text) <= MAX_OUTPUT + 1000
    assert log.session_dir is not None
    (spill,) = [p for p in (log.session_dir / "outputs").iterdir()]
    assert str(spill) in result.text and spill.stat().st_size >= size


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the peak memory from /proc")
def test_a_100_mb_result_is_read_in_bounded_memory(tmp_path: Path) -> None:
    """In a process of its own, so that its peak memory is its own."""
    script = f"""
import asyncio, sys
sys.path.insert(0, {str(Path(__file__).parents[2])!r})
from pathlib import Path
from tests.security.test_robust_mcp import server, run_with, results, LOAD
from sagent.providers.scripted import tool_turn, text_turn
from sagent.agent.session import SessionLog
tmp = Path({str(tmp_path)!r})
async def main():
    run = run_with(server("huge", "100000000"), tmp)
    log = SessionLog.create(tmp, {{}})
    done = await results(run, [LOAD, tool_turn(("mcp__h__poke", {{}})), text_turn("done")], tmp, log)
    assert not done[1].is_error, done[1].text[:300]
asyncio.run(main())
# VmHWM, the peak of this process's own memory since it started (ru_maxrss would also count what its parent,
# pytest, held when it forked this process: Linux carries that high-water mark across the exec)
print(int(next(l for l in open("/proc/self/status") if l.startswith("VmHWM:")).split()[1]) // 1024)
"""
    import subprocess

    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=GUARD,
        env={**os.environ, "XDG_DATA_HOME": str(tmp_path / "data")},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    peak_mb = int(done.stdout.split()[-1])
    print(f"peak memory with a 100 MB MCP result: {peak_mb} MB")
    assert peak_mb < 250  # the result is 100 MB: holding it (let alone parsing it) would pass this
