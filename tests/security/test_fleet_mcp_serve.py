"""`sagent mcp serve`: over HTTP every request needs the server's bearer token (401 and nothing runs without
it), the generated token is written for its user alone, and over HTTP and stdio alike every tool call
(and `sagent_task`'s agent) is held to the server's permission policy."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response
from tests.mcp.conftest import free_port

TOKEN = "a-token-for-the-tests-0123456789"


def env_for(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {
        **os.environ,
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_RUNTIME_DIR": str(tmp_path / "no-such-runtime-dir"),
        **extra,
    }
    env.pop("SAGENT_MCP_TOKEN", None)
    env.update(extra)
    return env


class Server:
    """`sagent mcp serve --http PORT ...` in a subprocess, its stderr collected."""

    def __init__(self, tmp_path: Path, project: Path, *flags: str, **env: str) -> None:
        self.port = free_port()
        command = [sys.executable, "-m", "sagent.cli.main", "mcp", "serve", "--http", str(self.port)]
        self.process = subprocess.Popen(
            [*command, "--cwd", str(project), *flags],
            env=env_for(tmp_path, **env),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                httpx.get(self.url, timeout=1)
                return
            except httpx.TransportError:
                assert self.process.poll() is None, self.stderr
                time.sleep(0.1)
        raise AssertionError("sagent mcp serve --http did not listen")

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    @property
    def stderr(self) -> str:
        return "".join(self.lines)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(10)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "notes.txt").write_text("remember the milk\n")
    return folder


@pytest.fixture
def served(tmp_path: Path, project: Path) -> Iterator[Server]:
    server = Server(tmp_path, project, SAGENT_MCP_TOKEN=TOKEN)
    try:
        yield server
    finally:
        server.stop()


async def call(url: str, headers: dict[str, str], tool: str, arguments: dict[str, Any]) -> Any:
    client = create_mcp_http_client(headers=headers)
    async with streamable_http_client(url, http_client=client) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        return await s.call_tool(tool, arguments)


def touch(marker: Path) -> dict[str, Any]:
    return {"command": f"touch {marker}"}


def test_a_client_without_the_token_runs_nothing(served: Server, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    with pytest.raises(BaseException):  # noqa: B017 - the SDK's client fails as it likes on a 401
        asyncio.run(asyncio.wait_for(call(served.url, {}, "Bash", touch(marker)), 30))
    assert not marker.exists()


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
CALL = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "Bash", "arguments": {}}}
WRONG = {
    "no header": None,
    "empty": "",
    "the scheme alone": "Bearer",
    "the scheme and a space": "Bearer ",
    "another token": "Bearer another-token-0123456789abcdef",
    "the token without its scheme": TOKEN,
    "a prefix of the token": f"Bearer {TOKEN[:-1]}",
    "the token and more": f"Bearer {TOKEN}x",
    "the token twice": f"Bearer {TOKEN} {TOKEN}",
    "basic auth": "Basic " + TOKEN,
    "a newline after the token": f"Bearer {TOKEN}\n",
}


def raw_post(port: int, authorization: bytes | None, body: dict[str, Any]) -> tuple[int, str]:
    """POST `body` to /mcp as raw bytes (so header values no client library would send get through too)."""
    content = json.dumps(body).encode()
    head = [
        b"POST /mcp HTTP/1.1",
        f"Host: 127.0.0.1:{port}".encode(),
        b"Accept: application/json, text/event-stream",
        b"Content-Type: application/json",
        f"Content-Length: {len(content)}".encode(),
        b"Connection: close",
    ]
    if authorization is not None:
        head.append(b"Authorization: " + authorization)
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(b"\r\n".join(head) + b"\r\n\r\n" + content)
        received = b""
        deadline = time.monotonic() + 30  # an answer that streams on (an open SSE stream) is read no longer
        while time.monotonic() < deadline and (chunk := sock.recv(65536)):
            received += chunk
    status = int(received.split(b" ", 2)[1]) if received.startswith(b"HTTP/") else 0
    return status, received.decode(errors="replace")


WRONG: dict[str, bytes | None] = {
    "no header": None,
    "empty": b"",
    "the scheme alone": b"Bearer",
    "the scheme and a space": b"Bearer ",
    "another token": b"Bearer another-token-0123456789abcdef",
    "the token without its scheme": TOKEN.encode(),
    "a prefix of the token": f"Bearer {TOKEN[:-1]}".encode(),
    "the token and more": f"Bearer {TOKEN}x".encode(),
    "the token twice": f"Bearer {TOKEN} {TOKEN}".encode(),
    "two spaces": f"Bearer  {TOKEN}".encode(),
    "basic auth": b"Basic " + TOKEN.encode(),
    "the token in capitals": f"Bearer {TOKEN.upper()}".encode(),
    "a NUL after the token": f"Bearer {TOKEN}".encode() + b"\x00",
    "non-ASCII": "Bearer tökén".encode(),
}


@pytest.mark.parametrize("form", list(WRONG), ids=list(WRONG))
def test_a_request_without_the_right_token_gets_401(served: Server, tmp_path: Path, form: str) -> None:
    marker = tmp_path / "ran"
    for body in (INITIALIZE, {**CALL, "params": {"name": "Bash", "arguments": touch(marker)}}):
        status, text = raw_post(served.port, WRONG[form], body)
        assert status in (400, 401), (form, text)  # 400: the HTTP server itself refused a malformed header
        if status == 401:
            assert "SAGENT_MCP_TOKEN" in text
    assert not marker.exists()


def test_the_common_wrong_tokens_get_401_exactly(served: Server) -> None:
    for value in (None, b"Bearer wrong-token-0123456789", TOKEN.encode(), f"Bearer {TOKEN[:-1]}".encode()):
        assert raw_post(served.port, value, INITIALIZE)[0] == 401, value


def test_the_right_token_works_and_the_scheme_is_case_blind(served: Server, project: Path) -> None:
    for scheme in ("Bearer", "bearer"):
        read = asyncio.run(call(served.url, {"Authorization": f"{scheme} {TOKEN}"}, "Read", {"path": "notes.txt"}))
        assert not read.is_error and "remember the milk" in read.content[0].text


def test_a_generated_token_is_written_for_its_user_alone_and_removed_at_exit(tmp_path: Path, project: Path) -> None:
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    server = Server(tmp_path, project, XDG_RUNTIME_DIR=str(runtime))
    try:
        line = next(line for line in server.lines if "Authorization: Bearer" in line)
        path = Path(line.split("the token is in ", 1)[1].split(" (", 1)[0])
        assert path.parent == runtime / "sagent"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        token = path.read_text().strip()
        assert len(token) >= 32 and token not in server.stderr  # the path is printed, never the token
        read = asyncio.run(call(server.url, {"Authorization": f"Bearer {token}"}, "Read", {"path": "notes.txt"}))
        assert "remember the milk" in read.content[0].text
        with httpx.Client() as client:
            assert client.post(server.url, json=INITIALIZE).status_code == 401
    finally:
        server.stop()
    assert not path.exists()


def test_a_runtime_folder_open_to_others_is_not_used_for_the_token(tmp_path: Path, project: Path) -> None:
    runtime = tmp_path / "shared-runtime"
    runtime.mkdir()
    runtime.chmod(0o777)
    server = Server(tmp_path, project, XDG_RUNTIME_DIR=str(runtime))
    try:
        line = next(line for line in server.lines if "Authorization: Bearer" in line)
        path = Path(line.split("the token is in ", 1)[1].split(" (", 1)[0])
        assert runtime not in path.parents and (tmp_path / "data") in path.parents
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    finally:
        server.stop()


def test_a_short_token_in_the_environment_is_refused(tmp_path: Path, project: Path) -> None:
    command = [sys.executable, "-m", "sagent.cli.main", "mcp", "serve", "--http", str(free_port())]
    done = subprocess.run(
        [*command, "--cwd", str(project)],
        env=env_for(tmp_path, SAGENT_MCP_TOKEN="short"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "SAGENT_MCP_TOKEN must be at least 16 characters" in done.stderr


POLICIES = {
    "Bash denied": (("--disallowedTools", "Bash"), "Bash"),
    "a Bash rule denied": (("--disallowedTools", "Bash(touch:*)"), "Bash"),
    "plan mode": (("--permission-mode", "plan"), "Bash"),
    "plan mode writes": (("--permission-mode", "plan"), "Write"),
    "Write denied": (("--disallowedTools", "Write"), "Write"),
    "headless deny asks nothing": ((), "Write"),  # default mode asks (a sandboxed Bash would not); settings: deny
}


def arguments_for(tool: str, marker: Path) -> dict[str, Any]:
    return touch(marker) if tool == "Bash" else {"path": str(marker), "content": "x"}


def settings_for(tmp_path: Path, case: str) -> None:
    config = tmp_path / "config" / "sagent"
    config.mkdir(parents=True, exist_ok=True)
    headless = "deny" if case == "headless deny asks nothing" else "allow"
    (config / "settings.json").write_text(json.dumps({"permissions": {"headlessDefault": headless}}))


@pytest.mark.parametrize("case", list(POLICIES), ids=list(POLICIES))
def test_a_denied_tool_is_refused_over_http(tmp_path: Path, project: Path, case: str) -> None:
    flags, tool = POLICIES[case]
    settings_for(tmp_path, case)
    marker = tmp_path / "ran"
    server = Server(tmp_path, project, *flags, SAGENT_MCP_TOKEN=TOKEN)
    try:
        result = asyncio.run(call(server.url, {"Authorization": f"Bearer {TOKEN}"}, tool, arguments_for(tool, marker)))
    finally:
        server.stop()
    assert result.is_error and "denied" in result.content[0].text
    assert not marker.exists()


def call_over_stdio(
    project: Path, flags: tuple[str, ...], env: dict[str, str], tool: str, arguments: dict[str, Any]
) -> Any:
    """One call of `tool` on `sagent mcp serve --cwd project FLAGS` over stdio, the server started for it."""

    async def go() -> Any:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "sagent.cli.main", "mcp", "serve", "--cwd", str(project), *flags],
            env=env,
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await session.call_tool(tool, arguments)

    return asyncio.run(go())


@pytest.mark.parametrize("case", list(POLICIES), ids=list(POLICIES))
def test_a_denied_tool_is_refused_over_stdio(tmp_path: Path, project: Path, case: str) -> None:
    flags, tool = POLICIES[case]
    settings_for(tmp_path, case)
    marker = tmp_path / "ran"
    result = call_over_stdio(project, flags, env_for(tmp_path), tool, arguments_for(tool, marker))
    assert result.is_error and "denied" in result.content[0].text
    assert not marker.exists()


def test_sagent_task_runs_under_the_servers_policy(tmp_path: Path, project: Path) -> None:
    marker = tmp_path / "ran"
    steps = [tool_use_response([("Bash", touch(marker))]), text_response("could not")]
    with FakeAnthropic(steps) as fake:
        env = env_for(tmp_path, ANTHROPIC_API_KEY="sk-ant-fake-key-for-tests-0001", ANTHROPIC_BASE_URL=fake.url)
        task = {"prompt": "touch it", "provider": "anthropic"}
        result = call_over_stdio(project, ("--disallowedTools", "Bash"), env, "sagent_task", task)
        assert not result.is_error, result.content
        assert "denied" in str(fake.requests[1]["body"]["messages"][-1])
    assert not marker.exists()


@pytest.mark.parametrize(
    ("flags", "settings", "written"),
    [
        ((), None, True),  # the default sandbox: workspace-write
        (("--sandbox", "read-only"), None, False),
        ((), {"mode": "read-only"}, False),  # the user's settings file
        (("--sandbox", "workspace-write"), {"mode": "read-only"}, True),  # the flag wins
    ],
    ids=["default", "flag read-only", "settings read-only", "flag over settings"],
)
def test_served_bash_runs_in_the_servers_sandbox(
    tmp_path: Path, project: Path, flags: tuple[str, ...], settings: dict[str, Any] | None, written: bool
) -> None:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed (apt-get install bubblewrap); .ci/run installs it")
    config = tmp_path / "config" / "sagent"
    config.mkdir(parents=True, exist_ok=True)
    user: dict[str, Any] = {"permissions": {"headlessDefault": "allow"}}
    if settings is not None:
        user["sandbox"] = settings
    (config / "settings.json").write_text(json.dumps(user))
    marker = project / "ran"  # inside the project: only the sandbox's mode decides
    result = call_over_stdio(project, flags, env_for(tmp_path), "Bash", touch(marker))
    assert marker.exists() is written, result.content[0].text


def test_a_sandbox_setting_that_cannot_be_used_stops_the_server_with_one_line(tmp_path: Path, project: Path) -> None:
    config = tmp_path / "config" / "sagent"
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.json").write_text(json.dumps({"sandbox": {"mode": "wide-open"}}))
    done = subprocess.run(
        [sys.executable, "-m", "sagent.cli.main", "mcp", "serve", "--cwd", str(project)],
        env=env_for(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "sandbox.mode" in done.stderr and "Traceback" not in done.stderr
