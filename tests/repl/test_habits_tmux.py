"""/status, /config, /init, /doctor and `# note` in the real REPL, in a real terminal (tmux), against the fake
Anthropic server, as a user coming from Claude Code or pi types them."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response
from tests.repl.tmux import HAVE_TMUX, Tmux

pytestmark = pytest.mark.skipif(not HAVE_TMUX, reason="tmux is not installed")

SECRET = "sk-ant-tmux-secret-0123456789"


def env_for(fake: FakeAnthropic, tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "ANTHROPIC_API_KEY": SECRET,
        "ANTHROPIC_BASE_URL": fake.url,
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "TERM": "xterm-256color",
        "EDITOR": "true",
    }


@pytest.fixture
def project(tmp_path: Path, trust_tmp_path: None) -> Path:
    """A trusted project whose settings let Write run unasked (tests/repl/test_permissions_tmux.py is about
    the questions)."""
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / ".sagent").mkdir()
    (root / ".sagent" / "settings.json").write_text('{"permissions": {"allow": ["Write"]}}')
    (root / "README.md").write_text("# demo\nRun `make test`.\n")
    return root


def user_texts(body: dict) -> list[str]:
    return [
        block.get("text", "")
        for message in body["messages"]
        if message["role"] == "user"
        for block in (message["content"] if isinstance(message["content"], list) else [])
        if block.get("type") == "text"
    ]


def test_status_and_config_in_the_repl(project: Path, tmp_path: Path) -> None:
    with FakeAnthropic([]) as fake, Tmux([], env_for(fake, tmp_path), project, width=140, height=50) as term:
        term.wait_for("Esc interrupts")
        term.type("/status")
        term.press("Enter")
        screen = term.wait_for("settings files")
        term.wait_for("  local ")
        screen = term.screen()
        assert "ANTHROPIC_API_KEY (set, from the environment)" in screen
        assert SECRET not in screen
        assert "claude-sonnet-4-6" in screen and "workspace-write" in screen
        assert f"project  {project / '.sagent' / 'settings.json'}  (loaded)" in screen
        assert str(tmp_path / "data") in screen  # the session's log file

        term.type("/config set model claude-opus-4-8")
        term.press("Enter")
        term.wait_for("switched to anthropic/claude-opus-4-8")
        user = Path(os.environ["XDG_CONFIG_HOME"]) / "sagent" / "settings.json"  # the user's file by default
        assert json.loads(user.read_text()) == {"model": "claude-opus-4-8"}
        term.type("/config set maxTokens lots")
        term.press("Enter")
        term.wait_for("/config: not saved:")
        assert json.loads(user.read_text()) == {"model": "claude-opus-4-8"}
        term.type("/config set effort high --scope local")
        term.press("Enter")
        term.wait_for('effort is "high" in this REPL now')
        assert json.loads((project / ".sagent" / "settings.local.json").read_text()) == {"effort": "high"}
        term.type("/config get modle")
        term.press("Enter")
        term.wait_for('did you mean "model"?')
        assert fake.requests == []  # none of it reached the model


def test_init_writes_agents_md_and_a_hash_note_adds_to_it(project: Path, tmp_path: Path) -> None:
    written = "# demo\n\n- Test: `make test`\n"
    steps = [
        tool_use_response([("Read", {"path": "README.md"})]),
        tool_use_response([("Write", {"path": "AGENTS.md", "content": written})]),
        text_response("AGENTS.md is written."),
        text_response("Noted."),
    ]
    with FakeAnthropic(steps) as fake, Tmux([], env_for(fake, tmp_path), project, width=140, height=50) as term:
        term.wait_for("Esc interrupts")
        term.type("/init")
        term.press("Enter")
        term.wait_for(f"/init: writing {project / 'AGENTS.md'}")
        term.wait_for("AGENTS.md is written.")
        assert (project / "AGENTS.md").read_text() == written
        assert "Look at this repository" in user_texts(fake.requests[0]["body"])[-1]

        term.type("# always run make lint")
        term.press("Enter")
        term.wait_for(f"added to {project / 'AGENTS.md'}")
        assert (project / "AGENTS.md").read_text() == written + "- always run make lint\n"
        assert len(fake.requests) == 3  # the note went to no model

        term.type("hello")
        term.press("Enter")
        term.wait_for("Noted.")
        assert user_texts(fake.requests[3]["body"])[-1] == "hello"
        assert not any("make lint" in text for text in user_texts(fake.requests[3]["body"]))


def test_doctor_in_the_repl_names_each_check(project: Path, tmp_path: Path) -> None:
    with FakeAnthropic([]) as fake, Tmux([], env_for(fake, tmp_path), project, width=140, height=50) as term:
        term.wait_for("Esc interrupts")
        term.type("/doctor")
        term.press("Enter")
        screen = term.wait_for("a model ")
        for name in ("install", "API keys", "claude CLI", "sandbox", "ripgrep", "NATS", "local model"):
            assert name in screen
        assert SECRET not in screen
        term.wait_for("ready")
