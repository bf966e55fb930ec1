"""Rewind in the real REPL (tmux, the fake Anthropic server) never loses the user's work: a file changed by
hand since sagent wrote it is shown as a diff and asked about, kept unless the user says otherwise; a file
an Edit failed on is not touched at all."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response
from tests.repl.test_repl_tmux import env_for
from tests.repl.test_sessions_tmux import project, send, wait_after
from tests.repl.tmux import HAVE_TMUX, Tmux

pytestmark = pytest.mark.skipif(not HAVE_TMUX, reason="tmux is not installed")
__all__ = ["project"]  # the fixture: a project whose settings let the file tools run unasked

EDIT_V2 = [
    tool_use_response([("Read", {"path": "app.py"})]),
    tool_use_response([("Edit", {"path": "app.py", "old_string": "v1", "new_string": "v2"})]),
    text_response("Now it prints v2."),
]


def append_by_hand(project: Path) -> None:
    with (project / "app.py").open("a") as f:
        f.write("print('added by hand')\n")


def test_a_file_an_edit_failed_on_keeps_the_line_the_user_added(project: Path, tmp_path: Path) -> None:
    steps = [
        tool_use_response([("Read", {"path": "app.py"})]),
        tool_use_response([("Edit", {"path": "app.py", "old_string": "v9", "new_string": "v2"})]),
        text_response("That edit did not apply."),
    ]
    with FakeAnthropic(steps) as fake, Tmux([], env_for(fake, tmp_path), project) as term:
        term.wait_for("Esc interrupts")
        send(term, "make it print v2")
        wait_after(term, "That edit did not apply.", "─ this turn")
        append_by_hand(project)
        send(term, "/rewind")
        screen = term.wait_for("Rewind to before which message?")
        assert "1. make it print v2" in screen and "changed since" not in screen
        term.press("Enter")  # nothing to put back: the conversation goes back at once
        screen = term.wait_for("─ rewound to before")
        assert "put back" not in screen.split("─ rewound to before")[-1]
    assert (project / "app.py").read_text() == "print('v1')\nprint('added by hand')\n"


def test_a_file_changed_by_hand_is_shown_asked_about_and_kept(project: Path, tmp_path: Path) -> None:
    with FakeAnthropic(EDIT_V2) as fake, Tmux([], env_for(fake, tmp_path), project) as term:
        term.wait_for("Esc interrupts")
        send(term, "make it print v2")
        wait_after(term, "Now it prints v2.", "─ this turn")
        append_by_hand(project)
        send(term, "/rewind")
        screen = term.wait_for("Rewind to before which message?")
        assert "1. make it print v2  (1 file changed since; 1 edited after sagent: asked first)" in screen
        term.press("Enter")
        screen = term.wait_for("go back on")
        assert "› the conversation and the files: 1 file put back (1 edited since: asked first)" in screen
        term.press("Enter")  # the conversation and the files
        screen = term.wait_for("app.py changed since sagent wrote it: put it back? (1 of 1)")
        asked = screen.split("/rewind")[-1]
        assert f"! {project / 'app.py'} changed since sagent last wrote it" in asked
        assert "print('added by hand')" in asked  # the diff: the user's line would go
        assert "› keep it as it is now (the changes stay)" in asked
        assert "put it back as it was before “make it print v2” (the changes shown are lost)" in asked
        assert (project / "app.py").read_text() == "print('v2')\nprint('added by hand')\n"  # nothing yet
        term.press("Enter")  # keep it
        screen = term.wait_for("─ rewound to before")
        assert f"left as it is (changed since sagent wrote it): {project / 'app.py'}" in screen
        wait_after(term, "─ rewound to before", "› make it print v2")
    assert (project / "app.py").read_text() == "print('v2')\nprint('added by hand')\n"


def test_the_user_can_choose_to_put_a_changed_file_back(project: Path, tmp_path: Path) -> None:
    with FakeAnthropic(EDIT_V2) as fake, Tmux([], env_for(fake, tmp_path), project) as term:
        term.wait_for("Esc interrupts")
        send(term, "make it print v2")
        wait_after(term, "Now it prints v2.", "─ this turn")
        append_by_hand(project)
        send(term, "/rewind 1 files")  # by number: the question comes all the same
        term.wait_for("put it back? (1 of 1)")
        term.press("Down")
        term.press("Enter")
        screen = term.wait_for("the conversation kept")
        assert f"put back {project / 'app.py'}" in screen
    assert (project / "app.py").read_text() == "print('v1')\n"


def test_esc_on_the_question_cancels_the_whole_rewind(project: Path, tmp_path: Path) -> None:
    steps = [*EDIT_V2, text_response("Still v2.")]
    with FakeAnthropic(steps) as fake, Tmux([], env_for(fake, tmp_path), project) as term:
        term.wait_for("Esc interrupts")
        send(term, "make it print v2")
        wait_after(term, "Now it prints v2.", "─ this turn")
        append_by_hand(project)
        send(term, "/rewind 1")
        term.wait_for("put it back? (1 of 1)")
        term.press("Escape")
        send(term, "still there?")
        screen = term.wait_for("Still v2.")
        assert "─ rewound to before" not in screen
    assert (project / "app.py").read_text() == "print('v2')\nprint('added by hand')\n"


def input_box(screen: str, mark: str) -> str:
    """The text after the last prompt sign below `mark`: what the input box holds."""
    return screen.split(mark)[-1].rsplit("› ", 1)[-1].split("\n")[0].rstrip()


def wait_for_input_box(term: Tmux, mark: str, wanted: str, timeout: float = 20.0) -> str:
    """Wait until the input box below the last `mark` holds `wanted` (an earlier `mark` on the screen, followed
    by the message sent again, must not pass for the new one); the screen."""
    deadline = time.monotonic() + timeout
    while True:
        screen = term.screen()
        if mark in screen and input_box(screen, mark) == wanted:
            return screen
        if time.monotonic() > deadline:
            raise AssertionError(f"the input box below {mark!r} never held {wanted!r}; the screen was:\n{screen}")
        time.sleep(0.1)


def send_what_the_box_holds(term: Tmux, mark: str, wanted: str, answer: str) -> None:
    """Press Enter on the input box below `mark` holding `wanted`, once the screen has settled, and again if a
    loaded machine lost the key (the box still holds it and no answer came); the message is sent once, as
    the request the test checks shows."""
    settled = ""
    for _ in range(30):  # up to 3 s for the screen to stop changing after the rewind redrew it
        screen = term.screen()
        if screen == settled:
            break
        settled = screen
        time.sleep(0.1)
    for _ in range(3):
        term.press("Enter")
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            screen = term.screen()
            if answer in screen.split(mark)[-1] or input_box(screen, mark) != wanted:
                return
            time.sleep(0.1)


def test_rewind_and_fork_put_back_what_was_typed_once_however_often(project: Path, tmp_path: Path) -> None:
    steps = [text_response(f"Answer {n}.") for n in range(5)]
    with FakeAnthropic(steps) as fake, Tmux([], env_for(fake, tmp_path), project) as term:
        term.wait_for("Esc interrupts")
        send(term, "explain @app.py")
        wait_after(term, "Answer 0.", "─ this turn")
        for n in (1, 2):  # each time the message comes back as typed, and sent again it attaches app.py once
            send(term, "/rewind 1")
            wait_for_input_box(term, "─ rewound to before", "explain @app.py")
            send_what_the_box_holds(term, "─ rewound to before", "explain @app.py", f"Answer {n}.")
            wait_after(term, f"Answer {n}.", "─ this turn")
        send(term, "/fork 1")
        screen = wait_for_input_box(term, "the original is unchanged", "explain @app.py")
        assert "<file" not in screen
        send_what_the_box_holds(term, "the original is unchanged", "explain @app.py", "Answer 3.")
        wait_after(term, "Answer 3.", "─ this turn")
        sent = fake.requests[-1]["body"]["messages"]
    (user,) = [m for m in sent if m["role"] == "user"]
    texts = [b["text"] for b in user["content"] if b.get("type") == "text"]
    assert texts[0] == "explain @app.py" and sum(t.count('<file path="app.py"') for t in texts) == 1
