"""Pasted images without a terminal: data URLs, the clipboard tools, the placeholders' parts."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from sagent.repl import clipboard
from sagent.repl.clipboard import ClipboardError, PastedImages, data_url_image, read_clipboard_image
from sagent.types import ImagePart, TextPart

PNG = b"\x89PNG\r\n\x1a\n" + bytes(25)


def test_a_data_url_is_an_image_only_when_it_holds_one() -> None:
    assert data_url_image("data:image/png;base64," + base64.b64encode(PNG).decode() + "\n") == PNG
    assert data_url_image("data:image/png;base64," + base64.b64encode(b"not an image").decode()) is None
    assert data_url_image("data:image/png;base64,@@@") is None
    assert data_url_image("see data:image/png;base64,AAAA") is None
    assert data_url_image("data:text/plain;base64," + base64.b64encode(PNG).decode()) is None


def test_placeholders_send_each_known_image_once_in_order() -> None:
    images = PastedImages()
    assert images.add(PNG) == "[Image #1]" and images.add(PNG + b"x") == "[Image #2]"
    parts = images.parts_for("[Image #2] vs [Image #1], again [Image #2], and [Image #9]")
    assert [type(p) for p in parts] == [TextPart, ImagePart, TextPart, ImagePart]
    assert parts[0].text.startswith('<image path="[Image #2]" type="image/png"')  # type: ignore[union-attr]
    assert parts[3] == ImagePart(base64.b64encode(PNG).decode(), "image/png")


def test_the_clipboard_tools_missing_or_holding_text_say_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(clipboard.sys, "platform", "linux")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ClipboardError, match="install wl-clipboard"):
        read_clipboard_image()
    tool = tmp_path / "wl-paste"
    tool.write_text("#!/bin/sh\necho just text\n")
    tool.chmod(0o755)
    with pytest.raises(ClipboardError, match="no PNG, JPEG, GIF or WebP image"):
        read_clipboard_image()
    assert clipboard._from_applescript("«data PNGf89504E47»\n".encode()) == bytes.fromhex("89504E47")


def test_a_new_paste_never_takes_a_number_the_conversation_already_uses() -> None:
    from types import SimpleNamespace

    from sagent.repl.clipboard import highest_in_history
    from sagent.types import UserMessage

    sent = PastedImages()
    sent.add(PNG), sent.add(PNG)
    resumed = UserMessage((TextPart("compare [Image #1] and [Image #2]"), *sent.parts_for("[Image #1] [Image #2]")))
    host = SimpleNamespace(agent=SimpleNamespace(history=[resumed]))
    assert highest_in_history(host) == 2  # type: ignore[arg-type]
    assert PastedImages().add(PNG, highest_in_history(host)) == "[Image #3]"  # type: ignore[arg-type]
