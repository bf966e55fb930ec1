"""A permission question in the real REPL (tmux) while the user goes on typing: the question shows the call
it decides, a message typed meanwhile is queued (it never answers the question and never moves the waiting
call to the background), and Esc stops the turn with the background jobs it started."""

from __future__ import annotations

import itertools
import time
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.anthropic_server import FakeAnthropic, Reply, text_response
from tests.repl.test_permissions_tmux import result_text, tool_results
from tests.repl.test_repl_tmux import env_for
from tests.repl.tmux import HAVE_TMUX, Tmux

pytestmark = pytest.mark.skipif(not HAVE_TMUX, reason="tmux is not installed")

OUTSIDE = ["--sandbox", "danger-full-access"]  # without the OS sandbox, where Bash asks in default mode
_ids = itertools.count()


def bash(command: str, **extra: Any) -> Reply:
    """One Bash call, with an id of its own (two calls in one history must not share one)."""
    block = {
        "type": "tool_use",
        "id": f"toolu_wait{next(_ids)}",
        "name": "Bash",
        "input": {"command": command, **extra},
    }
    return Reply([block], "tool_use")


@pytest.fixture
def project(tmp_path: Path, trust_tmp_path: None) -> Path:
    root = tmp_path / "project"
    (root / ".sagent").mkdir(parents=True)
    (root / "listed-file.txt").write_text("here\n")
    return root


def question(screen: str) -> str:
    """The question's lines at the bottom of the screen (from its title to the input rule)."""
    start = screen.rfind("? Allow")
    assert start >= 0, screen
    return screen[start:].split("─" * 10)[0]


def test_a_message_typed_while_a_question_waits_is_queued_and_the_question_keeps_its_call(
    project: Path, tmp_path: Path
) -> None:
    steps = [bash("ls -la"), bash("sleep 30; echo slept"), text_response("never asked for")]
    with FakeAnthropic(steps) as fake, Tmux(OUTSIDE, env_for(fake, tmp_path), project, height=40) as term:
        term.wait_for("default mode")
        term.type("look around")
        term.press("Enter")
        term.wait_for("Allow Bash?")
        asked = question(term.wait_for("Bash(ls:*)"))
        assert "ls -la" in asked, asked  # the question names its call, not only its tool
        screen = term.wait_for("Bash(ls -la) waiting for your approval")  # not "running"
        assert "running Bash" not in screen, screen

        term.type("then have a nap")
        term.press("Enter")
        term.wait_for("queued: then have a nap")
        time.sleep(1.5)  # past the moment a typed message moves long calls to the background
        screen = term.screen()
        assert "moved to the background" not in screen, screen
        assert "ls -la" in question(screen) and "Bash(ls:*)" in question(screen), screen
        assert len(fake.requests) == 1  # the model heard nothing yet: the call has no result

        term.press("1")  # approves `ls -la`, the call on screen
        asked = question(term.wait_for("Bash(sleep:*)"))
        assert "sleep 30; echo slept" in asked and "Bash(ls:*)" not in asked, asked
        [listed] = tool_results(fake)
        assert "listed-file.txt" in result_text(listed)  # it ran once approved, in its round
        assert "background" not in result_text(listed)
        last_user = fake.requests[-1]["body"]["messages"][-1]
        assert "then have a nap" in str(last_user["content"])  # the queued message came with the result

        term.press("Escape")  # stops the turn while the question waits
        term.wait_for("interrupted")
        time.sleep(1.0)
        screen = term.screen()
        assert "Allow Bash?" not in screen.split("interrupted")[-1], screen
        assert len(fake.requests) == 2  # nothing started a new turn


def test_esc_stops_the_jobs_of_the_turn_and_their_results_start_no_new_turn(project: Path, tmp_path: Path) -> None:
    waits = "while [ ! -e go ]; do sleep 0.1; done; echo late"
    steps = [bash(waits, background=True), bash("sleep 30"), text_response("never asked for")]
    with FakeAnthropic(steps) as fake, Tmux(OUTSIDE, env_for(fake, tmp_path), project, height=40) as term:
        term.wait_for("default mode")
        term.type("work in the background")
        term.press("Enter")
        term.wait_for("Allow Bash?")
        screen = term.wait_for("Bash(echo:*)")
        assert "started in the background" not in screen  # not before it is approved
        term.press("1")
        term.wait_for("started in the background")
        assert "$ sleep 30" in question(term.wait_for("Bash(sleep:*)"))
        term.press("Escape")
        term.wait_for("interrupted")
        (project / "go").write_text("")  # the job would finish now, were it still running
        term.type("/jobs")
        term.press("Enter")
        # The listing's last line: "cancelled" alone is on the screen already, in the turn's notice.
        listing = term.wait_for("/fg ID waits for one").split("› /jobs")[-1]
        assert "job-1" in listing and "cancelled" in listing, listing
        time.sleep(1.5)
        assert len(fake.requests) == 2, [r["body"]["messages"][-1] for r in fake.requests]


def test_a_message_that_starts_with_an_answer_key_is_queued_whole_and_answers_nothing(
    project: Path, tmp_path: Path
) -> None:
    steps = [bash("ls -la"), text_response("Listed, and read both notes.")]
    with FakeAnthropic(steps) as fake, Tmux(OUTSIDE, env_for(fake, tmp_path), project, height=40) as term:
        term.wait_for("default mode")
        term.type("look around")
        term.press("Enter")
        term.wait_for("Bash(ls:*)")
        term.type("no need for hidden files")
        term.press("Enter")
        term.wait_for("queued: no need for hidden files")
        term.type("1 more thing: be brief")
        term.press("Enter")
        screen = term.wait_for("queued: 1 more thing: be brief")
        assert "why not?" not in screen and "refused" not in screen and "approved" not in screen, screen
        assert "ls -la" in question(screen)  # still asking
        term.press("y")
        term.wait_for("Listed, and read both notes.")
        [listed] = tool_results(fake)
        assert "listed-file.txt" in result_text(listed)
        sent = str(fake.requests[-1]["body"]["messages"][-1]["content"])
        assert "no need for hidden files" in sent and "1 more thing: be brief" in sent


def test_after_esc_a_result_of_an_earlier_turns_job_waits_for_the_next_message(project: Path, tmp_path: Path) -> None:
    waits = "while [ ! -e go ]; do sleep 0.1; done; echo the build is done"
    steps = [
        bash(waits, background=True),
        text_response("It builds in the background."),
        bash("sleep 30"),
        text_response("The build is done, you said stop."),
    ]
    with FakeAnthropic(steps) as fake, Tmux(OUTSIDE, env_for(fake, tmp_path), project, height=40) as term:
        term.wait_for("default mode")
        term.type("start the build")
        term.press("Enter")
        term.wait_for("Bash(echo:*)")
        term.press("1")
        term.wait_for("It builds in the background.")
        term.type("now wait a bit")
        term.press("Enter")
        term.wait_for("Bash(sleep:*)")
        term.press("Escape")
        term.wait_for("interrupted")
        (project / "go").write_text("")  # the first turn's job finishes after the stop
        term.type("/jobs")
        term.press("Enter")
        term.wait_for("done")
        time.sleep(1.0)
        assert len(fake.requests) == 3  # its result started no turn by itself
        term.type("what happened?")
        term.press("Enter")
        term.wait_for("The build is done, you said stop.")
        sent = str(fake.requests[-1]["body"]["messages"])
        assert "the build is done" in sent and "what happened?" in sent
