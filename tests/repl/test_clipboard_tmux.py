"""Images pasted into the REPL in a real terminal (tmux): Ctrl+V reads the clipboard's image through the
platform's tool (a fake `xclip` on PATH here), shows `[Image #1]` in the input and sends the image with
the message; a model that cannot read images gets a note instead and the user a line saying so."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic, text_response
from tests.fakes.openai_chat_server import FakeChat, text_chunks
from tests.repl.test_input_tmux import PNG, last_user_blocks, paste
from tests.repl.test_repl_tmux import env_for
from tests.repl.tmux import HAVE_TMUX, Tmux

pytestmark = pytest.mark.skipif(not HAVE_TMUX, reason="tmux is not installed")


def fake_clipboard(tmp_path: Path, env: dict[str, str], image: bytes | None) -> dict[str, str]:
    """An environment whose `xclip` prints `image` (or fails as xclip does on an empty clipboard)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / "xclip"
    if image is None:
        script.write_text("#!/bin/sh\necho 'Error: target image/png not available' >&2\nexit 1\n")
    else:
        (tmp_path / "clip.png").write_bytes(image)
        script.write_text(f"#!/bin/sh\nexec cat '{tmp_path / 'clip.png'}'\n")
    script.chmod(0o755)
    env = {k: v for k, v in env.items() if k != "WAYLAND_DISPLAY"}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    return env


def test_ctrl_v_pastes_the_clipboard_image_as_a_placeholder_sent_as_an_image(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with FakeAnthropic([text_response("A tiny PNG.")]) as fake:
        env = fake_clipboard(tmp_path, env_for(fake, tmp_path), PNG)
        with Tmux([], env, project) as term:
            term.wait_for("Esc interrupts")
            term.type("what is in ")
            term.wait_for("› what is in")
            term.press("C-v")
            term.wait_for("what is in [Image #1]")
            term.type("and ")
            paste(term, "data:image/png;base64," + base64.b64encode(PNG[:-1] + b"\x01").decode())
            term.wait_for("and [Image #2]")
            term.press("Enter")
            screen = term.wait_for("A tiny PNG.")
            assert "↳ [Image #1]" in screen and "↳ [Image #2]" in screen
            blocks = last_user_blocks(fake.requests[0]["body"])
    assert blocks[0] == {"type": "text", "text": "what is in [Image #1] and [Image #2] "}
    images = [b for b in blocks if b["type"] == "image"]
    assert [i["source"]["data"] for i in images] == [
        base64.b64encode(PNG).decode(),
        base64.b64encode(PNG[:-1] + b"\x01").decode(),
    ]
    assert images[0]["source"]["media_type"] == "image/png"


def test_ctrl_v_with_no_image_on_the_clipboard_says_so(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with FakeAnthropic([]) as fake:
        env = fake_clipboard(tmp_path, env_for(fake, tmp_path), None)
        with Tmux([], env, project) as term:
            # The status bar, which the running app draws: before it has the terminal in raw mode, Ctrl+V
            # is the line discipline's literal-next key and never reaches the REPL (the banner is earlier).
            term.wait_for("default mode")
            term.press("C-v")
            term.wait_for("Ctrl+V: no image on the clipboard")
            assert fake.requests == []


def test_a_model_without_images_gets_a_note_and_the_user_a_line(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with FakeChat([text_chunks("I see text only.")]) as fake:
        env = {
            **fake_clipboard(tmp_path, env_for(fake, tmp_path), PNG),  # type: ignore[arg-type]
            "MOONSHOT_API_KEY": "mk-test",
        }
        args = ["--provider", "moonshot", "--model", "kimi-k2-thinking", "--base-url", fake.url]
        with Tmux(args, env, project) as term:
            term.wait_for("Esc interrupts")
            term.type("look ")
            term.wait_for("› look")
            term.press("C-v")
            term.wait_for("look [Image #1]")
            term.wait_for("[Image #1]: moonshot/kimi-k2-thinking does not read images; it goes as a note")
            term.press("Enter")
            screen = term.wait_for("I see text only.")
            assert "moonshot/kimi-k2-thinking does not read images" in screen
            body = fake.requests[0]["body"]
    sent = [m for m in body["messages"] if m["role"] == "user"][-1]
    content = sent["content"]
    text = content if isinstance(content, str) else " ".join(p.get("text", "") for p in content)
    assert "image_url" not in str(content)
    assert "the current model cannot read images" in text
