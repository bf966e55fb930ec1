"""Files attached to a user message: a text file as its content in a delimited block, an image as an
`ImagePart`, a directory as a list of its entries.

The REPL builds these from `@path` mentions and pasted paths; library code calls `attach` itself:

    from sagent.attachments import attach
    from sagent.types import TextPart, UserMessage

    message = UserMessage((TextPart("What is wrong in this screenshot?"), *attach("shot.png").parts))
    await agent.run(message)

Anything that cannot be attached (a missing path, a device or named pipe, a binary file, an image over
the providers' size limit) raises `AttachmentError` with a one-line reason; nothing is ever read from a
device or a pipe, and a huge text file costs at most `MAX_TEXT_BYTES` of reading.
"""

from __future__ import annotations

import base64
import html
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from sagent.lib.words import plural, quantity
from sagent.types import ImagePart, TextPart, UserContent, UserMessage

MAX_TEXT_BYTES = 256_000
"""Bytes of a text file read at most; the rest is left out with a note."""
MAX_TEXT_LINES = 2000
"""Lines of a text file attached at most."""
MAX_IMAGE_BYTES = 3_750_000
"""The largest image attached: base64 grows it by a third, to the strictest provider limit (5 MB)."""
MAX_DIRECTORY_ENTRIES = 200
"""Entries of a directory listed at most."""
SNIFF_BYTES = 8192
"""Bytes looked at to tell text from images and other binary files."""

_KINDS = (
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
)
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)
# The opening tag of every block this module writes; `attachment_label` reads it back.
_TAG = re.compile(r'\A<(file|image|directory|shell) (?:path|command)="([^"]*)"[^>]*>')
# A whole block, wherever it is in a text.
_BLOCKS = re.compile(
    r'<(file|directory|shell) (?:path|command)="[^"]*"[^>\n]*>\n.*?\n</\1>'
    r'|<image path="[^"]*" type="[^"]*" bytes="\d+"/>',
    re.DOTALL,
)


class AttachmentError(Exception):
    """A path that cannot be attached; the message is one line that says why. `missing` is True when
    nothing is there at all (a mention that was never meant as a path, perhaps)."""

    def __init__(self, message: str, *, missing: bool = False) -> None:
        super().__init__(message)
        self.missing = missing


@dataclass(frozen=True, slots=True)
class Attachment:
    """What one attached path adds to a message: `parts` go into the `UserMessage` after the typed text;
    `label` names it on the screen (`src/app.py (120 lines)`); `note` says what was left out, if anything."""

    path: Path
    label: str
    parts: tuple[UserContent, ...]
    note: str = ""


def attach(path: str | Path, root: Path | None = None) -> Attachment:
    """The parts that attach `path` (relative to `root`, default the current directory; `~` expanded).

    Raises `AttachmentError` for a path that does not exist or cannot be read, a device, pipe or socket, a
    binary file that is not a PNG, JPEG, GIF or WebP image, and an image over `MAX_IMAGE_BYTES`."""
    root = root or Path.cwd()
    try:
        full = Path(path).expanduser()
        full = full if full.is_absolute() else root / full
        shown = _shown(full, root)
        st = os.stat(full)
    except (FileNotFoundError, NotADirectoryError):
        raise AttachmentError(f"{path}: no such file or folder", missing=True) from None
    except (OSError, ValueError) as error:
        raise AttachmentError(f"{path}: {_reason(error)}") from None
    if stat.S_ISDIR(st.st_mode):
        return _directory(full, shown)
    if not stat.S_ISREG(st.st_mode):
        kind = next((name for test, name in _KINDS if test(st.st_mode)), "not a regular file")
        raise AttachmentError(f"{shown} is {kind}: only regular files and directories can be attached")
    try:
        fd = os.open(full, _OPEN_FLAGS)
    except OSError as error:
        raise AttachmentError(f"{shown}: {_reason(error)}") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):  # it changed between the two looks: still never read from it
            raise AttachmentError(f"{shown} is not a regular file")
        try:
            head = f.read(SNIFF_BYTES)
            media = image_media_type(head)
            if media is not None:
                return _image(full, shown, head + f.read(MAX_IMAGE_BYTES + 1 - len(head)), media)
            if b"\0" in head or head.startswith(b"%PDF-"):
                what = "a PDF" if head.startswith(b"%PDF-") else "a binary file"
                raise AttachmentError(
                    f"{shown} is {what} ({st.st_size:,} bytes): only text and PNG, JPEG, GIF or WebP images "
                    "are attached; ask sagent to Read it instead"
                )
            data = head + f.read(MAX_TEXT_BYTES + 1 - len(head))
        except OSError as error:
            raise AttachmentError(f"{shown}: {_reason(error)}") from None
    return _text(full, shown, data, st.st_size)


def image_media_type(data: bytes) -> str | None:
    """The media type of an image every provider accepts (PNG, JPEG, GIF, WebP), from its first bytes."""
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    return None


def shell_context(command: str, output: str) -> TextPart:
    """A command the user ran themselves (the REPL's `!command`) and its output, as context for the model."""
    body = output.rstrip("\n") or "(no output)"
    return TextPart(
        f'<shell command="{_attr(command)}">\n'
        f"The user ran this command in the project directory themselves; it printed:\n{body}\n</shell>"
    )


def attachment_label(part: UserContent) -> str | None:
    """How an attachment block written here is named on the screen (`@src/app.py`, `$ make test`), or None
    for any other part: what the user typed, an image (named by the text part before it)."""
    if not isinstance(part, TextPart):
        return None
    found = _TAG.match(part.text)
    if found is None:
        return None
    kind, value = found.group(1), html.unescape(found.group(2))
    if kind == "image" and value.startswith("[Image #"):  # pasted (sagent.repl.clipboard): no path to name
        return value
    return f"$ {value}" if kind == "shell" else f"@{value}"


def is_shell_context(part: UserContent) -> bool:
    """True for a block written by `shell_context`."""
    return (attachment_label(part) or "").startswith("$ ")


def typed_text(message: UserMessage) -> str:
    """The text the user typed, without the blocks of the files and commands attached to it: the message's
    `typed` when it has one, else its text parts but the blocks (the first part is always typed text, even
    when it looks like a block)."""
    if message.typed is not None:
        return message.typed
    return "".join(
        p.text
        for i, p in enumerate(message.content)
        if isinstance(p, TextPart) and (i == 0 or attachment_label(p) is None)
    )


def without_blocks(text: str) -> str:
    """`text` without whole attachment blocks written into it (a file's, a folder's, a command's, an
    image's header): how a message typed again from an expanded copy, as older sessions stored some,
    reads as typed."""
    return _BLOCKS.sub("", text)


def attachment_labels(message: UserMessage) -> list[str]:
    """The names of what is attached to `message`, in order (`@src/app.py`, `$ make test`)."""
    return [label for p in message.content[1:] if (label := attachment_label(p))]


# ------------------------------------------------------------------------------------------ builders


def _text(full: Path, shown: str, data: bytes, size: int) -> Attachment:
    text = data[:MAX_TEXT_BYTES].decode("utf-8", errors="replace")
    if len(data) > MAX_TEXT_BYTES:
        text = text.rsplit("\n", 1)[0] if "\n" in text else text  # no half line at the cut
    lines = text.splitlines()
    note = ""
    if len(lines) > MAX_TEXT_LINES:
        lines, text = lines[:MAX_TEXT_LINES], "\n".join(lines[:MAX_TEXT_LINES])
        note = f"only its first {MAX_TEXT_LINES:,} lines are attached ({size:,} bytes in all)"
    elif len(data) > MAX_TEXT_BYTES:
        note = f"only its first {len(lines):,} lines ({MAX_TEXT_BYTES:,} bytes) are attached ({size:,} bytes in all)"
    count = f"{len(lines):,} line{'s' if len(lines) != 1 else ''}"
    tail = f"\n[{note}; the Read tool gives the rest]" if note else ""
    block = f'<file path="{_attr(shown)}" lines="{len(lines)}">\n{text.rstrip(chr(10))}{tail}\n</file>'
    return Attachment(full, f"{shown} ({count})" if text else f"{shown} (empty)", (TextPart(block),), note)


def _image(full: Path, shown: str, data: bytes, media: str) -> Attachment:
    if len(data) > MAX_IMAGE_BYTES:
        raise AttachmentError(f"{shown}: image too large to send (over {MAX_IMAGE_BYTES:,} bytes); make it smaller")
    kind = media.split("/")[1].upper()
    header = TextPart(f'<image path="{_attr(shown)}" type="{media}" bytes="{len(data)}"/>')
    image = ImagePart(base64.b64encode(data).decode("ascii"), media)
    return Attachment(full, f"{shown} ({kind} image, {len(data):,} bytes)", (header, image))


def _directory(full: Path, shown: str) -> Attachment:
    try:
        with os.scandir(full) as entries:
            names = []
            for entry in entries:
                names.append(entry.name + ("/" if entry.is_dir(follow_symlinks=False) else ""))
                if len(names) > 10 * MAX_DIRECTORY_ENTRIES:  # a directory of a million files is not read whole
                    break
    except OSError as error:
        raise AttachmentError(f"{shown}: {_reason(error)}") from None
    names.sort()
    listed = names[:MAX_DIRECTORY_ENTRIES]
    more = (
        f"\n[and {quantity(len(names) - len(listed), 'more entry', 'more entries')}]"
        if len(names) > len(listed)
        else ""
    )
    block = f'<directory path="{_attr(shown)}">\n' + "\n".join(listed) + f"{more}\n</directory>"
    over = "+" if len(names) > 10 * MAX_DIRECTORY_ENTRIES else ""
    count = f"{len(names):,}{over} {plural(len(names), 'entry', 'entries')}"
    return Attachment(full, f"{shown}/ ({count})", (TextPart(block),))


def _shown(full: Path, root: Path) -> str:
    """The path as the user thinks of it: relative to the project when inside it."""
    try:
        return full.relative_to(root).as_posix()
    except ValueError:
        return str(full)


def _attr(value: str) -> str:
    return html.escape(value.replace("\n", " "), quote=True)


def _reason(error: OSError | ValueError) -> str:
    if isinstance(error, PermissionError):
        return "permission denied"
    if isinstance(error, OSError) and error.strerror:
        return error.strerror.lower()
    return str(error)
