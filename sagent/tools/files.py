"""File tools: Read, Write, Edit. Write and Edit refuse to touch a file the agent has not read, or one
that changed on disk since it was read, so the model never overwrites work it has not seen."""

from __future__ import annotations

import base64
import codecs
import contextlib
import difflib
import io
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

# One rule for which images are sent and how large, shared with the files a user attaches to a message.
from sagent.attachments import MAX_IMAGE_BYTES as MAX_IMAGE_BYTES
from sagent.attachments import image_media_type
from sagent.lib.realpaths import PathChanged, open_real, real_path
from sagent.lib.words import plural
from sagent.tools.base import MAX_OUTPUT, FileStamp, ToolContext, ToolError, ToolOutput, off_loop
from sagent.tools.editor import Editor, text_stamp
from sagent.types import ImagePart, TextPart

MAX_LINE = 2000
DEFAULT_LIMIT = 2000
MAX_DIFF_LINES = 80


def _stamp(st: os.stat_result) -> FileStamp:
    return FileStamp(st.st_mtime_ns, st.st_size)


def _missing(path: Path) -> ToolError:
    hint = ""
    with contextlib.suppress(OSError):
        if path.parent.is_dir():
            names = [p.name for p in path.parent.iterdir()]
            close = difflib.get_close_matches(path.name, names, n=3)
            if close:
                hint = f"; did you mean: {', '.join(close)}"
    return ToolError(f"file not found: {path}{hint}")


_KINDS = (
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
)


def _not_a_file(path: Path, mode: int, tool: str) -> ToolError:
    """The refusal for anything but a regular file: a device may never end (/dev/zero) and a pipe may wait
    forever for a writer, so the file tools never open one for reading or writing."""
    if stat.S_ISDIR(mode):
        return ToolError(f"{path} is a directory" + ("; use List to see its entries" if tool == "Read" else ""))
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    if tool == "Read":
        todo = f"to sample it, use Bash with a bound, e.g. `timeout 5 head -c 4096 {path}`"
    else:
        todo = "choose a path to a regular file, or use Bash if you mean to send data to it"
    return ToolError(f"{path} is {kind}, not a regular file; {tool} works on regular files only: {todo}")


def _stat(path: Path, shown: Path | None = None) -> os.stat_result | None:
    """The status of the file at the real path `path`, None when it does not exist; `ToolError` for what
    blocks it, a symlink found there included (a real path has none: one was put there after the check)."""
    try:
        st = os.stat(path, follow_symlinks=False)
        if stat.S_ISLNK(st.st_mode):
            raise _changed(shown or path, "open")
        return st
    except (FileNotFoundError, NotADirectoryError):
        return None
    except PermissionError:
        raise ToolError(f"permission denied: {shown or path}") from None
    except OSError as error:
        raise ToolError(f"cannot open {shown or path}: {error.strerror}") from None


# O_NONBLOCK: if the path became a pipe after it was checked, opening it still returns at once.
_OPEN_FLAGS = os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)


LinkCheck = Callable[[os.stat_result], None] | None
"""`ToolContext.link_check`: run on an open file's status before anything is read from it or written to it."""


def open_regular(
    path: Path, tool: str, shown: Path | None = None, check: LinkCheck = None
) -> tuple[BinaryIO, os.stat_result]:
    """The real path `path` (`sagent.lib.realpaths`) opened for reading, and its status, after making sure
    it is a regular file: checked before opening and again on the open file, so nothing is ever read from a
    device, pipe or socket, and opened through no symlink, so it is the file that was checked. `shown` is
    the path as the call gave it, for messages."""
    shown = shown or path
    st = _stat(path, shown)
    if st is None:
        raise _missing(shown)
    if not stat.S_ISREG(st.st_mode):
        raise _not_a_file(shown, st.st_mode, tool)
    fd = _open(path, os.O_RDONLY | _OPEN_FLAGS, shown, "open")
    st = os.fstat(fd)
    try:
        if not stat.S_ISREG(st.st_mode):
            raise _not_a_file(shown, st.st_mode, tool)
        if check is not None:
            check(st)
    except ToolError:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb"), st


def _changed(shown: Path, verb: str) -> ToolError:
    return ToolError(
        f"cannot {verb} {shown}: a symlink in its path loops, or was put there after the permission check; "
        "nothing was opened"
    )


def _open(path: Path, flags: int, shown: Path, verb: str, make_parents: bool = False) -> int:
    try:
        return open_real(str(path), flags, 0o666, make_parents=make_parents)
    except PathChanged:
        raise _changed(shown, verb) from None
    except FileNotFoundError:
        raise _missing(shown) from None
    except PermissionError:
        raise ToolError(f"permission denied: {shown}") from None
    except OSError as error:
        raise ToolError(f"cannot {verb} {shown}: {error.strerror}") from None


def _write_bytes(
    path: Path, data: bytes, tool: str, shown: Path | None = None, check: LinkCheck = None
) -> os.stat_result:
    """Write `data` over the real path `path` (created if new, with its folders), refusing anything but a
    regular file and any symlink on the way (the file written is the one that was checked)."""
    shown = shown or path
    st = _stat(path, shown)
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise _not_a_file(shown, st.st_mode, tool)
    fd = _open(path, os.O_WRONLY | os.O_CREAT | _OPEN_FLAGS, shown, "write", make_parents=True)
    with os.fdopen(fd, "wb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _not_a_file(shown, st.st_mode, tool)
        if check is not None:
            check(st)
        os.ftruncate(fd, 0)  # only now: a file found not to be regular is left as it was
        f.write(data)
        f.flush()
        return os.fstat(fd)


def _check_fresh(real: Path, seen: FileStamp | None, verb: str, path: Path) -> None:
    if seen is None:
        raise ToolError(f"read {path} with Read before you {verb} it")
    st = _stat(real, path)
    if st is None or _stamp(st) != seen:
        raise ToolError(f"{path} changed on disk since you read it; Read it again before you {verb} it")


class _FileTool:
    def resource(self, arguments: dict[str, Any], ctx: ToolContext) -> str | None:
        path = arguments.get("path")
        return real_path(path, str(ctx.cwd)) if isinstance(path, str) else None


def checked_path(ctx: ToolContext, path: str, tool: str) -> Path:
    """The real path `path` names now, once the permission policy lets `tool` open it (`ToolError` if not).
    Every file tool opens exactly this path, through no symlink (`sagent.lib.realpaths.open_real`)."""
    real = real_path(path, str(ctx.cwd))
    ctx.refuse_file(tool, real)
    return Path(real)


class Read(_FileTool):
    name = "Read"
    reproducible = True  # its output can be had again: compaction may prune it
    description = (
        f"Read a file: numbered lines (number, tab, text), {DEFAULT_LIMIT} from `offset`, at most about "
        f"{MAX_OUTPUT:,} characters (the end says how to go on); lines over {MAX_LINE} characters are cut. "
        "Read a file before you Edit it or Write over it. A PDF gives its pages' text; an image is shown to you."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "offset": {"type": "integer", "description": "first line, from 1", "default": 1},
            "limit": {"type": "integer", "default": DEFAULT_LIMIT},
            "pages": {"type": "string", "description": 'PDF pages: "3", "2-5", "7-" (default: all)'},
        },
        "required": ["path"],
    }

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        shown = ctx.resolve(arguments["path"])
        real = checked_path(ctx, arguments["path"], "Read")
        offset = max(1, arguments.get("offset") or 1)
        limit = max(1, arguments.get("limit") or DEFAULT_LIMIT)
        images = ctx.runtime is None or ctx.runtime.accepts_images()
        editor = ctx.editor()
        if editor is not None and editor.reads_files:  # the editor's buffer, unsaved edits included
            text = await _editor_text(editor, real)
            if text is not None:
                ctx.read_files[real] = FileStamp(*text_stamp(text))
                return _page(io.BytesIO(text.encode("utf-8", errors="replace")), shown, offset, limit)
        check = ctx.link_check(self.name)
        stamp, output = await off_loop(_read, real, offset, limit, arguments.get("pages"), images, shown, check)
        ctx.read_files[real] = stamp
        return output


async def _editor_text(editor: Editor, real: Path) -> str | None:
    """The text of `real` as the editor has it; None when the disk must answer: the editor has no such
    file, or the file on disk is not text (a PDF, an image, a binary file, anything but a regular file)."""

    def head() -> bytes | None:
        st = _stat(real)
        if st is None:
            return b""
        if not stat.S_ISREG(st.st_mode):
            return None
        with contextlib.suppress(OSError), open(real, "rb") as f:
            return f.read(SNIFF)
        return None

    sniffed = await off_loop(head)
    if sniffed is None or sniffed.startswith(b"%PDF-") or image_media_type(sniffed) or b"\0" in sniffed:
        return None
    return await editor.read_text(real)


async def _current_text(editor: Editor, real: Path, path: Path) -> str | None:
    """The file's text before Write or Edit through the editor changes it (None: it does not exist)."""
    if editor.reads_files:
        text = await _editor_text(editor, real)
        if text is not None:
            return text
    st = _stat(real, path)
    if st is None:
        return None
    if not stat.S_ISREG(st.st_mode):
        raise _not_a_file(path, st.st_mode, "Edit")
    return real.read_bytes()[: MAX_EDIT_BYTES + 1].decode("utf-8", errors="replace")


def _check_fresh_text(real: Path, text: str, seen: FileStamp | None, verb: str, path: Path) -> None:
    """As `_check_fresh`, for a file changed through the editor: a stamp taken from the editor's buffer is
    compared with the buffer's text now, one taken from the disk with the disk."""
    if seen is None or seen.mtime_ns >= 0:
        _check_fresh(real, seen, verb, path)
    elif FileStamp(*text_stamp(text)) != seen:
        raise ToolError(f"{path} changed in the editor since you read it; Read it again before you {verb} it")


SNIFF = 8192  # bytes looked at to tell text from binary, PDFs and images


def _read(
    real: Path, offset: int, limit: int, pages: str | None, images: bool, path: Path, check: LinkCheck = None
) -> tuple[FileStamp, ToolOutput]:
    """What Read returns for the real path `real` (`path` as the call gave it), from the first SNIFF bytes
    and then at most a page of lines: a file of any size costs the same memory."""
    f, st = open_regular(real, "Read", path, check)
    with f:
        head = f.read(SNIFF)
        is_pdf, media = head.startswith(b"%PDF-"), image_media_type(head)
        if not is_pdf and media is None and b"\0" in head:
            raise ToolError(f"{path} is a binary file ({st.st_size:,} bytes); Read shows text, PDFs and images")
        f.seek(0)
        if is_pdf:
            from sagent.tools.pdf import pdf_text

            return _stamp(st), pdf_text(f, pages, name=str(path))
        if media is not None:
            return _stamp(st), _image(path, f, st.st_size, media, images)
        return _stamp(st), _page(f, path, offset, limit)


def _image(path: Path, f: BinaryIO, size: int, media: str, accepted: bool) -> ToolOutput:
    kind = media.split("/")[1].upper()
    about = f"{path}: {kind} image, {size:,} bytes"
    if not accepted:
        return (
            f"{about}. The current model does not accept images, so it cannot be shown; switch to a model "
            "that does (AgentSelf switch) or describe what you need from it another way."
        )
    data = f.read(MAX_IMAGE_BYTES + 1)
    if len(data) > MAX_IMAGE_BYTES:
        raise ToolError(f"{about}: too large to send (the limit is {MAX_IMAGE_BYTES:,} bytes); make it smaller")
    return (TextPart(about), ImagePart(base64.b64encode(data).decode("ascii"), media))


# Past its page, Read goes on only to count the lines left, and at most this far: a huge file gets a note
# without the count rather than a long scan.
COUNT_SCAN = 64 * 2**20
_CHUNK = 2**16
_HOLD = 2**16  # characters of an unfinished line kept; a longer line keeps only its first MAX_LINE
_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"  # where str.splitlines() splits


def line_chunks(f: BinaryIO, keep: int = MAX_LINE) -> Iterator[tuple[list[str], int]]:
    """The file's lines with their line breaks, a chunk at a time, split exactly as `splitlines()` splits
    the whole decoded text, in bounded memory. With each chunk: how many characters its first line lost
    (a line longer than _HOLD keeps its first `keep` characters and the count of the rest)."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    rest, dropped = "", 0
    while True:
        data = f.read(_CHUNK)
        parts = (rest + decoder.decode(data, final=not data)).splitlines(keepends=True)
        rest = "" if not data or not parts else parts.pop()
        # The last part may go on in the next chunk, unless it ends in a break; a lone "\r" may be the
        # first half of "\r\n".
        if rest and rest[-1] in _BREAKS and rest[-1] != "\r":
            parts.append(rest)
            rest = ""
        if parts:
            yield parts, dropped
            dropped = 0
        if not data:
            return
        if len(rest) > _HOLD:
            tail = "\r" if rest.endswith("\r") else ""
            body = rest[: len(rest) - len(tail)]
            dropped += len(body) - keep
            rest = body[:keep] + tail


def strip_break(part: str) -> str:
    """A line from `line_chunks` without its line break."""
    if part.endswith("\r\n"):
        return part[:-2]
    return part[:-1] if part and part[-1] in _BREAKS else part


def _page(f: BinaryIO, path: Path, offset: int, limit: int) -> str:
    """Numbered lines from `offset`: at most `limit` of them and about MAX_OUTPUT characters, with a note
    that says where to go on."""
    from sagent.redaction import known_secrets, redact

    # A long line is redacted before it is cut, so that the cut cannot leave part of a secret: a line is
    # kept that much longer than it is shown.
    secrets = known_secrets()
    out: list[str] = []
    total, used, counted = 0, 0, True
    full_at: int | None = None  # where the page was full; only lines are counted past it
    for parts, dropped in line_chunks(f, MAX_LINE + max(map(len, secrets), default=0)):
        if full_at is not None or total + len(parts) < offset:
            total += len(parts)
            if full_at is not None and f.tell() - full_at > COUNT_SCAN:
                counted = False
                break
            continue
        for i, part in enumerate(parts):
            total += 1
            if total < offset or full_at is not None:
                continue
            line = strip_break(part)
            length = len(line) + (dropped if i == 0 else 0)
            if length > MAX_LINE:
                line = redact(line, secrets)
                line = line[:MAX_LINE] + f" [… {length - MAX_LINE} {plural(length - MAX_LINE, 'more character')}]"
            used += len(line) + 8
            if used > MAX_OUTPUT - 200 and out:  # a page the context can take; the note says how to go on
                full_at = f.tell()
                continue
            out.append(f"{total:>6}\t{line}")
            if len(out) == limit:
                full_at = f.tell()
    if total == 0:
        return f"{path} is empty"
    if not out:
        raise ToolError(f"offset {offset} is past the end: {path} has {total} {plural(total, 'line')}")
    last = offset + len(out) - 1
    if not counted:
        out.append(f"[more lines follow line {last}: Read with offset={last + 1} to go on]")
    elif last < total:
        out.append(f"[{total - last} {plural(total - last, 'more line')}: Read with offset={last + 1} to go on]")
    return "\n".join(out)


class Write(_FileTool):
    name = "Write"
    writes_files = True  # sagent keeps a checkpoint of the file before each call (`/rewind`)
    description = (
        "Create a file, or overwrite one you have read (unchanged since); parent folders are created. Prefer "
        "Edit for changes."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "content": {"type": "string", "description": "the whole file"},
        },
        "required": ["path", "content"],
    }

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        path = ctx.resolve(arguments["path"])
        real = checked_path(ctx, arguments["path"], "Write")
        content: str = arguments["content"]
        editor = ctx.editor()
        if editor is not None and editor.writes_files:
            current = await _current_text(editor, real, path)
            if current is not None:
                _check_fresh_text(real, current, ctx.read_files.get(real), "overwrite", path)
            await _editor_write(editor, real, content, path)
            stamp, existed = FileStamp(*text_stamp(content)), current is not None
        else:
            check = ctx.link_check(self.name)
            stamp, existed = await off_loop(_write, real, content, ctx.read_files.get(real), path, check)
        ctx.read_files[real] = stamp
        verb = "overwrote" if existed else "created"
        lines = len(content.splitlines())
        return f"{verb} {path} ({lines} {plural(lines, 'line')}, {len(content.encode()):,} bytes)"


def _write(
    real: Path, content: str, seen: FileStamp | None, path: Path, check: LinkCheck = None
) -> tuple[FileStamp, bool]:
    st = _stat(real, path)
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise _not_a_file(path, st.st_mode, "Write")
    if st is not None:
        _check_fresh(real, seen, "overwrite", path)
    return _stamp(_write_bytes(real, content.encode("utf-8"), "Write", path, check)), st is not None


class Edit(_FileTool):
    name = "Edit"
    writes_files = True  # sagent keeps a checkpoint of the file before each call (`/rewind`)
    description = (
        "Replace exact text in a file you have read: `old_string` must occur once (add lines around it to make "
        "it unique) unless `replace_all`. Returns a diff."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "old_string": {"type": "string", "description": "exact, whitespace included"},
            "new_string": {"type": "string"},
            "replace_all": {"type": "boolean", "default": False},
        },
        "required": ["path", "old_string", "new_string"],
    }

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        path = ctx.resolve(arguments["path"])
        real = checked_path(ctx, arguments["path"], "Edit")
        old, new = arguments["old_string"], arguments["new_string"]
        every = bool(arguments.get("replace_all"))
        editor = ctx.editor()
        if editor is not None and editor.writes_files:
            text = await _current_text(editor, real, path)
            if text is None:
                raise _missing(path)
            _check_fresh_text(real, text, ctx.read_files.get(real), "edit", path)
            updated, report = _edited(text, old, new, every, path)
            await _editor_write(editor, real, updated, path)
            ctx.read_files[real] = FileStamp(*text_stamp(updated))
            return report
        check = ctx.link_check(self.name)
        stamp, out = await off_loop(_edit, real, old, new, every, ctx.read_files.get(real), path, check)
        ctx.read_files[real] = stamp
        return out


async def _editor_write(editor: Editor, real: Path, content: str, path: Path) -> None:
    try:
        await editor.write_text(real, content)
    except OSError as error:
        raise ToolError(f"the editor could not write {path}: {error}") from None


# Edit holds the file, the new text and their diff in memory: past this size, a script does it better.
MAX_EDIT_BYTES = 32 * 2**20


def _edit(
    real: Path, old: str, new: str, every: bool, seen: FileStamp | None, path: Path, check: LinkCheck = None
) -> tuple[FileStamp, str]:
    f, st = open_regular(real, "Edit", path, check)
    with f:
        _check_fresh(real, seen, "edit", path)
        if st.st_size > MAX_EDIT_BYTES:
            raise ToolError(
                f"{path} is {st.st_size:,} bytes, too large for Edit (the limit is {MAX_EDIT_BYTES:,}); "
                "change it with a script through Bash (sed, python)"
            )
        text = f.read(MAX_EDIT_BYTES + 1).decode("utf-8")
    updated, report = _edited(text, old, new, every, path)
    st = _write_bytes(real, updated.encode("utf-8"), "Edit", path, check)
    return _stamp(st), report


def _edited(text: str, old: str, new: str, every: bool, path: Path) -> tuple[str, str]:
    """`text` with the edit made, and the report for the model (the diff); ToolError when it cannot be."""
    if old == new:
        raise ToolError("old_string and new_string are the same; nothing to change")
    if not old:
        raise ToolError("old_string is empty; give the exact text to replace")
    count = text.count(old)
    if count == 0:
        raise ToolError(f"old_string was not found in {path}.{_closest(text, old)}")
    if count > 1 and not every:
        raise ToolError(
            f"old_string occurs {count} times in {path}; include more surrounding lines to make it "
            "unique, or set replace_all"
        )
    updated = text.replace(old, new) if every else text.replace(old, new, 1)
    diff = list(difflib.unified_diff(text.splitlines(), updated.splitlines(), str(path), str(path), n=2, lineterm=""))
    if len(diff) > MAX_DIFF_LINES:
        diff = [*diff[:MAX_DIFF_LINES], f"[… {len(diff) - MAX_DIFF_LINES} more diff lines]"]
    return updated, f"edited {path} ({count if every else 1} replacement)\n" + "\n".join(diff)


def _closest(text: str, needle: str) -> str:
    """The lines of `text` most like `needle`, numbered, to show the model what is really there."""
    lines = text.splitlines()
    size = max(1, len(needle.splitlines()))
    best, best_at = 0.0, -1
    for i in range(max(1, len(lines) - size + 1)):
        ratio = difflib.SequenceMatcher(None, "\n".join(lines[i : i + size]), needle).quick_ratio()
        if ratio > best:
            best, best_at = ratio, i
    if best_at < 0 or best < 0.3:
        return ""
    shown = "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines[best_at : best_at + size], best_at + 1))
    return f" The closest lines are:\n{shown}"
