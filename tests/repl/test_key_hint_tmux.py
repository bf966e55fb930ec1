"""A refused key in the REPL: the error line says which variable to set or check, as headless mode does."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic, Fault, text_response
from tests.repl.test_repl_tmux import env_for
from tests.repl.tmux import HAVE_TMUX, Tmux

pytestmark = pytest.mark.usefixtures("trust_tmp_path")

tmux_only = pytest.mark.skipif(not HAVE_TMUX, reason="tmux is not installed")


def refused() -> Fault:
    return Fault(401, "authentication_error", "invalid x-api-key")


@tmux_only
def test_a_refused_key_in_the_repl_names_the_variable_to_check(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    steps = [refused(), text_response("Now it works.")]
    with FakeAnthropic(steps) as fake, Tmux([], env_for(fake, tmp_path), project, width=160) as term:
        term.wait_for("Esc interrupts")
        term.type("hello")
        term.press("Enter")
        screen = term.wait_for("HTTP 401")
        screen = term.wait_for("refused the key in ANTHROPIC_API_KEY")
        assert "--api-key-env" in screen
        # The REPL stays usable: the next message is sent and answered.
        term.type("again")
        term.press("Enter")
        term.wait_for("Now it works.")


@tmux_only
def test_a_refused_key_named_by_api_key_env_names_that_variable(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with FakeAnthropic([refused()]) as fake:
        env = {**env_for(fake, tmp_path), "MY_WORK_KEY": "sk-ant-work"}
        with Tmux(["--api-key-env", "MY_WORK_KEY"], env, project, width=160) as term:
            term.wait_for("Esc interrupts")
            term.type("hello")
            term.press("Enter")
            screen = term.wait_for("HTTP 401")
            screen = term.wait_for("MY_WORK_KEY")
            assert "refused the key in MY_WORK_KEY" in screen


def test_the_hint_names_the_variable_the_key_came_from(monkeypatch: pytest.MonkeyPatch) -> None:
    from sagent.providers.registry import key_hint

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert "ANTHROPIC_API_KEY" in (key_hint("anthropic", None) or "")
    assert "MY_KEY" in (key_hint("anthropic", "MY_KEY") or "")
    monkeypatch.setenv("MOONSHOT_API_KEY", "x")
    assert "MOONSHOT_API_KEY" in (key_hint("moonshot", None) or "")
