"""/model in the real REPL (tmux, fake Anthropic server): a list to search and choose from, a refusal with
the nearest names for an id no provider knows, and a forced new id that the next request uses."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from sagent.providers.specs import SPECS
from tests.fakes.anthropic_server import FakeAnthropic, text_response
from tests.repl.test_repl_tmux import env_for
from tests.repl.tmux import HAVE_TMUX, Tmux

pytestmark = pytest.mark.skipif(not HAVE_TMUX, reason="tmux is not installed")


def only_anthropic(fake: FakeAnthropic, tmp_path: Path) -> dict[str, str]:
    """The environment with the Anthropic key alone, so the list is the same on every machine."""
    env = env_for(fake, tmp_path)
    for spec in SPECS:
        for variable in spec.key_variables:
            if variable != "ANTHROPIC_API_KEY":
                env.pop(variable, None)
    return env


def test_model_alone_lists_models_to_search_and_choose_from(tmp_path: Path) -> None:
    with (
        FakeAnthropic([text_response("Hello from Haiku.")]) as fake,
        Tmux([], only_anthropic(fake, tmp_path), tmp_path) as term,
    ):
        term.wait_for("Esc interrupts")
        term.type("/model")
        term.press("Enter")
        screen = term.wait_for("Switch model (now anthropic/claude-sonnet-4-6)")
        assert "USD per Mtok in / out" in screen
        row = next(line for line in screen.splitlines() if "● in use" in line)
        assert "claude-sonnet-4-6" in row and "200k" in row and "$3.00 / $15.00" in row
        assert "gpt-5" not in screen  # no OpenAI key: its models are not offered
        term.type("haiku 4")
        screen = term.wait_for("1 of ")
        assert "› claude-haiku-4-5" in screen and "claude-3-5-haiku" not in screen.split("search: haiku 4")[-1]
        term.press("Enter")
        term.wait_for("switched to anthropic/claude-haiku-4-5")
        term.wait_for("anthropic/claude-haiku-4-5 │")  # the status line follows
        term.type("hi")
        term.press("Enter")
        term.wait_for("Hello from Haiku.")
        assert fake.requests[0]["body"]["model"] == "claude-haiku-4-5"


def test_esc_closes_the_list_without_switching(tmp_path: Path) -> None:
    with FakeAnthropic([]) as fake, Tmux([], only_anthropic(fake, tmp_path), tmp_path) as term:
        term.wait_for("Esc interrupts")
        term.type("/model")
        term.press("Enter")
        term.wait_for("Switch model")
        term.press("Down")
        term.press("Escape")
        wait_until_gone(term, "↑↓ move")
        screen = term.wait_for("anthropic/claude-sonnet-4-6 │")
        assert "switched to" not in screen and "↑↓ move" not in screen


def wait_until_gone(term: Tmux, text: str, timeout: float = 20.0) -> str:
    """The screen once `text` has left it (tmux itself holds an Esc for a moment before passing it on)."""
    deadline = time.monotonic() + timeout
    while text in (screen := term.screen()):
        if time.monotonic() > deadline:
            raise AssertionError(f"{text!r} was still on the screen after {timeout}s:\n{screen}")
        time.sleep(0.1)
    return screen


def test_an_unknown_name_is_refused_with_the_nearest_and_a_forced_id_is_used(tmp_path: Path) -> None:
    with (
        FakeAnthropic([text_response("Hello from the new one.")]) as fake,
        Tmux([], only_anthropic(fake, tmp_path), tmp_path) as term,
    ):
        term.wait_for("Esc interrupts")
        term.type("/model claude-sonet-4-6")
        term.press("Enter")
        screen = term.wait_for("no provider knows the model 'claude-sonet-4-6'")
        assert "the nearest: claude-sonnet-4-6" in screen and "/model --force claude-sonet-4-6" in screen
        screen = term.wait_for("anthropic/claude-sonnet-4-6 │")  # the status line, redrawn under the refusal
        assert "switched to" not in screen
        term.type("/model foo")
        term.press("Enter")
        term.wait_for("no provider knows the model 'foo'")
        term.type("/model --force claude-opus-9")
        term.press("Enter")
        term.wait_for("switched to anthropic/claude-opus-9")
        term.type("hello")
        term.press("Enter")
        term.wait_for("Hello from the new one.")
        assert fake.requests[0]["body"]["model"] == "claude-opus-9"
