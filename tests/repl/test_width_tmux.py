"""The REPL at narrow widths and across a resize, read off a real terminal (tmux): the status line keeps the
permission mode and marks a cut; a resize while the agent works leaves no stale spinner in the scrollback."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic, Reply, text_response, tool_use_response
from tests.repl.test_repl_tmux import env_for
from tests.repl.tmux import HAVE_TMUX, Tmux

pytestmark = pytest.mark.skipif(not HAVE_TMUX, reason="tmux is not installed")


@pytest.fixture
def project(tmp_path: Path, trust_tmp_path: None) -> Path:
    root = tmp_path / "project"
    (root / ".sagent").mkdir(parents=True)
    (root / ".sagent" / "settings.json").write_text('{"permissions": {"allow": ["Bash"]}}')
    return root


def visible(term: Tmux) -> list[str]:
    """The rows on the screen now, as drawn (not joined), trailing blanks dropped."""
    return term._tmux("capture-pane", "-t", "main", "-p").rstrip("\n").split("\n")


def status_row(term: Tmux) -> str:
    rows = [row for row in visible(term) if row.strip()]
    return rows[-1]


def wait_for_status(term: Tmux, text: str, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    while True:
        row = status_row(term)
        if text in row:
            return row
        if time.monotonic() > deadline:
            raise AssertionError(f"{text!r} not in the status line within {timeout}s: {row!r}")
        time.sleep(0.1)


def rule_rows(screen: str) -> int:
    return sum(1 for line in screen.splitlines() if line.strip() and set(line.strip()) == {"─"})


NEXT_MODE = {"default": "acceptEdits", "acceptEdits": "plan", "plan": "default"}


@pytest.mark.parametrize(("width", "mode"), [(80, "default"), (60, "acceptEdits"), (40, "plan")])
def test_the_status_line_keeps_the_mode_at_narrow_widths(project: Path, tmp_path: Path, width: int, mode: str) -> None:
    steps = [text_response("Done.", input_tokens=12_345, output_tokens=678)]
    args = ["--permission-mode", mode]
    with FakeAnthropic(steps) as fake, Tmux(args, env_for(fake, tmp_path), project, width=width) as term:
        term.wait_for("Esc interrupts")
        term.type("hello")
        term.press("Enter")
        term.wait_for("Done.")
        row = wait_for_status(term, "ctx" if width > 40 else mode)
        assert len(row) <= width
        # The mode is never what goes, and never cut: the line ends with one of its whole forms.
        assert row.rstrip().endswith((f"{mode} mode", f"{mode} mode (⇧Tab)", f" {mode}")), row
        if width >= 60:
            assert "claude-sonnet-4-6" in row and "ctx" in row
        term.press("BTab")  # Shift+Tab: the next mode shows at once, at this width too
        after = NEXT_MODE[mode]
        assert wait_for_status(term, after).rstrip().endswith((f"{after} mode", f"{after} mode (⇧Tab)", f" {after}"))


def test_a_long_model_name_is_cut_with_an_ellipsis_and_the_mode_stays(project: Path, tmp_path: Path) -> None:
    name = "claude-sonnet-4-6-with-a-very-long-custom-deployment-name"
    with FakeAnthropic([]) as fake, Tmux(["--model", name], env_for(fake, tmp_path), project, width=50) as term:
        term.wait_for("Esc interrupts")
        row = wait_for_status(term, "default")
        assert "…" in row and row.rstrip().endswith("default") and len(row) <= 50


@pytest.mark.parametrize("widths", [[60], [45, 80]])
def test_a_resize_while_working_leaves_no_stale_spinner(project: Path, tmp_path: Path, widths: list[int]) -> None:
    steps = [
        text_response("Ready."),
        tool_use_response([("Bash", {"command": "sleep 3; echo built"})], text="Building."),
        text_response("Built it."),
    ]
    with FakeAnthropic(steps) as fake, Tmux([], env_for(fake, tmp_path), project, width=120) as term:
        term.wait_for("Esc interrupts")
        term.type("hi")  # a first turn: the provider's client is loaded and the screen is warm
        term.press("Enter")
        term.wait_for("Ready.")
        term.type("build it")
        term.press("Enter")
        term.wait_for("esc to interrupt")
        term.wait_for("running Bash")
        for width in widths:
            term._tmux("resize-window", "-t", "main", "-x", str(width))
            wait_for_status(term, "default")  # drawn again at the new width
            assert len(status_row(term)) <= width
        screen = term.wait_for("Built it.")
        deadline = time.monotonic() + 5
        while "esc to interrupt" in screen and time.monotonic() < deadline:  # the last repaint
            time.sleep(0.1)
            screen = term.screen()
    assert "esc to interrupt" not in screen  # no spinner line left behind, in the scrollback or on screen
    assert "running…" not in screen and "running Bash" not in screen
    assert rule_rows(screen) == 1  # only the input box's rule
    order = [screen.index(s) for s in ("› build it", "Building.", "✓ Bash(sleep 3; echo built)", "Built it.")]
    assert order == sorted(order)


def test_a_resize_while_an_answer_streams_leaves_each_line_once(project: Path, tmp_path: Path) -> None:
    words = " ".join(f"word{n}" for n in range(60))  # one long paragraph, streamed slowly
    steps = [
        text_response("Ready."),
        Reply([{"type": "text", "text": f"First line of the answer.\n\n{words}"}], delay=0.05),
    ]
    with FakeAnthropic(steps) as fake, Tmux([], env_for(fake, tmp_path), project, width=120) as term:
        term.wait_for("Esc interrupts")
        term.type("hi")
        term.press("Enter")
        term.wait_for("Ready.")
        term.type("answer")
        term.press("Enter")
        term.wait_for("word3 ")  # the paragraph is streaming in the live area
        term._tmux("resize-window", "-t", "main", "-x", "70")
        screen = term.wait_for("word59")
        deadline = time.monotonic() + 5
        while "esc to interrupt" in screen and time.monotonic() < deadline:
            time.sleep(0.1)
            screen = term.screen()
    assert "esc to interrupt" not in screen
    assert screen.count("First line of the answer.") == 1
    assert screen.count("word0 ") == 1  # the streaming paragraph was not left behind half-written
    assert rule_rows(screen) == 1
