"""Tool output in the real REPL (tmux, fake Anthropic server): tool lines fit the terminal at 80 and 120
columns, hidden output is labelled and Ctrl+O shows it, an edit's diff shows the lines around the change."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sagent.repl.tool_view import cells
from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response
from tests.repl.test_repl_tmux import env_for
from tests.repl.tmux import HAVE_TMUX, Tmux

pytestmark = pytest.mark.skipif(not HAVE_TMUX, reason="tmux is not installed")

# A long command whose first output line is long too, and eleven more lines the tool line hides.
COMMAND = (
    "echo 'Compiling inventory-service v0.3.1 (/srv/projects/inventory/service) with the release profile "
    "and every optional feature enabled'; for n in 1 2 3 4 5 6 7 8 9 10 11; do echo hidden-line-$n; done"
)


@pytest.fixture
def project(tmp_path: Path, trust_tmp_path: None) -> Path:
    root = tmp_path / "project"
    (root / ".sagent").mkdir(parents=True)
    (root / ".sagent" / "settings.json").write_text('{"permissions": {"allow": ["Bash", "Edit"]}}')
    return root


@pytest.mark.parametrize("width", [80, 120])
def test_tool_lines_fit_the_width_and_ctrl_o_shows_the_hidden_lines(project: Path, tmp_path: Path, width: int) -> None:
    steps = [tool_use_response([("Bash", {"command": COMMAND})]), text_response("Built.")]
    with FakeAnthropic(steps) as fake, Tmux([], env_for(fake, tmp_path), project, width=width) as term:
        term.wait_for("Esc interrupts")
        term.type("build it")
        term.press("Enter")
        screen = term.wait_for("Built.")
        # capture-pane -J joins a wrapped line: a tool line longer than the pane would show here whole.
        line = next(row for row in screen.splitlines() if row.startswith("✓ Bash("))
        assert cells(line.rstrip()) <= width - 1, line
        assert "…" in line and line.rstrip().endswith("· +11 lines hidden (ctrl+o)")
        assert "hidden-line-11" not in screen
        term.press("C-o")
        screen = term.wait_for("hidden-line-11")
        assert "─ the whole output of the last 1 tool call" in screen
        for n in range(1, 12):
            assert f"  hidden-line-{n}" in screen
        term.wait_for("ctrl+o collapses")  # the note under the input says how to go back


def test_an_edit_shows_its_diff_with_the_lines_around_it(project: Path, tmp_path: Path) -> None:
    (project / "notes.txt").write_text("".join(f"line {n}\n" for n in range(1, 21)))
    steps = [
        tool_use_response([("Read", {"path": "notes.txt"})]),
        tool_use_response([("Edit", {"path": "notes.txt", "old_string": "line 10\n", "new_string": "line ten\n"})]),
        text_response("Edited."),
    ]
    with FakeAnthropic(steps) as fake, Tmux([], env_for(fake, tmp_path), project) as term:
        term.wait_for("Esc interrupts")
        term.type("edit the notes")
        term.press("Enter")
        screen = term.wait_for("Edited.")
        lines = screen.splitlines()
        at = next(n for n, row in enumerate(lines) if row.startswith("✓ Edit(notes.txt)"))
        assert "hidden" not in lines[at]
        assert [row.rstrip() for row in lines[at + 1 : at + 7]] == [
            "   8  line 8",
            "   9  line 9",
            "  10 -line 10",
            "  10 +line ten",
            "  11  line 11",
            "  12  line 12",
        ]
    assert (project / "notes.txt").read_text().count("line ten") == 1


@pytest.mark.skipif(shutil.which("less") is None, reason="less is not installed")
def test_output_pages_a_calls_whole_output(project: Path, tmp_path: Path) -> None:
    steps = [tool_use_response([("Bash", {"command": COMMAND})]), text_response("Built.")]
    with FakeAnthropic(steps) as fake, Tmux([], {**env_for(fake, tmp_path), "PAGER": "less"}, project) as term:
        term.wait_for("Esc interrupts")
        term.type("build it")
        term.press("Enter")
        term.wait_for("Built.")
        term.type("/output")
        term.press("Enter")
        screen = term.wait_for("(END)")  # less shows the whole output
        assert "every optional feature enabled" in screen and "hidden-line-11" in screen
        term.press("q")
        screen = term.wait_for("anthropic/claude-sonnet-4-6 │")  # back in the REPL
        term.type("/output 9")
        term.press("Enter")
        term.wait_for("/output: no tool call '9': give 1 to 1")
