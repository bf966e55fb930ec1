"""`/agents` in the real REPL (tmux) lists the sub-agents defined in files: name, origin, description, model
and tools, with a broken file named and said why."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic
from tests.repl.tmux import HAVE_TMUX, Tmux
from tests.trusting import trust_in

pytestmark = pytest.mark.skipif(not HAVE_TMUX, reason="tmux is not installed")


def test_slash_agents_lists_the_agent_files(tmp_path: Path) -> None:
    project = tmp_path / "project"
    agents = project / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews a change for bugs.\ntools: Read, Grep\nmodel: haiku\n"
        "permissionMode: plan\n---\nYou review.\n"
    )
    (agents / "nodesc.md").write_text("---\nname: nodesc\n---\nBody.\n")
    config = tmp_path / "config"
    trust_in(config, project)
    with FakeAnthropic([]) as fake:
        env = {
            **os.environ,
            "ANTHROPIC_API_KEY": "sk-ant-test",
            "ANTHROPIC_BASE_URL": fake.url,
            "XDG_DATA_HOME": str(tmp_path / "data"),
            "XDG_CONFIG_HOME": str(config),
            "HOME": str(tmp_path / "home"),
            "TERM": "xterm-256color",
        }
        with Tmux([], env, project, height=40) as term:
            term.wait_for("Esc interrupts")
            term.type("/agents")
            term.press("Enter")
            screen = term.wait_for("agent files (AgentSpawn starts them by name)")
            screen = term.wait_for("cannot be used")
    assert "reviewer (.claude): Reviews a change for bugs." in screen
    assert "model haiku; Read, Grep; permissionMode plan" in screen
    assert "nodesc.md" in screen and "description" in screen
    assert "no sub-agents; the agent starts them with AgentSpawn" in screen
