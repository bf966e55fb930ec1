"""The task list in the real REPL (tmux, fake Anthropic server): it shows above the prompt while the model
works and follows each TodoWrite call, fits a narrow terminal, Ctrl+T hides and shows it, it goes away when
the turn ends with every item done, and /tasks prints it."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from sagent.repl.tool_view import cells
from tests.cli.test_headless import run_sagent
from tests.fakes.anthropic_server import FakeAnthropic, Reply, text_response, tool_use_response
from tests.repl.test_repl_tmux import env_for
from tests.repl.tmux import HAVE_TMUX, Tmux

pytestmark = pytest.mark.skipif(not HAVE_TMUX, reason="tmux is not installed")

WIDTH = 44
STEPS = [
    {"content": "Read the failing test", "status": "completed", "activeForm": "Reading the failing test"},
    {
        "content": "Fix the sign in add()",
        "status": "in_progress",
        "activeForm": "Fixing the sign in add() of the calculator module, carefully",
    },
    {"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"},
]


def until(term: Tmux, test: Any, what: str, timeout: float = 20.0) -> list[str]:
    """The screen's lines once `test(lines)` holds."""
    deadline = time.monotonic() + timeout
    while True:
        lines = term.screen().splitlines()
        if test(lines):
            return lines
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {timeout}s; the screen was:\n" + "\n".join(lines))
        time.sleep(0.1)


def block(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith(("  ☒ ", "  ◼ ", "  ☐ "))]


def test_the_list_shows_live_fits_and_hides(tmp_path: Path, trust_tmp_path: None) -> None:
    project = tmp_path / "project"
    project.mkdir()
    going_on = threading.Event()

    def after_release(request: dict[str, Any]) -> Reply:
        going_on.wait(60)  # the model "thinks" until the test has looked at the screen
        return tool_use_response([("TodoWrite", {"todos": [{**s, "status": "completed"} for s in STEPS]})])

    answering = threading.Event()

    def held_answer(request: dict[str, Any]) -> Reply:
        answering.wait(60)
        return text_response("You are welcome.")

    steps = [
        tool_use_response([("TodoWrite", {"todos": STEPS})]),
        after_release,
        text_response("All done."),
        held_answer,
    ]
    with FakeAnthropic(steps) as fake, Tmux([], env_for(fake, tmp_path), project, width=WIDTH) as term:
        term.wait_for("Esc interrupts")
        term.type("fix add")
        term.press("Enter")
        lines = until(term, lambda s: len(block(s)) == 3, "the task list")
        shown = block(lines)
        assert shown[0] == "  ☒ Read the failing test" and shown[2] == "  ☐ Run the tests"
        assert shown[1].startswith("  ◼ Fixing the sign in add()") and shown[1].endswith("…")  # its activeForm, cut
        assert all(cells(line.rstrip()) <= WIDTH - 1 for line in shown)
        below = lines.index(shown[-1])
        assert any(line.startswith("─" * 10) for line in lines[below:])  # above the prompt's rule

        term.press("C-t")
        until(term, lambda s: not block(s) and any("Ctrl+T shows it" in line for line in s), "hiding it")
        term.press("C-t")
        until(term, lambda s: len(block(s)) == 3, "showing it again")

        going_on.set()
        until(term, lambda s: any("All done." in line for line in s) and not block(s), "the end of the turn")
        # The next turn, on something else, does not bring the finished list back.
        term.type("thanks")
        term.press("Enter")
        until(term, lambda s: any("esc to interrupt" in line for line in s), "the next turn")
        assert not block(term.screen().splitlines())
        answering.set()
        term.wait_for("You are welcome.")
        term.type("/tasks")
        term.press("Enter")
        screen = term.wait_for("Task list: 3 of 3 done")
        assert "  ☒ Run the tests" in screen


def test_a_continued_session_shows_its_list_at_once(tmp_path: Path, trust_tmp_path: None) -> None:
    project = tmp_path / "project"
    project.mkdir()
    steps = [tool_use_response([("TodoWrite", {"todos": STEPS})]), text_response("Paused.")]
    with FakeAnthropic(steps) as fake:
        env = env_for(fake, tmp_path)
        assert run_sagent(["-p", "fix add", "--cwd", str(project)], env).returncode == 0
        with Tmux(["--continue"], env, project, width=100) as term:
            term.wait_for("resumed session")
            shown = block(until(term, lambda s: len(block(s)) == 3, "the resumed list"))
    assert shown[1] == "  ◼ Fixing the sign in add() of the calculator module, carefully"  # the width fits it whole
