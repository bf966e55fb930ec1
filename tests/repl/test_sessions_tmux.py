"""Sessions in the real REPL (tmux, the fake Anthropic server), read from the screen as a user would:
/rewind puts back a file sagent edited, /fork leaves the original session's file as it was, the ids in a
list differ, and /resume and `sagent --resume` filter their list as you type."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response
from tests.repl.test_repl_tmux import env_for, user_texts
from tests.repl.tmux import HAVE_TMUX, Tmux

pytestmark = pytest.mark.skipif(not HAVE_TMUX, reason="tmux is not installed")


@pytest.fixture
def project(tmp_path: Path, trust_tmp_path: None) -> Path:
    """A project whose settings let the file tools and Bash run unasked (the questions are tested in
    tests/repl/test_permissions_tmux.py)."""
    root = tmp_path / "project"
    (root / ".sagent").mkdir(parents=True)
    (root / ".sagent" / "settings.json").write_text('{"permissions": {"allow": ["Bash", "Edit", "Write", "Read"]}}')
    (root / "app.py").write_text("print('v1')\n")
    return root


def sessions_folder(tmp_path: Path) -> Path:
    (folder,) = (tmp_path / "data" / "sagent" / "sessions").iterdir()
    return folder


def wait_after(term: Tmux, mark: str, text: str, timeout: float = 20.0) -> str:
    """Wait until `text` shows below the last `mark` (the input box under a line just printed)."""
    deadline = time.monotonic() + timeout
    while True:
        screen = term.screen()
        if mark in screen and text in screen.split(mark)[-1]:
            return screen
        if time.monotonic() > deadline:
            raise AssertionError(f"{text!r} did not show below {mark!r}; the screen was:\n{screen}")
        time.sleep(0.1)


def wait_gone(term: Tmux, text: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while text in term.screen():
        if time.monotonic() > deadline:
            raise AssertionError(f"{text!r} is still on the screen:\n{term.screen()}")
        time.sleep(0.1)


def send(term: Tmux, text: str) -> None:
    term.type(text)
    term.press("Enter")


def test_rewind_puts_back_the_file_sagent_edited_and_the_message_returns_to_the_input(
    project: Path, tmp_path: Path
) -> None:
    steps = [
        tool_use_response([("Read", {"path": "app.py"})]),
        tool_use_response([("Edit", {"path": "app.py", "old_string": "v1", "new_string": "v2"})]),
        text_response("Now it prints v2."),
        text_response("Then v3 it is."),
    ]
    with FakeAnthropic(steps) as fake, Tmux([], env_for(fake, tmp_path), project) as term:
        term.wait_for("Esc interrupts")
        send(term, "make it print v2")
        wait_after(term, "Now it prints v2.", "─ this turn")  # the turn is over: /rewind is not refused
        assert (project / "app.py").read_text() == "print('v2')\n"

        send(term, "/rewind")
        screen = term.wait_for("Rewind to before which message?")
        assert "1. make it print v2  (1 file changed since)" in screen
        term.press("Enter")
        screen = term.wait_for("go back on")  # a message with files changed since: what to go back on
        assert "› the conversation and the files: 1 file put back" in screen
        assert "the conversation only (the files stay as they are)" in screen
        term.press("Enter")
        screen = term.wait_for("─ rewound to before")
        assert (project / "app.py").read_text() == "print('v1')\n"
        assert f"put back {project / 'app.py'}" in screen
        # The message is back in the input box, to edit and send again.
        wait_after(term, "─ rewound to before", "› make it print v2")
        term.press("C-u")  # clear the input box (what was put back)
        send(term, "print v3 instead")
        term.wait_for("Then v3 it is.")
        last = fake.requests[-1]["body"]
    # The model is sent the conversation as rewound: the dropped message and its edit are gone.
    assert user_texts(last) == ["print v3 instead"]
    assert not any(b.get("type") == "tool_use" for m in last["messages"] for b in m["content"])


def test_fork_continues_in_a_new_session_and_the_original_is_left_untouched(project: Path, tmp_path: Path) -> None:
    steps = [text_response("Answer one."), text_response("Answer two."), text_response("Answer in the fork.")]
    with FakeAnthropic(steps) as fake, Tmux([], env_for(fake, tmp_path), project) as term:
        term.wait_for("Esc interrupts")
        send(term, "first question")
        term.wait_for("Answer one.")
        send(term, "second question")
        term.wait_for("Answer two.")
        (original,) = sessions_folder(tmp_path).glob("*.jsonl")
        before = original.read_bytes()

        send(term, "/fork")
        term.wait_for("Fork the session before which message?")
        term.type("second")  # the list is searched: only that message is left to pick
        screen = term.wait_for("1 of 3 · ")
        term.press("Enter")
        screen = term.wait_for("the original is unchanged")
        assert f"─ forked {original.stem} before “second question” into " in screen
        wait_after(term, "the original is unchanged", "› second question")
        term.press("C-u")
        send(term, "another second question")
        term.wait_for("Answer in the fork.")

        send(term, "/sessions")
        screen = term.wait_for("/resume alone searches them")
        rows = re.findall(r"^\s*\d+\. (\S+) .*$", screen, re.MULTILINE)
        assert len(rows) == 2 and rows[0] != rows[1]
        assert re.search(r"^\s*2\. \S+ .* └ first question\s+\(open now\)$", screen, re.MULTILINE), screen
        last = fake.requests[-1]["body"]

    assert original.read_bytes() == before  # not a byte of the original changed
    assert user_texts(last) == ["first question", "another second question"]
    (forked,) = [p for p in sessions_folder(tmp_path).glob("*.jsonl") if p != original]
    header = json.loads(forked.read_text().splitlines()[0])
    assert header["forked_from"] == original.stem


def run_headless(env: dict[str, str], cwd: Path, prompt: str) -> None:
    command = [sys.executable, "-m", "sagent.cli.main", "-p", prompt]
    subprocess.run(command, env=env, cwd=cwd, check=True, capture_output=True, timeout=60)


def test_ids_in_the_list_differ_and_resume_filters_as_you_type(project: Path, tmp_path: Path) -> None:
    topics = ["alpha parser work", "beta release notes", "gamma flaky test"]
    steps = [text_response(f"Done with {t}.") for t in topics]
    with FakeAnthropic(steps) as fake:
        env = env_for(fake, tmp_path)
        for topic in topics:  # within a minute or so: ids that a cut to the minute would not tell apart
            run_headless(env, project, topic)

        with Tmux([], env, project) as term:
            term.wait_for("Esc interrupts")
            send(term, "/sessions")
            screen = term.wait_for("/resume alone searches them")
            ids = re.findall(r"^\s*\d+\. (\S+) ", screen, re.MULTILINE)
            assert len(ids) == 4 and len(set(ids)) == 4
            assert all(re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{4,}", i) for i in ids), ids
            for topic in topics:
                assert topic in screen

            send(term, "/resume")
            term.wait_for("Resume which session?")
            term.type("beta")
            screen = term.wait_for("1 of 4 · ")
            listed = screen.split("Resume which session?")[-1]
            assert "beta release notes" in listed and "alpha" not in listed and "gamma" not in listed
            term.press("Enter")
            screen = term.wait_for("─ resumed ")
            assert "Done with beta release notes." in screen.split("/resume")[-1]
            send(term, "/quit")
            term.wait_for("[sagent exited 0]")

        with Tmux(["--resume"], env, project) as term:
            term.wait_for("Resume which session?")
            term.type("gamma")
            term.wait_for("1 of 4 · ")
            term.press("Enter")
            screen = term.wait_for("resumed session")
            assert "Done with gamma flaky test." in screen and "Done with alpha" not in screen


def test_bare_resume_and_rewind_in_a_new_session_do_not_crash(project: Path, tmp_path: Path) -> None:
    with FakeAnthropic([]) as fake, Tmux([], env_for(fake, tmp_path), project) as term:
        term.wait_for("Esc interrupts")
        send(term, "/resume")
        screen = term.wait_for("Resume which session?")
        assert "(open now)" in screen
        term.press("Escape")
        wait_gone(term, "Resume which session?")
        send(term, "/rewind")
        screen = term.wait_for("/rewind: no message of yours to go back to yet")
        assert "failed" not in screen and "Traceback" not in screen
        send(term, "/quit")
        term.wait_for("[sagent exited 0]")


def test_rewind_by_number_can_put_back_the_files_alone(project: Path, tmp_path: Path) -> None:
    steps = [
        tool_use_response([("Read", {"path": "app.py"})]),
        tool_use_response([("Edit", {"path": "app.py", "old_string": "v1", "new_string": "v2"})]),
        text_response("Now it prints v2."),
        text_response("Still here."),
    ]
    with FakeAnthropic(steps) as fake, Tmux([], env_for(fake, tmp_path), project) as term:
        term.wait_for("Esc interrupts")
        send(term, "make it print v2")
        wait_after(term, "Now it prints v2.", "─ this turn")  # the turn is over: /rewind is not refused
        send(term, "/rewind 1 files")
        screen = term.wait_for("the conversation kept")
        assert (project / "app.py").read_text() == "print('v1')\n"
        assert f"put back {project / 'app.py'}" in screen
        send(term, "is it v1 again?")
        term.wait_for("Still here.")
        last = fake.requests[-1]["body"]
    assert user_texts(last) == ["make it print v2", "is it v1 again?"]
