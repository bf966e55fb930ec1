"""A folder a team wrote for Claude Code (skills, agents and commands in `.claude/`, and a plugin with its
own commands, agent, skill, hook and MCP server) used by sagent unchanged, headless, against the fake
Anthropic server: everything the files describe reaches the model, and what they ask to run runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sagent.cli.trust import trust
from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response

FOLDER = Path(__file__).parent / "claude_team"
NOTE_TOOL = "mcp__plugin_team-tools_notes__team_note"


def _system(body: dict[str, Any]) -> str:
    system = body.get("system") or ""
    return system if isinstance(system, str) else "".join(b.get("text", "") for b in system)


def _tool(body: dict[str, Any], name: str) -> dict[str, Any]:
    return next(t for t in body["tools"] if t.get("name") == name)


def _results(body: dict[str, Any]) -> str:
    """The text of the tool results the last user message of a request carries."""
    content = body["messages"][-1]["content"]
    return json.dumps([b for b in content if b.get("type") == "tool_result"])


@pytest.fixture
def team(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    if shutil.which("python3") is None:
        pytest.skip("the plugin's MCP server runs on python3")
    project = tmp_path / "project"
    shutil.copytree(FOLDER / "project", project)
    (project / ".git").mkdir()
    shutil.copytree(FOLDER / "team-tools", tmp_path / "team-tools")
    trust(project)
    env = {**os.environ, "HOME": str(tmp_path / "home"), "XDG_DATA_HOME": str(tmp_path / "data")}
    env.pop("ANTHROPIC_API_KEY", None)
    done = _sagent(["plugin", "install", str(tmp_path / "team-tools")], env, project)
    assert done.returncode == 0, done.stderr
    return project, env


def _sagent(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sagent.cli.main", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def test_a_claude_code_team_folder_works_unchanged(team: tuple[Path, dict[str, str]]) -> None:
    project, env = team
    steps = [
        tool_use_response([("Skill", {"skill": "release-notes"})]),
        tool_use_response([("AgentSpawn", {"agent": "code-reviewer", "prompt": "review the change", "label": "rev"})]),
        text_response("The change looks sound."),
        tool_use_response([(NOTE_TOOL, {"topic": "deploy"}), ("Skill", {"skill": "team-tools:changelog"})]),
        text_response("Hello, team."),
    ]
    with FakeAnthropic(steps) as fake:
        run_env = {**env, "ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL": fake.url}
        done = _sagent(["-p", "/team-tools:hello team", "--model", "claude-sonnet-4-6"], run_env, project)
        bodies = [r["body"] for r in fake.requests]
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Hello, team."
    first, after_skill, child, after_spawn, last = bodies

    # The plugin's command expanded; the skills and agents of both are offered by name, never their bodies.
    assert "Say hello to team and list what the team-tools plugin offers." in json.dumps(first["messages"])
    skill = _tool(first, "Skill")["description"]
    assert "release-notes" in skill and "team-tools:changelog" in skill and "Group them under" not in skill
    spawn = _tool(first, "AgentSpawn")["description"]
    assert "code-reviewer" in spawn and "team-tools:security-auditor" in spawn
    assert NOTE_TOOL in [t["name"] for t in first["tools"]]

    # A Skill call brings the body and says where the skill's other files are.
    loaded = _results(after_skill)
    assert "Group them under Added, Changed and Fixed" in loaded
    assert "scripts/collect.sh" in loaded and "references/style.md" in loaded

    # The agent file: its prompt, its tools, the parent's model (inherit).
    assert _system(child).startswith("You are a senior code reviewer ensuring high standards")
    assert [t["name"] for t in child["tools"]] == ["Read", "Grep", "Glob", "Bash"]
    assert child["model"] == first["model"] == "claude-sonnet-4-6"
    assert "The change looks sound." in _results(after_spawn)

    # The plugin's MCP server answered, and its skill loaded under the plugin's name.
    answered = _results(last)
    assert "Deploys go out on Tuesdays and Thursdays" in answered
    assert "Add entries under" in answered

    # The plugin's PostToolUse hook ran its script, found through ${CLAUDE_PLUGIN_ROOT}.
    logged = (project / ".team-tools.log").read_text().split()
    assert "Skill" in logged and "AgentSpawn" in logged


def test_the_projects_command_and_the_lists_name_what_the_folder_holds(team: tuple[Path, dict[str, str]]) -> None:
    project, env = team
    with FakeAnthropic([text_response("Three bullets.")]) as fake:
        run_env = {**env, "ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL": fake.url}
        done = _sagent(["-p", "/standup yesterday"], run_env, project)
        sent = json.dumps(fake.requests[0]["body"]["messages"])
    assert done.returncode == 0, done.stderr
    assert "Summarise the commits since yesterday for the team stand-up" in sent
    skills = _sagent(["skills"], env, project)
    assert "release-notes" in skills.stdout and "team-tools:changelog" in skills.stdout
    plugins = _sagent(["plugin", "list"], env, project)
    assert "team-tools" in plugins.stdout
