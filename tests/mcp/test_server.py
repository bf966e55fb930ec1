"""`sagent mcp serve` driven by the SDK's own MCP client, as Claude Code or any MCP host would drive it:
its tools, and a whole sagent run (`sagent_task`) against the fake Anthropic server."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response
from tests.mcp.conftest import free_port


def env_for(fake: FakeAnthropic, tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests-0001",
        "ANTHROPIC_BASE_URL": fake.url,
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }


async def exercise(session: ClientSession, project: Path) -> dict[str, Any]:
    await session.initialize()
    names = [t.name for t in (await session.list_tools()).tools]
    read = await session.call_tool("Read", {"path": "notes.txt"})
    bad = await session.call_tool("Read", {})
    task = await session.call_tool(
        "sagent_task", {"prompt": "what do the notes say?", "provider": "anthropic", "max_budget_usd": 0.5}
    )
    return {"names": names, "read": read, "bad": bad, "task": task}


def check(found: dict[str, Any], fake: FakeAnthropic) -> None:
    names = found["names"]
    assert {"Read", "Grep", "WebFetch", "PaperSearch", "sagent_task"} <= set(names)
    assert not {"AgentSpawn", "Jobs", "TodoWrite"} & set(names)
    assert "remember the milk" in found["read"].content[0].text and not found["read"].is_error
    assert found["bad"].is_error and "missing required argument" in found["bad"].content[0].text
    task = found["task"]
    assert not task.is_error, task.content
    summary = task.structured_content
    assert summary["answer"] == "The notes say: remember the milk."
    assert summary["status"] == "success" and summary["provider"] == "anthropic" and summary["turns"] == 2
    # Two responses of 100 input and 20 output tokens on claude-sonnet-4-6 ($3 / $15 per million).
    assert abs(summary["cost_usd"] - 2 * (100 * 3 + 20 * 15) / 1e6) < 1e-9
    # The sagent run read the file with its own tool: the model got the file in its second request.
    assert "remember the milk" in str(fake.requests[1]["body"]["messages"][-1])


def steps() -> list[Any]:
    return [
        tool_use_response([("Read", {"path": "notes.txt"})]),
        text_response("The notes say: remember the milk."),
    ]


async def test_serve_over_stdio_runs_tools_and_a_sagent_task(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("remember the milk\n")
    with FakeAnthropic(steps()) as fake:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "sagent.cli.main", "mcp", "serve", "--cwd", str(project)],
            env=env_for(fake, tmp_path),
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            found = await exercise(session, project)
        check(found, fake)


async def test_serve_over_streamable_http(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("remember the milk\n")
    port = free_port()
    with FakeAnthropic(steps()) as fake:
        server = subprocess.Popen(
            [sys.executable, "-m", "sagent.cli.main", "mcp", "serve", "--http", str(port), "--cwd", str(project)],
            env={**env_for(fake, tmp_path), "SAGENT_MCP_TOKEN": "a-token-for-the-tests-0123456789"},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            await asyncio.to_thread(wait_for_port, port, server)
            url = f"http://127.0.0.1:{port}/mcp"
            client = create_mcp_http_client(headers={"Authorization": "Bearer a-token-for-the-tests-0123456789"})
            async with (
                streamable_http_client(url, http_client=client) as (read, write),
                ClientSession(read, write) as session,
            ):
                found = await exercise(session, project)
        finally:
            server.terminate()
            server.wait(10)
        check(found, fake)


def wait_for_port(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            assert process.poll() is None, process.stderr.read() if process.stderr else "exited"
            time.sleep(0.1)
    raise AssertionError("sagent mcp serve --http did not listen")
