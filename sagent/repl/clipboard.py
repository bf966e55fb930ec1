"""Images pasted into the REPL's input: Ctrl+V reads an image from the system clipboard, and a pasted
`data:image/png;base64,...` URL is taken the same way. Each goes into the input as a placeholder,
`[Image #1]`, and is sent with the message in which the placeholder is typed, as an image the model sees.

The clipboard is read with the tool the platform has: `wl-paste` (Wayland), `xclip` (X11), `pngpaste` or
`osascript` (macOS). The tool runs in a thread with a time limit, so a clipboard owner that never answers
cannot freeze the input. The images stay in memory for the REPL's life: a message rewound and sent again
still finds its `[Image #N]`.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import shutil
import subprocess
import sys
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sagent.attachments import MAX_IMAGE_BYTES, image_media_type
from sagent.types import ImagePart, TextPart, UserContent

if TYPE_CHECKING:
    from prompt_toolkit.buffer import Buffer
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

    from sagent.repl.host import ReplHost

READ_TIMEOUT_S = 5.0
"""How long a clipboard tool may take to hand over an image."""
PLACEHOLDER = re.compile(r"\[Image #(\d+)\]")
"""How a pasted image is written in the input."""
_DATA_URL = re.compile(r"\Adata:(image/(?:png|jpeg|gif|webp));base64,([A-Za-z0-9+/=\s]+)\Z")


class ClipboardError(Exception):
    """No image could be read from the clipboard; the message says why in one line."""


@dataclass
class PastedImages:
    """The images pasted into one REPL, by number."""

    images: dict[int, ImagePart] = field(default_factory=dict)

    def add(self, data: bytes, after: int = 0) -> str:
        """Keep an image's bytes (already checked to be an image) and return its placeholder, numbered past
        every image kept and past `after` (the highest number the conversation already uses)."""
        media = image_media_type(data) or "image/png"
        number = max([after, *self.images]) + 1
        self.images[number] = ImagePart(base64.b64encode(data).decode("ascii"), media)
        return f"[Image #{number}]"

    def parts_for(self, text: str) -> list[UserContent]:
        """The parts that send the images whose placeholders `text` holds, each once, in order: a header
        naming the placeholder, then the image."""
        parts: list[UserContent] = []
        seen: set[int] = set()
        for found in PLACEHOLDER.finditer(text):
            number = int(found.group(1))
            image = self.images.get(number)
            if image is None or number in seen:
                continue
            seen.add(number)
            size = len(image.data) * 3 // 4
            parts += [TextPart(f'<image path="[Image #{number}]" type="{image.media_type}" bytes="{size}"/>'), image]
        return parts


_BY_HOST: weakref.WeakKeyDictionary[object, PastedImages] = weakref.WeakKeyDictionary()


def pasted_images(host: ReplHost) -> PastedImages:
    """The images pasted into this REPL so far."""
    found = _BY_HOST.get(host)
    if found is None:
        found = _BY_HOST[host] = PastedImages()
    return found


def highest_in_history(host: ReplHost) -> int:
    """The highest `[Image #N]` the conversation's messages already send (a resumed session's included),
    so a new paste never takes the number of an image sent before: a message taken back to edit keeps
    naming its own image."""
    numbers = [0]
    for message in host.agent.history:
        for part in getattr(message, "content", ()):
            if isinstance(part, TextPart) and part.text.startswith('<image path="[Image #'):
                numbers += [int(n) for n in PLACEHOLDER.findall(part.text[:40])]
    return max(numbers)


def checked_image(data: bytes) -> bytes:
    """`data` when it is a PNG, JPEG, GIF or WebP image small enough to send; ClipboardError otherwise."""
    if not data:
        raise ClipboardError("no image on the clipboard")
    if image_media_type(data) is None:
        raise ClipboardError("the clipboard holds no PNG, JPEG, GIF or WebP image")
    if len(data) > MAX_IMAGE_BYTES:
        size = f"{len(data):,} bytes; at most {MAX_IMAGE_BYTES:,}"
        raise ClipboardError(f"the clipboard's image is too large to send ({size})")
    return data


def data_url_image(text: str) -> bytes | None:
    """The image a pasted `data:image/...;base64,...` URL holds, or None when `text` is not one."""
    found = _DATA_URL.match(text.strip())
    if found is None:
        return None
    try:
        data = base64.b64decode("".join(found.group(2).split()), validate=True)
    except (binascii.Error, ValueError):
        return None
    return data if image_media_type(data) is not None and len(data) <= MAX_IMAGE_BYTES else None


def clipboard_commands() -> list[list[str]]:
    """The commands that print the clipboard's image on this machine, the likeliest first; empty when no
    clipboard tool is installed."""
    if sys.platform == "darwin":
        mac = [["pngpaste", "-"]] if shutil.which("pngpaste") else []
        return [*mac, ["osascript", "-e", "the clipboard as «class PNGf»"]]
    wayland = ["wl-paste", "--no-newline", "--type", "image/png"]
    x11 = ["xclip", "-selection", "clipboard", "-target", "image/png", "-out"]
    order = [wayland, x11] if os.environ.get("WAYLAND_DISPLAY") else [x11, wayland]
    return [command for command in order if shutil.which(command[0])]


def read_clipboard_image() -> bytes:
    """The image on the system clipboard (blocking: call it in a thread); ClipboardError saying why not."""
    commands = clipboard_commands()
    if not commands:
        raise ClipboardError("no clipboard tool found: install wl-clipboard (Wayland) or xclip (X11)")
    problem = "no image on the clipboard"
    for command in commands:
        try:
            done = subprocess.run(
                command, stdin=subprocess.DEVNULL, capture_output=True, timeout=READ_TIMEOUT_S, check=False
            )
        except subprocess.TimeoutExpired:
            problem = f"{command[0]} did not answer within {READ_TIMEOUT_S:g} s"
            continue
        except OSError as error:
            problem = f"{command[0]}: {error.strerror or error}"
            continue
        data = done.stdout
        if command[0] == "osascript":
            data = _from_applescript(data)
        if done.returncode == 0 and data:
            return checked_image(data)
    raise ClipboardError(problem)


def _from_applescript(out: bytes) -> bytes:
    """The bytes of AppleScript's `«data PNGf89504E...»`, or nothing."""
    found = re.search(rb"\xc2\xabdata PNGf([0-9A-Fa-f]+)\xc2\xbb", out)
    return bytes.fromhex(found.group(1).decode("ascii")) if found else b""


def paste_data_url(host: ReplHost, buffer: Buffer, text: str) -> bool:
    """Put a pasted `data:image/...` URL into the input as an image placeholder; False when it is not one."""
    data = data_url_image(text)
    if data is None:
        return False
    placeholder = pasted_images(host).add(data, highest_in_history(host))
    _insert(buffer, placeholder)
    host.state.note = _pasted_note(host, placeholder, len(data))
    return True


def _pasted_note(host: ReplHost, placeholder: str, size: int) -> str:
    """The line under the input after a paste; it warns at once when the model cannot read images."""
    from sagent.agent.runtime import accepts_images

    model = host.agent.model
    if not accepts_images(model):
        return f"{placeholder}: {model.provider}/{model.name} does not read images; it goes as a note (/model switches)"
    return f"{placeholder}: {size:,} bytes, sent with this message"


def _insert(buffer: Buffer, placeholder: str) -> None:
    before = buffer.document.char_before_cursor
    buffer.insert_text(("" if not before or before.isspace() else " ") + placeholder + " ")


def add_keys(keys: KeyBindings, host: ReplHost, buffer: Buffer) -> None:
    """Ctrl+V pastes the clipboard's image into the input as `[Image #N]`."""

    @keys.add("c-v")
    def _paste_image(event: KeyPressEvent) -> None:
        host.background(_paste_from_clipboard(host, buffer))


async def _paste_from_clipboard(host: ReplHost, buffer: Buffer) -> None:
    import asyncio

    host.state.note = "reading the clipboard…"
    host.refresh()
    try:
        data = await asyncio.to_thread(read_clipboard_image)
    except ClipboardError as error:
        host.state.note = f"Ctrl+V: {error}"
    else:
        placeholder = pasted_images(host).add(data, highest_in_history(host))
        _insert(buffer, placeholder)  # clears the note: the text changed
        host.state.note = _pasted_note(host, placeholder, len(data))
    host.refresh()
