"""`@path` mentions in the REPL's input: found in the text, completed fuzzily from the project's files, and
turned into attachments when the message is sent. A pasted or dragged path (quoted, or with its spaces
escaped, as terminals paste them) becomes a mention; an absolute path to an image typed into a message
is attached as well.

A mention starts at `@` at the start of the text or after a space: `@src/app.py`, `@"my notes.md"`,
`@my\\ notes.md`. One that names nothing is sent as plain text, with a note (`@alice` may be a person).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlparse

from sagent.attachments import Attachment, AttachmentError, attach
from sagent.types import ImagePart, TextPart, UserContent, UserMessage

if TYPE_CHECKING:
    from prompt_toolkit.buffer import Buffer
    from prompt_toolkit.completion import CompleteEvent, Completer, Completion
    from prompt_toolkit.document import Document
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

    from sagent.repl.file_index import FileIndex
    from sagent.repl.host import ReplHost

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp"})
"""Suffixes of the paths attached as images without an `@`."""
MAX_PASTED_PATHS_CHARS = 8192
"""A paste longer than this is never read as dragged paths."""
MAX_SHELL_WORDS_CHARS = 20_000
"""A message longer than this is split at spaces, not as shell words, to find image paths in it."""
_IMAGE_NOTE = TextPart("[an image was attached here, but the current model cannot read images]")
_TRAILING = ".,;:!?)]}'\""
# The mention being typed at the cursor: `@`, then a quoted path still open, or a path without spaces.
_AT_CURSOR = re.compile(r'(?:^|(?<=\s))@(?:"([^"]*)|([^\s"]*))\Z')


@dataclass(frozen=True, slots=True)
class Mention:
    """An `@path` in the text: where it is, and the path it names (quotes and escapes removed)."""

    start: int
    end: int
    path: str


@dataclass(frozen=True, slots=True)
class Composed:
    """A message built from typed text: the message, what it attaches, and notes for what it could not."""

    message: UserMessage
    attachments: tuple[Attachment, ...]
    notes: tuple[str, ...]


def find_mentions(text: str) -> list[Mention]:
    """Every `@path` in `text`, in order."""
    found: list[Mention] = []
    i = 0
    while (i := text.find("@", i)) >= 0:
        if i > 0 and not text[i - 1].isspace():
            i += 1
            continue
        start, i = i, i + 1
        if i < len(text) and text[i] in "\"'":
            close = text.find(text[i], i + 1)
            if close > i + 1:
                found.append(Mention(start, close + 1, text[i + 1 : close]))
                i = close + 1
                continue
        chars: list[str] = []
        while i < len(text) and not text[i].isspace():
            if text[i] == "\\" and i + 1 < len(text):
                i += 1  # a backslash keeps the next character, a space included
            chars.append(text[i])
            i += 1
        if chars:
            found.append(Mention(start, i, "".join(chars)))
    return found


def mention_text(path: str) -> str:
    """`@path`, quoted when the path holds a space or a quote."""
    if not any(c.isspace() or c in "\"'\\" for c in path):
        return "@" + path
    if '"' not in path:
        return f'@"{path}"'
    return "@" + re.sub(r"([\s\"'\\])", r"\\\1", path)


def pasted_paths(data: str, root: Path) -> list[str] | None:
    """The paths in pasted text when it is nothing but paths to files or folders that exist (as a terminal
    pastes a dragged file: absolute, `~/`, or a `file://` URL; quoted or with escaped spaces), else None.
    Paths inside `root` are given relative to it."""
    data = data.strip()
    if not data or "\n" in data or len(data) > MAX_PASTED_PATHS_CHARS:  # a pasted log is text, and fast to insert
        return None
    try:
        tokens = shlex.split(data)
    except ValueError:
        return None
    paths: list[str] = []
    for token in tokens:
        path = _as_path(token)
        if path is None or not path.exists():
            return None
        try:
            paths.append(path.relative_to(root).as_posix())
        except ValueError:
            paths.append(str(path))
    return paths or None


def _as_path(token: str) -> Path | None:
    """An absolute path for a token that is written as one (`/x`, `~/x`, `file:///x`), else None."""
    if token.startswith("file://"):
        token = unquote(urlparse(token).path)
    if not token.startswith(("/", "~")):
        return None
    try:
        return Path(token).expanduser()
    except RuntimeError:  # ~nobody: no such user
        return None


def compose(
    text: str,
    root: Path,
    context: Sequence[UserContent] = (),
    refuse: Callable[[Path], str | None] = lambda path: None,
) -> Composed:
    """The message for `text` typed in `root`: the text as typed, then `context` (outputs of `!commands`),
    then each mentioned file once; an absolute path to an image in the text is attached as well.
    `refuse(path)` gives the reason a path may not be attached (a permission deny rule), or None."""
    attachments: list[Attachment] = []
    notes: list[str] = []
    seen: set[Path] = set()

    def add(found: Attachment) -> None:
        reason = refuse(found.path)
        if reason is not None:
            notes.append(f"{found.label}: {reason}; not attached")
        elif found.path not in seen:
            seen.add(found.path)
            attachments.append(found)
            if found.note:
                notes.append(f"{found.label}: {found.note}")

    for mention in find_mentions(text):
        result = _attach_mention(mention.path, root)
        if isinstance(result, Attachment):
            add(result)
        else:
            notes.append(result)
    for token in _words(text):
        path = _as_path(token)
        if path is not None and path.suffix.lower() in IMAGE_SUFFIXES and path.is_file():
            try:
                add(attach(path, root))
            except AttachmentError as error:
                notes.append(f"{error}; not attached")
    parts: list[UserContent] = [TextPart(text), *context]
    for found in attachments:
        parts += found.parts
    typed = text if len(parts) > 1 else None  # kept beside the parts: what a rewind puts back
    return Composed(UserMessage(tuple(parts), typed=typed), tuple(attachments), tuple(notes))


def _attach_mention(path: str, root: Path) -> Attachment | str:
    """The attachment a mention names, or the note that says why there is none. Punctuation that ends a
    sentence (`look at @app.py.`) is tried without, when the path with it does not exist."""
    candidates = [path]
    while candidates[-1] and candidates[-1][-1] in _TRAILING:
        candidates.append(candidates[-1][:-1])
    for candidate in filter(None, candidates):
        try:
            return attach(candidate, root)
        except AttachmentError as error:
            if not error.missing:
                return f"{error}; not attached"
    return f"@{path}: no such file or folder; sent as plain text"


def _words(text: str) -> list[str]:
    if len(text) > MAX_SHELL_WORDS_CHARS:  # shlex is slow Python: a pasted log is split at spaces
        return text.split()
    try:
        return shlex.split(text)
    except ValueError:  # an apostrophe in prose
        return text.split()


def compose_for(host: ReplHost, text: str) -> UserMessage:
    """The message the REPL sends for `text`: attachments built, notes shown, and the outputs of the
    `!commands` run since the last message taken along."""
    from sagent.agent.runtime import accepts_images

    def refuse(path: Path) -> str | None:  # the permission rules that keep Read off a file keep @ off it
        from sagent.agent.hooks import Deny
        from sagent.permissions.policy import decide
        from sagent.types import ToolCall

        verdict = decide(host.agent, ToolCall("mention", "Read", {"path": str(path)}))
        return verdict.reason if isinstance(verdict, Deny) else None

    from sagent.repl.clipboard import pasted_images

    images = pasted_images(host).parts_for(text)  # `[Image #N]` placeholders of pasted images
    composed = compose(text, host.agent.context.cwd, [*host.state.context, *images], refuse)
    host.state.context = []
    notes = list(composed.notes)
    message = composed.message
    model = host.agent.model
    if any(isinstance(p, ImagePart) for p in message.content) and not accepts_images(model):
        # An image a model cannot read fails the request, and every later one that carries the history.
        notes.append(f"{model.provider}/{model.name} does not read images: they are sent as a note; /model switches")
        parts = tuple(_IMAGE_NOTE if isinstance(p, ImagePart) else p for p in message.content)
        message = replace(message, content=parts)
    if notes:
        host.commit([host.renderer.c("yellow", note) for note in notes])
    return message


# --------------------------------------------------------------------------------- completion, keys


def mention_at_cursor(text_before_cursor: str) -> tuple[int, str] | None:
    """The mention being typed (its start and what follows the `@`), if the cursor is in one."""
    found = _AT_CURSOR.search(text_before_cursor)
    if found is None:
        return None
    return found.start(), found.group(1) if found.group(1) is not None else found.group(2)


class MentionCompleter:
    """Completes `@path` from the files under the REPL's working directory, fuzzily. Build it with
    `mention_completer`, which wraps it so listing files never blocks typing."""

    def __init__(self, root: Callable[[], Path]) -> None:
        self.root = root
        self._indexes: dict[Path, FileIndex] = {}

    def index(self) -> FileIndex:
        from sagent.repl.file_index import FileIndex

        root = self.root()
        if root not in self._indexes:
            self._indexes[root] = FileIndex(root)
        return self._indexes[root]

    def completions(self, text_before_cursor: str) -> Iterator[Completion]:
        from prompt_toolkit.completion import Completion

        at = mention_at_cursor(text_before_cursor)
        if at is None:
            return
        start, query = at
        for path in self.index().search(query, limit=40):
            folder = path.endswith("/")
            yield Completion(
                mention_text(path) + ("" if folder else " "),
                start_position=start - len(text_before_cursor),
                display=path,
                display_meta="folder" if folder else "",
            )


def mention_completer(host: ReplHost) -> Completer:
    """A prompt_toolkit completer for mentions, run in a thread."""
    from prompt_toolkit.completion import Completer, ThreadedCompleter

    mentions = MentionCompleter(lambda: host.agent.context.cwd)

    class _Completer(Completer):
        def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
            return mentions.completions(document.text_before_cursor)

    return ThreadedCompleter(_Completer())


def add_keys(keys: KeyBindings, host: ReplHost, buffer: Buffer) -> None:
    """A paste that is nothing but paths to existing files (a dragged file) goes in as mentions."""
    from prompt_toolkit.keys import Keys

    @keys.add(Keys.BracketedPaste)
    def _paste(event: KeyPressEvent) -> None:
        data = event.data.replace("\r\n", "\n").replace("\r", "\n")
        from sagent.repl.clipboard import paste_data_url

        if paste_data_url(host, buffer, data):  # a `data:image/...;base64,` URL: an image placeholder
            return
        paths = pasted_paths(data, host.agent.context.cwd)
        if paths is None:
            buffer.insert_text(data)
            return
        before = buffer.document.char_before_cursor
        lead = "" if not before or before.isspace() else " "
        buffer.insert_text(lead + " ".join(mention_text(p) for p in paths) + " ")
