"""User hooks in the real REPL (tmux) against the fake Anthropic server: the project's settings file blocks a
Bash call, a broken hook is shown to the user, and a prompt hook's context reaches the model."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response
from tests.repl.tmux import HAVE_TMUX, Tmux
from tests.trusting import trust_in
from tests.userhooks.scripts import entry, script

pytestmark = pytest.mark.skipif(not HAVE_TMUX, reason="tmux is not installed")


def test_the_repl_runs_the_projects_hooks_and_shows_a_failing_one(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".sagent").mkdir(parents=True)
    hooks_dir = project / ".sagent" / "hooks"
    hooks_dir.mkdir()
    guard = script(hooks_dir, "guard.sh", 'echo "no rm here" >&2\nexit 2\n')
    broken = script(hooks_dir, "broken.sh", 'echo "broken hook" >&2\nexit 3\n')
    context = script(hooks_dir, "context.sh", 'echo "the branch is main"\n')
    settings = {
        "hooks": {
            "PreToolUse": [entry(guard, "Bash"), entry(broken)],
            "UserPromptSubmit": [entry(context)],
        }
    }
    (project / ".sagent" / "settings.json").write_text(json.dumps(settings))
    steps = [tool_use_response([("Bash", {"command": "rm -rf build"})]), text_response("Left the build alone.")]
    env = {
        **os.environ,
        "ANTHROPIC_API_KEY": "sk-ant-test",
        "ANTHROPIC_BASE_URL": "",
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(trust_in(tmp_path / "config", project).parents[1]),
        "TERM": "xterm-256color",
        "EDITOR": "true",
    }
    with FakeAnthropic(steps) as fake:
        env["ANTHROPIC_BASE_URL"] = fake.url
        with Tmux([], env, project) as term:
            term.wait_for("Esc interrupts")
            term.type("clean up")
            term.press("Enter")
            screen = term.wait_for("Left the build alone.")
            assert "broken.sh`: exited with 3: broken hook" in screen
            assert "no rm here" in screen
            requests = [r["body"] for r in fake.requests]
    first = json.dumps(requests[0]["messages"])
    assert "clean up" in first and "the branch is main" in first
    assert "denied: no rm here" in json.dumps(requests[1]["messages"][-1])
