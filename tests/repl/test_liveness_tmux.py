"""The REPL while it works and when it is stopped, read off a real terminal (tmux) as a user reads it: the
spinner turns, Esc gives queued input back, Ctrl+C's quit hint expires, `/exit`, `sagent "task"`, the
footer's labels, the context gauge after a resume, the budget's way out, the completion menu's rows."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from sagent.agent.session import list_sessions
from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response
from tests.repl.test_repl_tmux import env_for, user_texts
from tests.repl.tmux import HAVE_TMUX, Tmux

pytestmark = pytest.mark.skipif(not HAVE_TMUX, reason="tmux is not installed")


@pytest.fixture
def project(tmp_path: Path, trust_tmp_path: None) -> Path:
    """A project whose settings let Bash run unasked (the questions are tested in test_permissions_tmux)."""
    root = tmp_path / "project"
    (root / ".sagent").mkdir(parents=True)
    (root / ".sagent" / "settings.json").write_text('{"permissions": {"allow": ["Bash"]}}')
    return root


SPINNER = re.compile(r"[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] (working|running [^…]+)… (\S+) · (\S+) tokens? · esc to interrupt")


def visible(term: Tmux) -> str:
    """The pane as it is on the screen now, without the scrollback."""
    return term._tmux("capture-pane", "-t", "main", "-p", "-J")


def wait_until(term: Tmux, check: object, what: str, timeout: float = 20.0) -> str:
    """Poll the screen until `check(screen)` holds."""
    deadline = time.monotonic() + timeout
    while True:
        screen = term.screen()
        if check(screen):  # type: ignore[operator]
            return screen
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {timeout}s; the screen was:\n{screen}")
        time.sleep(0.1)


def spinner_of(screen: str) -> str | None:
    found = SPINNER.search(screen)
    return found.group(0) if found else None


def seconds_of(screen: str) -> int:
    """The spinner's elapsed seconds (-1 when no spinner shows)."""
    found = SPINNER.search(screen)
    return int(found.group(2).removesuffix("s")) if found and found.group(2)[:-1].isdigit() else -1


def bottom(screen: str) -> str:
    """The live area's lines: everything after the last input rule."""
    return screen.rsplit("─" * 20, 1)[-1]


def test_the_spinner_turns_counts_seconds_and_names_the_running_tool(project: Path, tmp_path: Path) -> None:
    steps = [tool_use_response([("Bash", {"command": "sleep 6; echo built"})]), text_response("Built.")]
    with FakeAnthropic(steps) as fake, Tmux([], env_for(fake, tmp_path), project) as term:
        term.wait_for("Esc interrupts")
        term.type("build it")
        term.press("Enter")
        screen = term.wait_for("esc to interrupt")
        first = spinner_of(screen)
        assert first is not None, screen
        # The line changes by itself while nothing arrives (the tool sleeps): the frame turns, seconds count.
        wait_until(term, lambda s: spinner_of(s) not in (None, first), "a new spinner frame")
        screen = wait_until(term, lambda s: "running Bash… " in (spinner_of(s) or ""), "the tool in the spinner")
        seconds = seconds_of(screen)
        screen = wait_until(term, lambda s: seconds_of(s) > seconds >= 0, "the seconds counting")
        status = next(line for line in screen.splitlines() if "│ ctx " in line)
        assert "working" not in status  # the status line no longer holds a static "working"
        term.wait_for("Built.")
        screen = wait_until(term, lambda s: "esc to interrupt" not in s, "the spinner going away when idle")


def test_esc_stops_and_puts_the_queued_message_back_into_the_input(project: Path, tmp_path: Path) -> None:
    steps = [tool_use_response([("Bash", {"command": "sleep 6; echo built"})]), text_response("Done, with tests.")]
    with FakeAnthropic(steps) as fake, Tmux([], env_for(fake, tmp_path), project) as term:
        term.wait_for("Esc interrupts")
        term.type("build it")
        term.press("Enter")
        term.wait_for("running Bash…")
        # Held for after the task (Tab): a message sent with Enter is read within half a second, the long
        # Bash going to the background, so it would no longer be waiting when Esc is pressed.
        term.type("and run the tests")
        term.press("Tab")
        term.wait_for("after this task: and run the tests")
        term.press("Escape")
        screen = term.wait_for("your queued message is back in the input")
        # The input box, as the user's own text again, once the work has stopped (a screen caught while the
        # live area is drawn again after the lines printed above it holds neither).
        screen = wait_until(
            term,
            lambda s: "esc to interrupt" not in s and "› and run the tests" in bottom(s),
            "the work stopping, the message back in the input",
        )
        assert "after this task: and run the tests" not in screen
        # Nothing is sent by itself: the model was asked once, for the stopped task.
        time.sleep(1.0)  # give a wrongly sent message the time to reach the fake (not a speed assertion)
        assert len(fake.requests) == 1
        term.press("Enter")  # the user sends it as it is
        screen = term.wait_for("Done, with tests.")
        assert user_texts(fake.requests[1]["body"])[-1] == "and run the tests"
        # The stop's note is gone under the prompt after the next turn.
        screen = wait_until(term, lambda s: "─ this turn" in s.split("Done, with tests.")[-1], "the footer")
        assert "interrupted ·" not in screen and "back in the input" not in screen


def test_ctrl_c_interrupts_work_and_its_quit_hint_expires(project: Path, tmp_path: Path) -> None:
    steps = [tool_use_response([("Bash", {"command": "sleep 8"})]), text_response("unused")]
    with FakeAnthropic(steps) as fake, Tmux([], env_for(fake, tmp_path), project) as term:
        term.wait_for("Esc interrupts")
        term.type("wait a while")
        term.press("Enter")
        term.wait_for("running Bash…")
        term.press("C-c")
        term.wait_for("─ interrupted")
        screen = wait_until(term, lambda s: "press Ctrl+C again to quit" in s, "the quit hint")
        assert "[sagent exited" not in screen
        # The hint goes away after a few seconds; a Ctrl+C after that arms it again instead of quitting.
        wait_until(term, lambda s: "press Ctrl+C again to quit" not in s, "the hint expiring", timeout=15)
        term.press("C-c")
        term.wait_for("press Ctrl+C again to quit")
        assert "[sagent exited" not in term.screen()
        term.press("C-c")  # the second one within the window quits
        term.wait_for("[sagent exited 0]")
        assert len(fake.requests) == 1


def test_exit_quits_like_quit(project: Path, tmp_path: Path) -> None:
    with FakeAnthropic([]) as fake, Tmux([], env_for(fake, tmp_path), project) as term:
        term.wait_for("Esc interrupts")
        term.type("/exit")
        term.press("Enter")
        term.wait_for("[sagent exited 0]")


def test_a_task_on_the_command_line_opens_the_repl_with_it_sent(project: Path, tmp_path: Path) -> None:
    with FakeAnthropic([text_response("The test passes now.")]) as fake:
        with Tmux(["fix the test"], env_for(fake, tmp_path), project) as term:
            screen = term.wait_for("The test passes now.")
            assert "› fix the test" in screen
            term.type("/quit")  # the REPL stays open for the next message
            term.press("Enter")
            term.wait_for("[sagent exited 0]")
        assert user_texts(fake.requests[0]["body"]) == ["fix the test"]


def test_the_footer_labels_the_turns_figures_beside_the_session_total(project: Path, tmp_path: Path) -> None:
    steps = [text_response("One.", input_tokens=1000, output_tokens=200), text_response("Two.")]
    with FakeAnthropic(steps) as fake, Tmux([], env_for(fake, tmp_path), project) as term:
        term.wait_for("Esc interrupts")
        term.type("first")
        term.press("Enter")
        term.wait_for("One.")
        term.type("second")
        term.press("Enter")
        screen = wait_until(term, lambda s: s.count("─ this turn: ") == 2, "two footers")
        first, second = re.findall(r"─ this turn: (\S+) tokens? · \$(\S+) · \S+ │ session: \$(\S+)", screen)
        assert first[0] == "1.2k" and second[0] == "120"
        # Each turn's own cost; the session's total is their sum.
        assert float(first[1]) == float(first[2]) > 0
        assert float(second[2]) == pytest.approx(float(first[1]) + float(second[1]), abs=0.00011)
        assert " turns ·" not in screen


def gauge(screen: str) -> int:
    found = re.findall(r"│ ctx ([\d,]+)", screen)
    assert found, screen
    return int(found[-1].replace(",", ""))


def test_the_context_gauge_is_right_after_resume_and_after_slash_resume(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sentence = "the parser keeps a stack of open brackets. "
    long_answer = "\n\n".join(f"Paragraph {n}: " + sentence * 20 for n in range(40))
    steps = [text_response(long_answer), text_response("Short.")]
    with FakeAnthropic(steps) as fake:
        env = env_for(fake, tmp_path)
        for prompt, last in (("explain the parser at length", "Paragraph 39"), ("hi", "Short.")):
            with Tmux([], env, project) as term:
                term.wait_for("Esc interrupts")
                term.type(prompt)
                term.press("Enter")
                term.wait_for(last)
                term.type("/quit")
                term.press("Enter")
                term.wait_for("[sagent exited 0]")
        monkeypatch.setenv("XDG_DATA_HOME", env["XDG_DATA_HOME"])
        short, long = list_sessions(project)  # newest first
        with Tmux(["--resume", long.id], env, project) as term:
            screen = term.wait_for("resumed session")
            resumed = gauge(wait_until(term, lambda s: "│ ctx " in s, "the status line"))
            # The resumed conversation's size (about 9k tokens of answer), not zero.
            assert resumed > 8000, screen
            term.type(f"/resume {short.id}")
            term.press("Enter")
            term.wait_for("─ resumed ")
            screen = wait_until(term, lambda s: gauge(s) != resumed, "the gauge following /resume")
            assert 0 < gauge(screen) < resumed - 7000
            term.type("/quit")
            term.press("Enter")
            term.wait_for("[sagent exited 0]")


def test_a_message_refused_at_the_budget_says_how_to_go_on(project: Path, tmp_path: Path) -> None:
    steps = [text_response("Expensive answer.", input_tokens=20_000), text_response("Going on.")]
    with FakeAnthropic(steps) as fake:
        with Tmux(["--max-budget-usd", "0.05"], env_for(fake, tmp_path), project) as term:
            term.wait_for("Esc interrupts")
            term.type("do the expensive thing")
            term.press("Enter")
            term.wait_for("Expensive answer.")
            term.type("and more")
            term.press("Enter")
            screen = term.wait_for("raises the limit")
            assert re.search(r"the budget of \$0\.05 is reached \(\$0\.06\d+ spent\).*: /budget 0\.\d+ raises", screen)
            term.type("/budget")
            term.press("Enter")
            term.wait_for("spent of $0.0500")
            term.type("/budget 1")
            term.press("Enter")
            term.wait_for("the next message goes on")
            term.type("go on")
            term.press("Enter")
            term.wait_for("Going on.")
        assert len(fake.requests) == 2
        asked = " ".join(user_texts(fake.requests[1]["body"]))
        assert asked.count("and more") == 1 and asked.endswith("go on")  # the refused message was kept


def test_the_completion_menu_keeps_its_rows_when_the_screen_is_full(project: Path, tmp_path: Path) -> None:
    with FakeAnthropic([]) as fake, Tmux([], env_for(fake, tmp_path), project, height=24) as term:
        term.wait_for("Esc interrupts")
        for _ in range(3):  # the scrollback fills the screen: the input sits on the last lines
            term.type("/help")
            term.wait_for("› /help")
            term.press("Enter")
            # Taken once the input box is empty again (an earlier /help's lines are still on the screen).
            wait_until(term, lambda s: "/help" not in bottom(visible(term)), "the /help to be taken")
        term.type("/")
        screen = wait_until(term, lambda s: "› /" in visible(term), "the menu")
        screen = visible(term)
        below = screen.split("› /")[-1].splitlines()
        names = re.compile(r"/(help|model|provider|effort|thinking|cost|advisor|context|memory|clear)\b")
        listed = [line for line in below if names.search(line)]
        assert len(listed) >= 7, screen
