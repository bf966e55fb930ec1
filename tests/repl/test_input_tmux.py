"""The REPL's input affordances in a real terminal (tmux) against the fake Anthropic server: `@` completion
that attaches the file, a pasted image path that attaches the image, `!command` whose output shows and
goes with the next message, and Esc that cancels a running `!command`."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic, text_response
from tests.repl.test_repl_tmux import env_for
from tests.repl.tmux import HAVE_TMUX, Tmux

pytestmark = pytest.mark.skipif(not HAVE_TMUX, reason="tmux is not installed")

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(17)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def main():\n    return 'forty-two'\n")
    (root / "README.md").write_text("# Demo\n")
    (root / "src" / "happy.py").write_text("")
    (root / "src" / "map.py").write_text("")
    return root


def last_user_blocks(body: dict) -> list[dict]:
    return [m for m in body["messages"] if m["role"] == "user"][-1]["content"]


def paste(term: Tmux, text: str) -> None:
    """Paste as a terminal does: wrapped in bracketed-paste codes, which the REPL asked for."""
    term._tmux("set-buffer", "--", text)
    term._tmux("paste-buffer", "-p", "-t", "main")


def test_at_completion_offers_a_fuzzy_match_and_the_file_reaches_the_model(project: Path, tmp_path: Path) -> None:
    answer = text_response("It returns forty-two.")
    with FakeAnthropic([answer]) as fake, Tmux([], env_for(fake, tmp_path), project) as term:
        term.wait_for("Esc interrupts")
        term.type("what does @apy")
        screen = term.wait_for("src/app.py")  # the completion menu, from a fuzzy match on the file name
        assert "src/happy.py" in screen and "src/map.py" in screen  # the menu has room for several rows
        term.press("Tab")  # the first match, into the input
        term.press("Enter")  # taken
        term.type("return? and @nobody")
        term.wait_for("what does @src/app.py return? and @nobody")
        term.press("Enter")
        screen = term.wait_for("It returns forty-two.")
        assert "↳ @src/app.py" in screen
        assert "@nobody: no such file or folder; sent as plain text" in screen
        assert "return 'forty-two'" not in screen  # the file goes to the model, not onto the screen
        blocks = last_user_blocks(fake.requests[0]["body"])
    assert blocks[0] == {"type": "text", "text": "what does @src/app.py return? and @nobody"}
    assert blocks[1]["text"].startswith('<file path="src/app.py" lines="2">')
    assert "return 'forty-two'" in blocks[1]["text"] and len(blocks) == 2


def test_a_pasted_image_path_with_escaped_spaces_attaches_the_image(project: Path, tmp_path: Path) -> None:
    shot = tmp_path / "Screen Shot 1.png"
    shot.write_bytes(PNG)
    with FakeAnthropic([text_response("A tiny PNG.")]) as fake, Tmux([], env_for(fake, tmp_path), project) as term:
        term.wait_for("Esc interrupts")
        term.type("what is this ")
        term.wait_for("› what is this")  # the input box is drawn: the REPL has asked for bracketed paste
        paste(term, str(shot).replace(" ", "\\ "))
        term.wait_for(f'@"{shot}"')  # the dragged path became a mention
        term.press("Enter")
        screen = term.wait_for("A tiny PNG.")
        assert f"↳ @{shot}" in screen
        blocks = last_user_blocks(fake.requests[0]["body"])
    image = next(b for b in blocks if b["type"] == "image")
    assert image["source"] == {"type": "base64", "media_type": "image/png", "data": base64.b64encode(PNG).decode()}


def test_a_bang_command_shows_its_output_and_it_goes_with_the_next_message(project: Path, tmp_path: Path) -> None:
    with FakeAnthropic([text_response("It said hello.")]) as fake, Tmux([], env_for(fake, tmp_path), project) as term:
        term.wait_for("Esc interrupts")
        term.type("!echo hello-from-$((6*7)); ls src")
        term.press("Enter")
        screen = term.wait_for("go with your next message")
        assert "│ hello-from-42" in screen and "│ app.py" in screen
        assert fake.requests == []  # the user ran it: no model, no permission question
        term.type("what did it print?")
        term.press("Enter")
        screen = term.wait_for("It said hello.")
        assert "↳ $ echo hello-from-$((6*7)); ls src" in screen
        blocks = last_user_blocks(fake.requests[0]["body"])
    assert blocks[0]["text"] == "what did it print?"
    assert blocks[1]["text"].startswith('<shell command="echo hello-from-$((6*7)); ls src">')
    assert "hello-from-42\napp.py" in blocks[1]["text"]


def test_esc_cancels_a_running_bang_command_and_a_full_screen_leaves_room_for_completions(
    project: Path, tmp_path: Path
) -> None:
    with FakeAnthropic([]) as fake, Tmux([], env_for(fake, tmp_path), project) as term:
        term.wait_for("Esc interrupts")
        term.type("!sleep 60; echo never")
        term.press("Enter")
        term.wait_for("running the command")
        term.press("Escape")
        screen = term.wait_for("cancelled; nothing goes to the model")
        assert "never" not in screen.split("cancelled")[-1]
        term.type("!seq 1 30")  # the screen fills: the input box is on the last rows of the terminal now
        term.press("Enter")
        term.wait_for("│ 30")
        term.type("@apy")
        screen = term.wait_for("src/app.py")
        assert "src/happy.py" in screen and "src/map.py" in screen  # the menu still has room for its rows
        term.press("C-u")
        term.type("/quit")
        term.press("Enter")
        term.wait_for("[sagent exited 0]")
        assert fake.requests == []


def test_a_task_on_the_command_line_opens_the_repl_with_it_as_the_first_message(project: Path, tmp_path: Path) -> None:
    with (
        FakeAnthropic([text_response("Fixed it.")]) as fake,
        Tmux(["fix", "the test in @src/app.py"], env_for(fake, tmp_path), project) as term,
    ):
        screen = term.wait_for("Fixed it.")
        assert "› fix the test in @src/app.py" in screen and "↳ @src/app.py" in screen
        term.type("/quit")
        term.press("Enter")
        term.wait_for("[sagent exited 0]")  # a REPL, not a one-shot task: it waited for /quit
        blocks = last_user_blocks(fake.requests[0]["body"])
    assert blocks[0]["text"] == "fix the test in @src/app.py" and "return 'forty-two'" in blocks[1]["text"]


def test_a_task_on_the_command_line_without_a_terminal_runs_as_with_p(project: Path, tmp_path: Path) -> None:
    import subprocess
    import sys

    with FakeAnthropic([text_response("Done headless.")]) as fake:
        run = subprocess.run(
            [sys.executable, "-m", "sagent.cli.main", "say", "hi"],
            env=env_for(fake, tmp_path),
            cwd=project,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 0 and run.stdout.strip() == "Done headless."
        assert last_user_blocks(fake.requests[0]["body"])[0]["text"] == "say hi"
        both = subprocess.run(
            [sys.executable, "-m", "sagent.cli.main", "-p", "one", "two"],
            env=env_for(fake, tmp_path),
            cwd=project,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert (
        both.returncode == 2
        and both.stderr == "sagent: error: give the task once: as -p TASK or as the words after the flags\n"
    )
