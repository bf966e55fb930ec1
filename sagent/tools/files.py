"""File tools: Read, Write, Edit. Write and Edit refuse to touch a file the agent has not read, or one
that changed on disk since it was read, so the model never overwrites work it has not seen."""

from __future__ import annotations

import asyncio
import base64
import difflib
from pathlib import Path
from typing import Any

from sagent.tools.base import MAX_OUTPUT, FileStamp, ToolContext, ToolError, ToolOutput
from sagent.types import ImagePart, TextPart

MAX_LINE = 2000
DEFAULT_LIMIT = 2000
MAX_DIFF_LINES = 80
# Base64 grows data by a third; 3.75 MB of image stays under the strictest provider limit (5 MB encoded).
MAX_IMAGE_BYTES = 3_750_000
_IMAGE_TYPES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def image_type(data: bytes) -> str | None:
    """The media type of an image the providers accept (PNG, JPEG, GIF, WebP), from its first bytes."""
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return next((media for magic, media in _IMAGE_TYPES if data.startswith(magic)), None)


def _stamp(path: Path) -> FileStamp:
    st = path.stat()
    return FileStamp(st.st_mtime_ns, st.st_size)


def _missing(path: Path) -> ToolError:
    hint = ""
    if path.parent.is_dir():
        names = [p.name for p in path.parent.iterdir()]
        close = difflib.get_close_matches(path.name, names, n=3)
        if close:
            hint = f"; did you mean: {', '.join(close)}"
    return ToolError(f"file not found: {path}{hint}")


def _check_fresh(path: Path, ctx: ToolContext, verb: str) -> None:
    seen = ctx.read_files.get(path)
    if seen is None:
        raise ToolError(f"read {path} with Read before you {verb} it")
    if _stamp(path) != seen:
        raise ToolError(f"{path} changed on disk since you read it; Read it again before you {verb} it")


class _FileTool:
    def resource(self, arguments: dict[str, Any], ctx: ToolContext) -> str | None:
        path = arguments.get("path")
        return str(ctx.resolve(path).resolve()) if isinstance(path, str) else None


class Read(_FileTool):
    name = "Read"
    reproducible = True  # its output can be had again: compaction may prune it
    description = (
        "Read a text file. Returns numbered lines (number, tab, text), 2000 lines from `offset` by default "
        f"and at most about {MAX_OUTPUT:,} characters (the end says where to go on); lines longer than "
        f"{MAX_LINE} characters are cut. Read a file before you Write over it or Edit it. "
        'A PDF gives the text of its pages with page numbers (`pages` picks them, e.g. "1-5"). An image '
        "(PNG, JPEG, GIF, WebP) is shown to you when your model accepts images."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "the file, absolute or relative to the working directory",
            },
            "offset": {"type": "integer", "description": "the first line to read, from 1", "default": 1},
            "limit": {"type": "integer", "description": "how many lines", "default": DEFAULT_LIMIT},
            "pages": {"type": "string", "description": 'PDF pages: "3", "2-5", "2,4-6" or "7-" (default: all)'},
        },
        "required": ["path"],
    }

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        path = ctx.resolve(arguments["path"])
        offset = max(1, arguments.get("offset") or 1)
        limit = max(1, arguments.get("limit") or DEFAULT_LIMIT)
        if path.is_dir():
            raise ToolError(f"{path} is a directory; use List to see its entries")
        if not path.exists():
            raise _missing(path)
        data = path.read_bytes()
        is_pdf, media = data.startswith(b"%PDF-"), image_type(data)
        if not is_pdf and media is None and b"\0" in data[:8192]:
            raise ToolError(f"{path} is a binary file ({len(data):,} bytes); Read shows text, PDFs and images")
        ctx.read_files[path] = _stamp(path)
        if is_pdf:
            from sagent.tools.pdf import pdf_text

            return await asyncio.to_thread(pdf_text, data, arguments.get("pages"), name=str(path))
        if media is not None:
            return _image(path, data, media, ctx)
        lines = data.decode("utf-8", errors="replace").splitlines()
        if not lines:
            return f"{path} is empty"
        window = lines[offset - 1 : offset - 1 + limit]
        if not window:
            raise ToolError(f"offset {offset} is past the end: {path} has {len(lines)} lines")
        out, size = [], 0
        for n, line in enumerate(window, start=offset):
            if len(line) > MAX_LINE:
                line = line[:MAX_LINE] + f" [… {len(line) - MAX_LINE} more characters]"
            size += len(line) + 8
            if size > MAX_OUTPUT - 200 and out:  # a page the context can take; the note says how to go on
                break
            out.append(f"{n:>6}\t{line}")
        last = offset + len(out) - 1
        if last < len(lines):
            out.append(f"[{len(lines) - last} more lines: Read with offset={last + 1} to go on]")
        return "\n".join(out)


def _image(path: Path, data: bytes, media: str, ctx: ToolContext) -> ToolOutput:
    kind = media.split("/")[1].upper()
    about = f"{path}: {kind} image, {len(data):,} bytes"
    if ctx.runtime is not None and not ctx.runtime.accepts_images():
        return (
            f"{about}. The current model does not accept images, so it cannot be shown; switch to a model "
            "that does (AgentSelf switch) or describe what you need from it another way."
        )
    if len(data) > MAX_IMAGE_BYTES:
        raise ToolError(f"{about}: too large to send (the limit is {MAX_IMAGE_BYTES:,} bytes); make it smaller")
    return (TextPart(about), ImagePart(base64.b64encode(data).decode("ascii"), media))


class Write(_FileTool):
    name = "Write"
    description = (
        "Create a file, or overwrite one you have read in this session and that has not changed since. "
        "Parent folders are created. Prefer Edit for changes to an existing file."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "the file to write"},
            "content": {"type": "string", "description": "the whole new content"},
        },
        "required": ["path", "content"],
    }

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        path = ctx.resolve(arguments["path"])
        content: str = arguments["content"]
        if path.is_dir():
            raise ToolError(f"{path} is a directory")
        existed = path.exists()
        if existed:
            _check_fresh(path, ctx, "overwrite")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
        ctx.read_files[path] = _stamp(path)
        verb = "overwrote" if existed else "created"
        lines = len(content.splitlines())
        return f"{verb} {path} ({lines} lines, {len(content.encode()):,} bytes)"


class Edit(_FileTool):
    name = "Edit"
    description = (
        "Replace exact text in a file you have read: `old_string` must occur exactly once (add surrounding "
        "lines to make it unique) unless `replace_all` is true. Returns a diff of the change."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "the file to edit"},
            "old_string": {"type": "string", "description": "the exact text to replace, whitespace included"},
            "new_string": {"type": "string", "description": "the replacement"},
            "replace_all": {"type": "boolean", "description": "replace every occurrence", "default": False},
        },
        "required": ["path", "old_string", "new_string"],
    }

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        path = ctx.resolve(arguments["path"])
        old, new = arguments["old_string"], arguments["new_string"]
        if not path.exists():
            raise _missing(path)
        _check_fresh(path, ctx, "edit")
        if old == new:
            raise ToolError("old_string and new_string are the same; nothing to change")
        if not old:
            raise ToolError("old_string is empty; give the exact text to replace")
        text = path.read_text(encoding="utf-8")
        count = text.count(old)
        if count == 0:
            raise ToolError(f"old_string was not found in {path}.{_closest(text, old)}")
        if count > 1 and not arguments.get("replace_all"):
            raise ToolError(
                f"old_string occurs {count} times in {path}; include more surrounding lines to make it "
                "unique, or set replace_all"
            )
        updated = text.replace(old, new) if arguments.get("replace_all") else text.replace(old, new, 1)
        path.write_text(updated, encoding="utf-8")
        ctx.read_files[path] = _stamp(path)
        diff = list(
            difflib.unified_diff(text.splitlines(), updated.splitlines(), str(path), str(path), n=2, lineterm="")
        )
        if len(diff) > MAX_DIFF_LINES:
            diff = [*diff[:MAX_DIFF_LINES], f"[… {len(diff) - MAX_DIFF_LINES} more diff lines]"]
        return f"edited {path} ({count if arguments.get('replace_all') else 1} replacement)\n" + "\n".join(diff)


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
