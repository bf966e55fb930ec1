"""SIGTERM ends a headless run promptly, whatever it waits on: an MCP server that never answers (and
ignores SIGTERM itself), or a hook that never returns. `sagent -p` in a subprocess against the fake
Anthropic server; the server and the hook are the user's own (their settings file), as a user sets them.
The bound asserted is generous (the issue's target is 2 s; the figure measured is printed)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response
from tests.security.test_robust_hooks import _survivors
from tests.security.test_robust_mcp import HOSTILE

MARK = uuid.uuid4().hex
BOUND = 10.0  # seconds: far above the 2 s target, so a loaded machine cannot fail it; the figure is printed


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def _start(fake: FakeAnthropic, tmp_path: Path, settings: dict) -> subprocess.Popen[bytes]:
    config = tmp_path / "config"
    (config / "sagent").mkdir(parents=True)
    (config / "sagent" / "settings.json").write_text(json.dumps(settings))
    project = tmp_path / "project"
    project.mkdir()
    env = {
        **os.environ,
        "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests-0001",
        "ANTHROPIC_BASE_URL": fake.url,
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(config),
        "HOOK_MARK": MARK,
    }
    (tmp_path / "pids").mkdir()
    return subprocess.Popen(
        [sys.executable, "-m", "sagent.cli.main", "-p", "go", "--cwd", str(project)],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _wait_for(path: Path, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 120
    while not path.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    if not path.exists():
        proc.kill()
        _, err = proc.communicate()
        pytest.fail(f"never got there: {err.decode()[-2000:]}")


def _terminate(proc: subprocess.Popen[bytes]) -> float:
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return float("inf")
    return time.monotonic() - started


def test_sigterm_ends_a_run_waiting_on_an_mcp_server_that_never_answers(tmp_path: Path) -> None:
    server_env = {"HOSTILE_PIDS": str(tmp_path / "pids"), "HOSTILE_CALLED": str(tmp_path / "called")}
    settings = {"mcpServers": {"h": {"command": sys.executable, "args": [HOSTILE, "hang"], "env": server_env}}}
    steps = [
        tool_use_response([("ToolSearch", {"query": "select:mcp__h__poke"})]),
        tool_use_response([("mcp__h__poke", {})]),
        text_response("never reached"),
    ]
    with FakeAnthropic(steps) as fake:
        proc = _start(fake, tmp_path, settings)
        _wait_for(tmp_path / "called", proc)
        took = _terminate(proc)
    print(f"SIGTERM to exit, waiting on a hung MCP server: {took:.2f} s")
    assert took < BOUND
    assert proc.returncode == 130
    time.sleep(0.5)
    survivors = [int(p.name) for p in (tmp_path / "pids").iterdir() if _alive(int(p.name))]
    for pid in survivors:
        os.kill(pid, signal.SIGKILL)
    assert survivors == []


@pytest.mark.parametrize("event", ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"])
def test_sigterm_ends_a_run_waiting_on_a_hook_that_never_returns(tmp_path: Path, event: str) -> None:
    marker = tmp_path / "called"
    hook = {"type": "command", "command": f"touch {marker}; setsid sleep 300 & exec sleep 300", "timeout": 600}
    settings = {"hooks": {event: [{"hooks": [hook]}]}}
    steps = [tool_use_response([("Bash", {"command": "echo hi"})]), text_response("never reached")]
    with FakeAnthropic(steps) as fake:
        proc = _start(fake, tmp_path, settings)
        _wait_for(marker, proc)
        took = _terminate(proc)
    print(f"SIGTERM to exit, waiting on a hung {event} hook: {took:.2f} s")
    assert took < BOUND
    assert proc.returncode == 130
    time.sleep(0.5)
    left = _survivors(MARK)  # the hook and its setsid child carry sagent's environment, and the mark in it
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert left == []


def test_sigterm_ends_a_run_reading_a_100_mb_mcp_result(tmp_path: Path) -> None:
    server_env = {"HOSTILE_PIDS": str(tmp_path / "pids"), "HOSTILE_CALLED": str(tmp_path / "called")}
    huge = {"command": sys.executable, "args": [HOSTILE, "huge", "100000000"], "env": server_env}
    steps = [
        tool_use_response([("ToolSearch", {"query": "select:mcp__h__poke"})]),
        tool_use_response([("mcp__h__poke", {})]),
        text_response("read it"),
    ]
    with FakeAnthropic(steps) as fake:
        proc = _start(fake, tmp_path, {"mcpServers": {"h": huge}})
        _wait_for(tmp_path / "called", proc)
        took = _terminate(proc)
    print(f"SIGTERM to exit, reading a 100 MB MCP result: {took:.2f} s")
    assert took < BOUND
    assert proc.returncode in (0, 130)  # it may have finished reading first
