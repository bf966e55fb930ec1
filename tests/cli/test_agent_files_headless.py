"""`sagent -p` in a project with a Claude Code agent file, against the fake Anthropic server: the main request
offers the agent, and the sub-agent's request carries exactly the file's prompt, its tools and its model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from sagent.cli.trust import trust
from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response

REVIEWER = """---
name: reviewer
description: Reviews a change for bugs; use after editing code.
tools: Read, Grep, LS, TodoWrite
model: haiku
color: red
---
You are a careful reviewer. Reply in one line.
"""


def _system(body: dict[str, Any]) -> str:
    system = body.get("system") or ""
    return system if isinstance(system, str) else "".join(b.get("text", "") for b in system)


def _sagent(repo: Path, fake: FakeAnthropic, tmp_path: Path, *more: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "ANTHROPIC_API_KEY": "sk-ant-test",
        "ANTHROPIC_BASE_URL": fake.url,
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "HOME": str(tmp_path / "home"),
    }
    return subprocess.run(
        [sys.executable, "-m", "sagent.cli.main", "-p", "review my change", "--model", "claude-sonnet-4-6", *more],
        capture_output=True,
        text=True,
        env=env,
        cwd=repo,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".claude" / "agents").mkdir(parents=True)
    (repo / ".claude" / "agents" / "reviewer.md").write_text(REVIEWER)
    (repo / ".claude" / "agents" / "broken.md").write_text("---\nname: broken\n---\nno description\n")
    return repo


def test_sagent_p_spawns_a_claude_code_agent_file(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    trust(repo)
    call = ("AgentSpawn", {"agent": "reviewer", "prompt": "review a.py", "label": "rev"})
    with FakeAnthropic([tool_use_response([call]), text_response("no bugs"), text_response("all good")]) as fake:
        out = _sagent(repo, fake, tmp_path, "--output-format", "stream-json", "--verbose")
        bodies = [r["body"] for r in fake.requests]
    assert out.returncode == 0, out.stderr
    records = [json.loads(line) for line in out.stdout.splitlines()]
    assert records[0]["subtype"] == "init" and records[0]["agents"] == ["reviewer"]
    assert records[-1]["result"] == "all good"
    assert "agent file" in out.stderr and "broken.md" in out.stderr and "description" in out.stderr
    main, child = bodies[0], bodies[1]
    spawn = next(t for t in main["tools"] if t["name"] == "AgentSpawn")
    assert "- reviewer: Reviews a change for bugs; use after editing code." in spawn["description"]
    assert spawn["input_schema"]["properties"]["agent"]["enum"] == ["reviewer"]
    assert _system(child).startswith("You are a careful reviewer. Reply in one line.")
    assert 'You are the sub-agent "rev"' in _system(child)
    assert [t["name"] for t in child["tools"]] == ["Read", "Grep", "List", "TodoWrite"]
    assert child["model"] == "claude-haiku-4-5" and main["model"] == "claude-sonnet-4-6"
    assert "no bugs" in str(bodies[2]["messages"][-1])


def test_an_untrusted_project_offers_no_agent_and_says_why(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    with FakeAnthropic([text_response("hello")]) as fake:
        out = _sagent(repo, fake, tmp_path)
        main = fake.requests[0]["body"]
    assert out.returncode == 0, out.stderr
    # No agent to list: AgentSpawn is offered on demand, and never with an `agent` to start by name.
    assert all("agent" not in t["input_schema"]["properties"] for t in main["tools"] if t["name"] == "AgentSpawn")
    assert "not trusted" in out.stderr and f"sagent trust {repo}" in out.stderr
    assert ".claude/agents" in out.stderr and out.stderr.count("not trusted") == 1


def test_agents_json_on_the_command_line_joins_the_files(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    trust(repo)
    given = {"tester": {"description": "Runs the tests.", "prompt": "You run tests.", "tools": ["Bash"]}}
    call = ("AgentSpawn", {"agent": "tester", "prompt": "run them", "label": "t"})
    with FakeAnthropic([tool_use_response([call]), text_response("2 passed"), text_response("green")]) as fake:
        out = _sagent(repo, fake, tmp_path, "--agents", json.dumps(given))
        bodies = [r["body"] for r in fake.requests]
    assert out.returncode == 0, out.stderr
    spawn = next(t for t in bodies[0]["tools"] if t["name"] == "AgentSpawn")
    assert spawn["input_schema"]["properties"]["agent"]["enum"] == ["reviewer", "tester"]
    assert _system(bodies[1]).startswith("You run tests.") and [t["name"] for t in bodies[1]["tools"]] == ["Bash"]


def test_agents_that_are_not_a_json_object_are_bad_usage(tmp_path: Path) -> None:
    with FakeAnthropic([]) as fake:
        out = _sagent(_repo(tmp_path), fake, tmp_path, "--agents", "[1, 2]")
    assert out.returncode == 2 and "--agents: give a JSON object" in out.stderr
