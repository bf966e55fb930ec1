"""Notifications in a real terminal (tmux): with the terminal's focus out, a turn that ends and a permission
question that waits write the chosen escape sequence (wrapped for tmux) to the terminal; focused, or before
the terminal says, nothing is written; the settings' `Notification` hooks get Claude Code's input each time."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response
from tests.repl.test_repl_tmux import env_for
from tests.repl.tmux import HAVE_TMUX, Tmux

pytestmark = pytest.mark.skipif(not HAVE_TMUX, reason="tmux is not installed")

WAITING = "sagent is waiting for your input"


def wait_until(check: object, what: str) -> None:
    for _ in range(200):
        if check():  # type: ignore[operator]
            return
        time.sleep(0.1)
    raise AssertionError(what)


def test_an_unfocused_terminal_is_notified_and_the_notification_hooks_run(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    seen = tmp_path / "hook.jsonl"
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "sagent"
    config.mkdir(parents=True, exist_ok=True)
    hook = {"type": "command", "command": f"cat >> {seen}; echo >> {seen}"}
    settings = {"notifications": "osc777", "hooks": {"Notification": [{"hooks": [hook]}]}}
    (config / "settings.json").write_text(json.dumps(settings))
    written = tmp_path / "pane.out"
    steps = [
        text_response("First."),
        text_response("Second."),
        tool_use_response([("Bash", {"command": "echo hi"})]),
        text_response("Ran it, fine."),
    ]
    outside = ["--sandbox", "danger-full-access"]  # Bash asks in default mode
    with FakeAnthropic(steps) as fake, Tmux(outside, env_for(fake, tmp_path), project, height=40) as term:
        term.wait_for("Esc interrupts")
        term._tmux("pipe-pane", "-O", "-t", "main", f"cat >> {written}")
        term.type("one")
        term.press("Enter")
        term.wait_for("First.")  # focus not reported yet: taken as focused, nothing written
        wait_until(lambda: seen.exists() and seen.read_text().count("\n") >= 1, "the hook ran after the turn")
        term._tmux("send-keys", "-t", "main", "-H", "1b", "5b", "4f")  # ESC [ O: the terminal lost focus
        term.type("/status")
        term.press("Enter")
        term.wait_for("osc777 when the terminal is not focused; focus out")  # /status says why it notifies
        term.type("two")
        term.press("Enter")
        term.wait_for("Second.")
        osc = "\x1bPtmux;\x1b\x1b]777;notify;sagent · project;" + WAITING + "\x07\x1b\\"
        wait_until(lambda: osc.encode() in written.read_bytes(), "the turn's end was written for tmux")
        term.type("three")
        term.press("Enter")
        term.wait_for("Allow Bash?")
        asked = "\x1b]777;notify;sagent · project;sagent needs your permission to use Bash\x07"
        wait_until(lambda: asked.replace("\x1b", "\x1b\x1b").encode() in written.read_bytes(), "the question")
        term._tmux("send-keys", "-t", "main", "-H", "1b", "5b", "49")  # ESC [ I: focus is back
        term.press("y")
        term.wait_for("✓ approved")
        term.wait_for("Ran it, fine.")
        wait_until(lambda: seen.read_text().count("\n") >= 4, "the hooks of the four moments")
        out = written.read_bytes().decode("utf-8", errors="replace")
        screen = term.screen()
    assert out.count("]777;notify;") == 2  # focused again: the last turn's end wrote nothing
    assert "[O" not in screen and "[I" not in screen  # the focus reports were read, not typed
    inputs = [json.loads(line) for line in seen.read_text().splitlines() if line.strip()]
    assert [(i["notification_type"], i["terminal_focused"]) for i in inputs] == [
        ("idle_prompt", None),
        ("idle_prompt", False),
        ("permission_prompt", False),
        ("idle_prompt", True),
    ]
    first = inputs[0]
    assert first["hook_event_name"] == "Notification" and first["message"] == WAITING
    assert first["title"] == "sagent" and first["cwd"] == str(project) and first["session_id"]
    assert inputs[2]["message"] == "sagent needs your permission to use Bash"
