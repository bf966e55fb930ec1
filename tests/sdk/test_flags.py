"""The command lines the Claude Agent SDKs build, given to sagent directly: what each flag does, what is
refused (exit 2, saying why), and what is accepted without a mechanism (said once on stderr)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response

SDK = ["--output-format", "stream-json", "--verbose", "--input-format", "stream-json"]
MCP_SERVER = str(Path(__file__).resolve().parents[1] / "fakes" / "mcp_server.py")


def run(args: list[str], fake: FakeAnthropic | None, tmp_path: Path, lines: list[dict[str, Any]] | None = None):
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data"), "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests-0001"}
    if fake is not None:
        env["ANTHROPIC_BASE_URL"] = fake.url
    stdin = "".join(json.dumps(line) + "\n" for line in lines or [])
    return subprocess.run(
        [sys.executable, "-m", "sagent", "--provider", "anthropic", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )


def user(text: str) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": text}}


def records(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--permission-prompt-tool", "mcp__approver__ask"], "--permission-prompt-tool mcp__approver__ask"),
        (["--system-prompt-file", "no-such-file.txt"], "--system-prompt-file no-such-file.txt"),
        (["--mcp-config", "{not json"], "--mcp-config: not JSON"),
        (["--settings", "[1, 2]"], "--settings"),
        (["--setting-sources", "user,team"], "unknown source(s) team"),
        (["--session-id", "../escape"], "--session-id"),
        (["--fork-session"], "--fork-session needs"),
        (["--max-turns", "0"], "--max-turns must be at least 1"),
        (["--permission-mode", "yolo"], "--permission-mode"),
    ],
)
def test_what_cannot_be_honoured_is_refused(args: list[str], says: str, tmp_path: Path) -> None:
    done = run([*SDK, *args], None, tmp_path, [user("hi")])
    assert done.returncode == 2 and says in done.stderr and done.stdout == ""


def test_asking_the_program_needs_stream_json_both_ways(tmp_path: Path) -> None:
    done = run(["-p", "hi", "--permission-prompt-tool", "stdio"], None, tmp_path)
    assert done.returncode == 2 and "needs --input-format stream-json" in done.stderr


def test_claude_codes_model_aliases_name_the_newest_of_their_line(tmp_path: Path) -> None:
    from sagent.providers.catalog import ALIASES

    with FakeAnthropic([text_response("ok")]) as fake:
        done = run([*SDK, "--model", "haiku"], fake, tmp_path, [user("hi")])
        body = fake.bodies()[0]
    assert done.returncode == 0, done.stderr
    assert body["model"] == ALIASES["haiku"] and records(done.stdout)[0]["model"] == ALIASES["haiku"]


def test_flags_without_a_mechanism_are_accepted_and_said_once(tmp_path: Path) -> None:
    extra = ["--betas", "a,b", "--fallback-model", "claude-haiku-4-5", "--task-budget", "1000", "--json-schema", "{}"]
    extra += ["--include-hook-events", "--thinking-display", "summarized"]
    with FakeAnthropic([text_response("ok")]) as fake:
        done = run([*SDK, *extra, "--debug-file", str(tmp_path / "d.log")], fake, tmp_path, [user("hi")])
    assert done.returncode == 0, done.stderr
    for flag in ("--betas", "--fallback-model", "--task-budget", "--json-schema", "--thinking-display"):
        assert done.stderr.count(f"sagent: note: {flag}") == 1, done.stderr
    assert "--debug-file" not in done.stderr  # changes nothing, needs no word
    assert records(done.stdout)[-1]["result"] == "ok"


def test_the_sdk_flags_reach_the_request(tmp_path: Path) -> None:
    (tmp_path / "prompt.txt").write_text("You answer in French.")
    args = ["--system-prompt-file", "prompt.txt", "--append-system-prompt", "Be brief.", "--model", "claude-opus-4-7"]
    args += ["--max-thinking-tokens", "2048", "--tools", "Read,LS,TodoWrite,NotebookEdit"]
    args += ["--effort", "max"]
    with FakeAnthropic([text_response("Bonjour.")]) as fake:
        done = run([*SDK, *args], fake, tmp_path, [user("hi")])
        body = fake.bodies()[0]
    assert done.returncode == 0, done.stderr
    system = body["system"] if isinstance(body["system"], str) else "".join(b["text"] for b in body["system"])
    assert system.startswith("You answer in French.\n\nBe brief.")
    assert body["model"] == "claude-opus-4-7" and body["thinking"]["budget_tokens"] == 2048
    assert body["output_config"] == {"effort": "max"}
    assert sorted(t["name"] for t in body["tools"] if t.get("name") in ("Read", "List", "Bash", "TodoWrite")) == [
        "List",
        "Read",
        "TodoWrite",
    ]
    assert "sagent has no tool NotebookEdit" in done.stderr


def test_max_turns_stops_the_run_as_claude_code_says_it(tmp_path: Path) -> None:
    steps = [tool_use_response([("List", {"path": "."})]) for _ in range(3)]
    with FakeAnthropic(steps) as fake:
        done = run([*SDK, "--max-turns", "1"], fake, tmp_path, [user("look around")])
    result = records(done.stdout)[-1]
    assert result["type"] == "result" and result["subtype"] == "error_max_turns" and done.returncode == 3


def test_mcp_config_servers_and_strict_mcp_config(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    server = {"command": sys.executable, "args": [MCP_SERVER, "basic"]}
    config = json.dumps({"mcpServers": {"fromsdk": server}})
    (tmp_path / "more.json").write_text(json.dumps({"mcpServers": {"fromfile": server}}))
    steps = [tool_use_response([("mcp__fromsdk__echo", {"text": "hi"})]), text_response("echoed")]
    with FakeAnthropic(steps) as fake:
        done = run(
            [
                *SDK,
                "--mcp-config",
                config,
                "--mcp-config",
                "more.json",
                "--strict-mcp-config",
                "--permission-mode",
                "bypassPermissions",
                "--tools",
                "",
            ],
            fake,
            tmp_path,
            [user("echo hi")],
        )
        bodies = fake.bodies()
    assert done.returncode == 0, done.stderr
    out = records(done.stdout)
    init = out[0]
    assert sorted(s["name"] for s in init["mcp_servers"]) == ["fromfile", "fromsdk"]
    assert "echo: hi" in json.dumps(bodies[1]) and out[-1]["result"] == "echoed"
    assert not any(t.get("name") == "Read" for t in bodies[0]["tools"])  # tools=[]: no built-in tools


@pytest.mark.parametrize(
    ("initialize", "starts"),
    [
        ({"systemPrompt": ["You are terse."]}, "You are terse."),
        ({"systemPrompt": ["You are terse.", "You like lists."]}, "You are terse.\n\nYou like lists."),
        ({"appendSystemPrompt": "Answer in French."}, None),  # the preset: sagent's own prompt, then this
    ],
)
def test_the_system_prompt_an_initialize_gives_replaces_sagents(
    initialize: dict[str, Any], starts: str | None, tmp_path: Path
) -> None:
    """The TypeScript SDK gives the system prompt in its initialize request, not on the command line."""
    request = {"type": "control_request", "request_id": "init-1", "request": {"subtype": "initialize", **initialize}}
    with FakeAnthropic([text_response("ok")]) as fake:
        done = run(SDK, fake, tmp_path, [request, user("hi")])
        body = fake.bodies()[0]
    assert done.returncode == 0, done.stderr
    answer = records(done.stdout)[0]
    assert answer["type"] == "control_response" and answer["response"]["request_id"] == "init-1"
    assert answer["response"]["subtype"] == "success" and answer["response"]["response"]["commands"]
    system = body["system"] if isinstance(body["system"], str) else "".join(b["text"] for b in body["system"])
    if starts is not None:
        assert system.startswith(starts)
    else:
        assert "Answer in French." in system and len(system) > 200  # sagent's own prompt came first
