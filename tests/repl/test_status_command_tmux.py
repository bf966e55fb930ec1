"""The `statusLine` setting in a real terminal (tmux): the command's first line, colours kept, shows above
sagent's status line and follows the session; a command that hangs or fails never holds up the REPL."""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic, text_response
from tests.repl.test_repl_tmux import env_for
from tests.repl.tmux import HAVE_TMUX, Tmux

pytestmark = pytest.mark.skipif(not HAVE_TMUX, reason="tmux is not installed")

SCRIPT = """\
import json, sys
d = json.load(sys.stdin)
print("\\x1b[32mSL " + d["model"]["id"] + " $%.4f " % d["cost"]["total_cost_usd"] + d["sagent"]["permission_mode"]
      + " " + d["session_id"][:8] + " " + d["workspace"]["current_dir"] + "\\x1b[0m")
print("second line, never shown")
"""


def user_settings(settings: dict) -> None:
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "sagent"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "settings.json").write_text(json.dumps(settings))


def test_the_command_s_first_line_shows_in_colour_and_follows_the_session(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (tmp_path / "status.py").write_text(SCRIPT)
    user_settings({"statusLine": {"type": "command", "command": f"{sys.executable} {tmp_path / 'status.py'}"}})
    with FakeAnthropic([text_response("Hello.")]) as fake, Tmux([], env_for(fake, tmp_path), project) as term:
        screen = term.wait_for("SL claude-sonnet-4-6 $0.0000 default 2026")  # the session id starts with the year
        assert "second line" not in screen
        assert str(project)[:40] in _status_row(term)
        rows = screen.rstrip("\n").split("\n")
        assert rows[-2].startswith("SL ") and "claude-sonnet-4-6" in rows[-1]  # above sagent's own line
        coloured = term._tmux("capture-pane", "-t", "main", "-p", "-e")
        assert re.search(r"\x1b\[32m(\x1b\[49m)?SL claude-sonnet-4-6", coloured)  # the colour is kept
        term.type("hi")
        term.press("Enter")
        term.wait_for("Hello.")
        for _ in range(200):  # after the turn the command runs again, given the session's spend
            if "$0.0000" not in _status_row(term):
                break
            time.sleep(0.1)
        assert "SL claude-sonnet-4-6 $0.0" in _status_row(term) and "$0.0000" not in _status_row(term)
        term.type("/model claude-haiku-4-5")
        term.press("Enter")
        term.wait_for("SL claude-haiku-4-5 $0.0")  # a switch shows at once, with no turn after it


def _status_row(term: Tmux) -> str:
    return next(row for row in term.screen().split("\n")[::-1] if row.startswith("SL "))


@pytest.mark.parametrize("command", ["sleep 600", "echo broken >&2; exit 3"], ids=["hangs", "fails"])
def test_a_command_that_hangs_or_fails_leaves_the_repl_working(tmp_path: Path, command: str) -> None:
    project = tmp_path / "project"
    project.mkdir()
    user_settings({"statusLine": {"type": "command", "command": command}})
    with FakeAnthropic([text_response("Still here.")]) as fake, Tmux([], env_for(fake, tmp_path), project) as term:
        term.wait_for("Esc interrupts")
        term.type("hi")
        term.press("Enter")
        term.wait_for("Still here.")
        screen = term.wait_for("─ this turn")  # the turn is over: the input is idle again
        assert "broken" not in screen
        for _ in range(100):
            rows = term.screen().rstrip("\n").split("\n")
            if rows[-2].startswith("›"):
                break
            time.sleep(0.1)
        assert "claude-sonnet-4-6" in rows[-1] and rows[-2].startswith("›")  # no row for the command
