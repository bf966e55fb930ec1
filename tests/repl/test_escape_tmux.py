"""Esc in the real REPL (tmux, the fake Anthropic server): it acts at once and the keys typed right after it
arrive whole, idle or working; Alt+Enter still makes a new line; Esc Esc opens the rewind list on an empty
input and clears the input otherwise."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response
from tests.repl.test_repl_tmux import env_for, user_texts
from tests.repl.test_sessions_tmux import project, send, wait_after
from tests.repl.tmux import HAVE_TMUX, Tmux

pytestmark = pytest.mark.skipif(not HAVE_TMUX, reason="tmux is not installed")
__all__ = ["project"]  # the fixture: a project whose settings let Bash and the file tools run unasked


def input_line(screen: str) -> str:
    """What the input box holds (its first line): the text after the last prompt sign."""
    return screen.rsplit("\n›", 1)[-1].split("\n")[0].strip()


def wait_input(term: Tmux, text: str, timeout: float = 20.0) -> str:
    """Wait until the input box holds `text`; the screen then."""
    deadline = time.monotonic() + timeout
    while True:
        screen = term.screen()
        if input_line(screen) == text:
            return screen
        if time.monotonic() > deadline:
            raise AssertionError(f"the input box did not come to hold {text!r}; the screen was:\n{screen}")
        time.sleep(0.1)


@pytest.mark.parametrize("together", [True, False], ids=["one-write", "two-writes"])
def test_esc_then_a_command_right_away_runs_the_command(project: Path, tmp_path: Path, together: bool) -> None:
    with FakeAnthropic([]) as fake, Tmux([], env_for(fake, tmp_path), project) as term:
        term.wait_for("Esc interrupts")
        if together:
            term.press("Escape", "/cost", "Enter")  # one write: the terminal reads them in one go
        else:
            term.press("Escape")
            term.type("/cost")
            term.press("Enter")
        term.wait_for("no spend yet")  # /cost ran: the slash was not eaten by the Esc
        requests = list(fake.requests)
    assert requests == []  # nothing went to the model (the paid prompt "cost")


@pytest.mark.parametrize("together", [True, False], ids=["one-write", "two-writes"])
def test_esc_while_working_stops_at_once_and_keeps_every_key_typed_after_it(
    project: Path, tmp_path: Path, together: bool
) -> None:
    steps = [tool_use_response([("Bash", {"command": "sleep 30"})]), text_response("never")]
    with FakeAnthropic(steps) as fake, Tmux([], env_for(fake, tmp_path), project) as term:
        term.wait_for("Esc interrupts")
        send(term, "wait a while")
        term.wait_for("esc to interrupt")
        if together:
            term.press("Escape", "abc")
        else:
            term.press("Escape")
            term.type("abc")
        wait_after(term, "wait a while", "interrupted")
        wait_input(term, "abc")


def test_alt_enter_still_makes_a_new_line(project: Path, tmp_path: Path) -> None:
    with FakeAnthropic([text_response("Two lines read.")]) as fake, Tmux([], env_for(fake, tmp_path), project) as term:
        term.wait_for("Esc interrupts")
        term.type("one")
        wait_input(term, "one")
        term.press("M-Enter")
        term.type("two")
        term.wait_for("  two")  # the second line of the input box
        term.press("Enter")
        term.wait_for("Two lines read.")
        body = fake.requests[-1]["body"]
    assert user_texts(body) == ["one\ntwo"]


def test_esc_esc_on_an_empty_input_opens_the_rewind_list(project: Path, tmp_path: Path) -> None:
    with FakeAnthropic([text_response("Answer one.")]) as fake, Tmux([], env_for(fake, tmp_path), project) as term:
        term.wait_for("Esc interrupts")
        term.press("Escape", "Escape")
        term.wait_for("no message of yours to go back to yet")  # nothing to go back to yet: said, not a crash
        send(term, "first question")
        wait_after(term, "Answer one.", "─ this turn")
        term.press("Escape")
        term.press("Escape")
        screen = term.wait_for("Rewind to before which message?")
        assert "1. first question" in screen
        term.press("Enter")
        wait_after(term, "─ rewound to before", "› first question")


def test_esc_esc_with_text_clears_it_and_up_brings_it_back(project: Path, tmp_path: Path) -> None:
    with FakeAnthropic([]) as fake, Tmux([], env_for(fake, tmp_path), project) as term:
        term.wait_for("Esc interrupts")
        term.type("a draft worth keeping")
        term.press("Escape")
        screen = term.wait_for("Esc again to clear the input")
        assert input_line(screen) == "a draft worth keeping"  # one Esc only says what a second would do
        term.press("Escape")
        screen = wait_input(term, "")
        assert "Rewind to before" not in screen and "Esc again" not in screen
        term.press("Up")
        wait_input(term, "a draft worth keeping")
        requests = list(fake.requests)
    assert requests == []
