"""Custom slash commands in the real REPL (tmux) against the fake Anthropic server: typed, completed, listed
in /help, expanded into the prompt the server receives, and limited to their allowed tools."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response
from tests.repl.test_repl_tmux import user_texts
from tests.repl.tmux import HAVE_TMUX, Tmux
from tests.trusting import trust_in

pytestmark = pytest.mark.skipif(not HAVE_TMUX, reason="tmux is not installed")


def test_a_custom_command_expands_into_the_prompt_and_keeps_to_its_tools(tmp_path: Path) -> None:
    project = tmp_path / "project"
    commands = project / ".sagent" / "commands"
    (commands / "git").mkdir(parents=True)
    (commands / "review.md").write_text(
        "---\ndescription: review one file\nargument-hint: FILE\nallowed-tools: Read\n---\n"
        "Review $1 for bugs; focus on $ARGUMENTS.\n"
    )
    (commands / "git" / "log.md").write_text("Summarise the git log.")
    (commands / "help.md").write_text("this one is hidden by the built-in /help")
    (project / "app.py").write_text("print('hi')\n")
    config = tmp_path / "config"
    trust_in(config, project)  # the user trusts the folder: its commands are offered
    steps = [
        tool_use_response([("Read", {"path": "app.py"}), ("Bash", {"command": "echo sneaky"})]),
        text_response("Reviewed: app.py looks fine."),
    ]
    with FakeAnthropic(steps) as fake:
        env = {
            **os.environ,
            "ANTHROPIC_API_KEY": "sk-ant-test",
            "ANTHROPIC_BASE_URL": fake.url,
            "XDG_DATA_HOME": str(tmp_path / "data"),
            "XDG_CONFIG_HOME": str(config),
            "TERM": "xterm-256color",
        }
        with Tmux([], env, project, height=40) as term:
            term.wait_for("Esc interrupts")
            term.type("/rev")
            term.wait_for("review one file (project)", timeout=10)  # the completion menu offers it
            term.press("C-u")
            term.type("/help")
            term.press("Enter")
            screen = term.wait_for("custom commands")
            assert "/review FILE" in screen and "review one file (project)" in screen
            assert "/git:log" in screen and "hidden: the built-in /help wins" in screen
            term.type("/review app.py")
            term.press("Enter")
            screen = term.wait_for("Reviewed: app.py looks fine.")
            assert "/review →" in screen
            first, second = fake.requests[0]["body"], fake.requests[1]["body"]
    assert user_texts(first)[-1] == "Review app.py for bugs; focus on app.py."
    results = {b["tool_use_id"]: b for b in second["messages"][-1]["content"] if b.get("type") == "tool_result"}
    texts = [str(b["content"]) for b in results.values()]
    assert any("print('hi')" in t for t in texts)
    assert any("/review allows only these tools: Read" in t for t in texts)
