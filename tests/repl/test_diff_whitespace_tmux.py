"""An edit that only changes indentation, in the real REPL (tmux): the question's diff and the tool line's
diff both show the lines with their own indentation, so the change is visible before it is approved."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response
from tests.repl.test_repl_tmux import env_for
from tests.repl.tmux import HAVE_TMUX, Tmux

pytestmark = pytest.mark.skipif(not HAVE_TMUX, reason="tmux is not installed")


def test_an_indentation_only_edit_shows_the_indentation_in_the_question_and_the_tool_line(
    tmp_path: Path, trust_tmp_path: None
) -> None:
    project = tmp_path / "project"
    (project / ".sagent").mkdir(parents=True)
    (project / "app.py").write_text("def total():\n  return 42\n")
    edit = {"path": "app.py", "old_string": "  return 42", "new_string": "    return 42"}
    steps = [
        tool_use_response([("Read", {"path": "app.py"})]),  # an edit needs the file read first
        tool_use_response([("Edit", edit)]),
        text_response("Re-indented."),
    ]
    with FakeAnthropic(steps) as fake, Tmux([], env_for(fake, tmp_path), project, height=40) as term:
        term.wait_for("default mode")
        term.type("indent it properly")
        term.press("Enter")
        term.wait_for("Allow Edit?")
        screen = term.wait_for("+    return 42")  # the question's diff keeps the new indentation
        assert "2 -  return 42" in screen and "2 +    return 42" in screen, screen
        term.press("1")
        screen = term.wait_for("Re-indented.")
        tool_line = screen[screen.index("✓ Edit(app.py)") :]
        assert "2 -  return 42" in tool_line and "2 +    return 42" in tool_line, screen
        assert (project / "app.py").read_text() == "def total():\n    return 42\n"
