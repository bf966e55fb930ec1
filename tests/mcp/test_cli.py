"""`sagent mcp list|get|add|remove`, and `sagent -p` with a project's `.mcp.json`, run as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sagent.mcp.config import McpConfigError, expand, parse_servers
from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response
from tests.mcp.conftest import SERVER
from tests.trusting import trust_in


def sagent(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sagent.cli.main", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        timeout=180,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    return root


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    trust_in(tmp_path / "config", tmp_path)  # the user trusts the folder: its .mcp.json applies
    return {
        **os.environ,
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "MCP_TIMEOUT": "60000",
    }


def write_mcp_json(project: Path, servers: dict) -> None:
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))


def test_a_headless_run_uses_a_project_server_and_reports_one_that_fails(
    project: Path, env: dict[str, str], tmp_path: Path
) -> None:
    write_mcp_json(
        project,
        {
            "basic": {"command": sys.executable, "args": [SERVER, "basic"]},
            "broken": {"command": str(tmp_path / "no-such-program")},
        },
    )
    steps = [
        tool_use_response([("ToolSearch", {"query": "echo"})]),
        tool_use_response([("mcp__basic__echo", {"text": "through MCP"})]),
        text_response("done"),
    ]
    with FakeAnthropic(steps) as fake:
        env = {**env, "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests-0001", "ANTHROPIC_BASE_URL": fake.url}
        out = sagent(["-p", "use the echo tool", "--output-format", "stream-json"], env, project)
        bodies = [r["body"] for r in fake.requests]
    assert out.returncode == 0, out.stderr
    assert "sagent: warning: MCP server broken failed:" in out.stderr
    results = [r["message"]["content"][0] for r in map(json.loads, out.stdout.splitlines()) if r["type"] == "user"]
    assert results[-1]["content"] == "echo: through MCP" and not results[-1]["is_error"]
    first = [t["name"] for t in bodies[0]["tools"]]
    assert {"ToolSearch", "ListMcpResources", "ReadMcpResource"} <= set(first)
    assert "mcp__basic__echo" in first  # the run waited for its servers: their tools are in the first request


def test_a_headless_run_offers_its_servers_tools_from_the_first_request(project: Path, env: dict[str, str]) -> None:
    write_mcp_json(project, {"echo": {"command": sys.executable, "args": [SERVER, "basic"]}})
    steps = [tool_use_response([("mcp__echo__echo", {"text": "shout"})]), text_response("done")]
    with FakeAnthropic(steps) as fake:
        env = {**env, "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests-0001", "ANTHROPIC_BASE_URL": fake.url}
        out = sagent(["-p", "use the echo server", "--output-format", "stream-json"], env, project)
        bodies = [r["body"] for r in fake.requests]
    assert out.returncode == 0, out.stderr
    assert "mcp__echo__echo" in [t["name"] for t in bodies[0]["tools"]]
    results = [r["message"]["content"][0] for r in map(json.loads, out.stdout.splitlines()) if r["type"] == "user"]
    assert results[0]["content"] == "echo: shout" and not results[0]["is_error"]


def test_a_bad_mcp_json_is_one_line_naming_the_file_and_key(project: Path, env: dict[str, str]) -> None:
    write_mcp_json(project, {"x": {"command": "srv", "args": "not-a-list"}})
    out = sagent(["-p", "hi"], env, project)
    assert out.returncode == 2
    assert out.stderr.strip() == (
        f'sagent: error: {project / ".mcp.json"}: key "mcpServers.x.args": must be a list of strings, not "not-a-list"'
    )


def test_add_list_get_remove(project: Path, env: dict[str, str]) -> None:
    added = sagent(
        [
            "mcp",
            "add",
            "--scope",
            "project",
            "-e",
            "MODE=${MODE:-test}",
            "basic",
            "--",
            sys.executable,
            SERVER,
            "basic",
        ],
        env,
        project,
    )
    assert added.returncode == 0, added.stderr
    saved = json.loads((project / ".mcp.json").read_text())
    assert saved == {
        "mcpServers": {
            "basic": {"command": sys.executable, "args": [SERVER, "basic"], "env": {"MODE": "${MODE:-test}"}}
        }
    }
    remote = sagent(
        [
            "mcp",
            "add",
            "--transport",
            "http",
            "--scope",
            "user",
            "-H",
            "Authorization: Bearer t",
            "web",
            "http://127.0.0.1:9/mcp",
        ],
        env,
        project,
    )
    assert remote.returncode == 0, remote.stderr
    user_file = Path(env["XDG_CONFIG_HOME"]) / "sagent" / "settings.json"
    assert json.loads(user_file.read_text())["mcpServers"]["web"]["headers"] == {"Authorization": "Bearer t"}

    listed = sagent(["mcp", "list"], {**env, "MCP_TIMEOUT": "30000"}, project)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0] == f"basic: {sys.executable} {SERVER} basic - connected, 6 tools"
    assert lines[1].startswith("web: http://127.0.0.1:9/mcp (http) - failed:")

    got = sagent(["mcp", "get", "basic"], env, project)
    assert got.returncode == 0, got.stderr
    assert "  tool       mcp__basic__echo" in got.stdout and "  prompt     /mcp__basic__review" in got.stdout

    assert sagent(["mcp", "remove", "web"], env, project).returncode == 0
    assert "web" not in json.loads(user_file.read_text())["mcpServers"]
    gone = sagent(["mcp", "remove", "web"], env, project)
    assert gone.returncode == 1 and "no MCP server named 'web'" in gone.stderr


@pytest.mark.parametrize(
    "argv, message",
    [
        (["mcp", "add", "x"], "the following arguments are required: target"),
        (["mcp", "add", "--transport", "http", "x", "ftp://h"], "must be an http:// or https:// address"),
        (["mcp", "add", "bad name", "srv"], "a server name is 1 to 48 letters"),
        (["mcp", "add", "-e", "NOEQUALS", "x", "srv"], "--env takes KEY=VALUE"),
        (["mcp", "frobnicate"], "unknown command 'frobnicate'"),
        (["mcp", "serve", "--http", "99999"], "--http takes a port from 1 to 65535"),
        (["mcp", "serve", "--max-budget-usd", "nan"], "--max-budget-usd must be a positive number"),
        (["mcp", "get"], "the following arguments are required: name"),
    ],
)
def test_bad_mcp_commands_are_one_line(project: Path, env: dict[str, str], argv: list[str], message: str) -> None:
    out = sagent(argv, env, project)
    assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr


def test_variables_are_expanded_and_a_missing_one_is_an_error() -> None:
    assert expand("${A}-${B:-two}", "f", {"A": "one"}) == "one-two"
    with pytest.raises(McpConfigError, match=r"\$\{TOKEN\} is not set"):
        expand("Bearer ${TOKEN}", "f", {})
    warnings: list[str] = []
    (server,) = parse_servers({"s": {"type": "sse", "url": "http://h/sse", "oauth": {}}}, ".mcp.json", warnings)
    assert server.transport == "sse" and warnings == ['.mcp.json: unknown key "mcpServers.s.oauth" is ignored']
    with pytest.raises(McpConfigError, match=r'key "mcpServers\.s": needs a "command"'):
        parse_servers({"s": {"url": "http://h"}}, ".mcp.json")


def test_a_bad_server_in_a_settings_file_names_that_file(project: Path, env: dict[str, str]) -> None:
    settings = project / ".sagent" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"mcpServers": {"web": {"type": "http", "headers": {"X": 1}}}}))
    out = sagent(["-p", "hi"], env, project)
    assert out.returncode == 2
    assert out.stderr.strip() == f'sagent: error: {settings}: key "mcpServers.web.url": must be a string, not null'


def test_serve_on_a_port_already_taken_is_one_line(project: Path, env: dict[str, str]) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out = sagent(["mcp", "serve", "--http", str(port)], env, project)
    assert out.returncode == 1
    assert out.stderr == f"sagent: error: cannot serve on 127.0.0.1:{port}: Address already in use\n"


def test_a_headless_runs_init_record_lists_its_servers_tools(project: Path, env: dict[str, str]) -> None:
    write_mcp_json(project, {"echo": {"command": sys.executable, "args": [SERVER, "basic"]}})
    with FakeAnthropic([text_response("done")]) as fake:
        env = {**env, "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests-0001", "ANTHROPIC_BASE_URL": fake.url}
        out = sagent(["-p", "hello", "--output-format", "stream-json", "--verbose"], env, project)
    assert out.returncode == 0, out.stderr
    init = json.loads(out.stdout.splitlines()[0])
    assert init["subtype"] == "init" and "mcp__echo__echo" in init["tools"]
    assert {"name": "echo", "status": "connected"} in init["mcp_servers"]
