"""File checkpoints: what each file sagent writes held just before the write, so `/rewind` can put it back.

Before a file-writing tool runs (a tool with `writes_files = True` and a `path` argument: Write and Edit),
the `FileCheckpoints` hook keeps the file's bytes and mode, or that it did not exist, keyed to the session
log's position at that moment (its `seq`: the user turn it belongs to is the last user message logged
before it); after the call, it notes what the file holds then (what sagent wrote). Going back to a user
message puts every file sagent changed since back as it was before its first write after that message,
and deletes the files it created since, but only where the file still holds what sagent last wrote: a
file someone else changed since (the user, an editor, a shell command) is left alone unless the caller
names it in `overwrite` (the REPL asks about each, showing its diff). A file sagent's calls did not change
(an Edit that failed) is never touched.

Layout, under the session's folder (beside its log):

    checkpoints/index.jsonl     one line a write: {"seq": 12, "path": "/abs/f", "blob": "<sha256>"|null, "mode": 420}
                                and one after it: {"seq": 13, "path": "/abs/f", "after": "<sha256>"|null}
    checkpoints/blobs/<sha256>  the bytes, once each (the same content is kept once)

An index written before the "after" lines existed still rewinds: a file whose write has no "after" line
counts as changed since (asked about), unless it already holds what a rewind would put back.

Folders 0700, files 0600. The bytes are kept as they were (not redacted: they are your files, and a
redacted copy could not be put back). An ephemeral session keeps them in memory. Files a shell command
changes (Bash) are not tracked: only what sagent's own file tools write.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import json
import os
import stat
import threading
import weakref
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from sagent.agent.hooks import ALLOW, Hook, ToolDecision
from sagent.events import Event, MessageAdded
from sagent.lib.realpaths import real_path
from sagent.tools.base import off_loop
from sagent.types import Message, ToolCall, ToolResult, UserMessage

if TYPE_CHECKING:
    from sagent.agent.agent import Agent
    from sagent.agent.session import SessionLog

MAX_CHECKPOINT_BYTES = 64 * 2**20
"""A file larger than this is not kept (a rewind says it could not put it back)."""
TOO_LARGE = "too large to keep"


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """One write's checkpoint: the file at `path` as it was when the log was at `seq`. `blob` names its
    bytes (None: the file did not exist); `skipped` says why its bytes were not kept ("" when they were)."""

    seq: int
    path: Path
    blob: str | None
    mode: int | None = None
    skipped: str = ""


@dataclass(frozen=True, slots=True)
class Written:
    """What a file held right after one of sagent's writes (`digest`: the sha256 of its bytes; None: it
    was not there), noted at log position `seq`."""

    seq: int
    path: Path
    digest: str | None


FileState = Literal["ours", "changed", "same"]
"""Where a file stands against a rewind: `ours` (it still holds what sagent last wrote: put back),
`changed` (someone else changed it since, or sagent cannot tell: left alone unless confirmed), `same` (it
already holds what the rewind would put back: nothing to do)."""


@dataclass(frozen=True, slots=True)
class FileChange:
    """A file sagent changed since a point in the session, as a rewind to that point would find it:
    `before` is the checkpoint it would be put back from; `current` and `put_back` are its bytes now and
    after the rewind (None: no file)."""

    path: Path
    state: FileState
    before: Checkpoint
    current: bytes | None
    put_back: bytes | None

    def diff(self, context: int = 3) -> str:
        """A unified diff from the file as it is now to what a rewind would put back (empty when equal)."""
        old = _lines(self.current)
        new = _lines(self.put_back)
        now = f"{self.path} (now)" if self.current is not None else f"{self.path} (no file now)"
        back = f"{self.path} (put back)" if self.put_back is not None else f"{self.path} (deleted)"
        return "".join(difflib.unified_diff(old, new, now, back, n=context))


def _lines(data: bytes | None) -> list[str]:
    if data is None:
        return []
    lines = data.decode("utf-8", errors="replace").splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines


@dataclass(frozen=True, slots=True)
class Restored:
    """What putting files back did: the files rewritten, the files deleted (created since), the ones that
    could not be put back, each with why, and the ones changed since sagent wrote them and left alone."""

    restored: tuple[Path, ...] = ()
    deleted: tuple[Path, ...] = ()
    failed: tuple[str, ...] = ()
    left: tuple[Path, ...] = ()


class Checkpoints:
    """The checkpoints of one session: kept in `folder` (None: in memory, for an ephemeral session)."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self._lock = threading.Lock()  # saves run in worker threads, several at once
        self._entries: list[Checkpoint | Written] | None = None
        self._memory: dict[str, bytes] = {}
        self._marks: dict[int, int] = {}

    # ------------------------------------------------------------------------------------- writing

    def save(self, path: Path, seq: int) -> Checkpoint | None:
        """Keep what `path` holds now, before a tool writes it, at log position `seq`. None when it is not
        a file that can be written (a folder, a link: the tool refuses those)."""
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return self._add(Checkpoint(seq, path, None))
        except NotADirectoryError:
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        mode = stat.S_IMODE(st.st_mode)
        if st.st_size > MAX_CHECKPOINT_BYTES:
            return self._add(Checkpoint(seq, path, None, mode, TOO_LARGE))
        data = path.read_bytes()
        blob = hashlib.sha256(data).hexdigest()
        self._keep(blob, data)
        return self._add(Checkpoint(seq, path, blob, mode))

    def note_written(self, path: Path, seq: int) -> Written:
        """Note what `path` holds now, right after sagent wrote it (or a rewind put it back)."""
        return self._add(Written(seq, path, _digest(path)))

    def mark(self, message: Message, seq: int) -> None:
        """Remember that `message` was logged at `seq` (for a log that has no file to read it back from)."""
        self._marks[id(message)] = seq

    def marked(self, message: Message) -> int | None:
        """The seq `mark` remembered for `message`, or None."""
        return self._marks.get(id(message))

    # ------------------------------------------------------------------------------------- reading

    def entries(self) -> list[Checkpoint]:
        """Every checkpoint, oldest first."""
        with self._lock:
            return [e for e in self._load() if isinstance(e, Checkpoint)]

    def since(self, seq: int) -> dict[Path, Checkpoint]:
        """For each file written after log position `seq`, its first checkpoint after it: how it was then."""
        first: dict[Path, Checkpoint] = {}
        for entry in self.entries():
            if entry.seq > seq and entry.path not in first:
                first[entry.path] = entry
        return first

    def changes(self, seq: int, digests: dict[Path, str | None] | None = None) -> list[FileChange]:
        """The files sagent changed after log position `seq` (a write that left a file as it was, such as
        an Edit that failed, is no change), each with where it stands now; their bytes are not read here
        (`current` and `put_back` are None: `change` gives one file's). `digests` caches what each file
        holds now across calls."""
        with self._lock:
            entries = list(self._load())
        found: list[FileChange] = []
        for path, first in self.since(seq).items():
            start = entries.index(first)
            after = [e for e in entries[start:] if isinstance(e, Written) and e.path == path]
            last = after[-1].digest if after else _UNKNOWN
            if last == first.blob and not first.skipped:
                continue  # sagent's calls since left it as it was
            if digests is not None and path in digests:
                now = digests[path]
            else:
                now = _digest(path)
                if digests is not None:
                    digests[path] = now
            state: FileState = "ours" if now == last else "changed"
            if not first.skipped and now == first.blob:
                state = "same"
            found.append(FileChange(path, state, first, None, None))
        return found

    def change(self, seq: int, path: Path) -> FileChange | None:
        """The change a rewind to `seq` would undo in `path` (None: none), with its bytes now and after."""
        for change in self.changes(seq):
            if change.path == path:
                current = _read(path)
                back = None if change.before.blob is None or change.before.skipped else self._bytes(change.before.blob)
                return FileChange(path, change.state, change.before, current, back)
        return None

    def restore(self, seq: int, overwrite: Collection[Path] = (), *, now: int | None = None) -> Restored:
        """Put every file sagent changed after log position `seq` back as it was then, and delete those it
        created since, where the file still holds what sagent last wrote. A file changed since by someone
        else is left alone (`Restored.left`) unless it is in `overwrite`. What is put back is noted as
        written by sagent at log position `now` (default `seq`), so a later rewind knows it."""
        restored: list[Path] = []
        deleted: list[Path] = []
        failed: list[str] = []
        left: list[Path] = []
        forced = {Path(p) for p in overwrite}
        for change in self.changes(seq):
            path, entry = change.path, change.before
            if change.state == "same":
                continue
            if change.state == "changed" and path not in forced:
                left.append(path)
                continue
            try:
                if entry.skipped:
                    failed.append(f"{path}: {entry.skipped}")
                    continue
                if entry.blob is None:
                    if os.path.lexists(path):
                        path.unlink()
                        deleted.append(path)
                else:
                    _put_back(path, self._bytes(entry.blob), entry.mode)
                    restored.append(path)
                self.note_written(path, seq if now is None else now)
            except OSError as error:
                failed.append(f"{path}: {error.strerror or error}")
        return Restored(tuple(restored), tuple(deleted), tuple(failed), tuple(left))

    def copy_to(self, folder: Path, before: int | None = None) -> Checkpoints:
        """A copy of these checkpoints (those before log position `before`, or all) in `folder`: a fork's,
        whose log holds the same records up to there."""
        copy = Checkpoints(folder)
        with self._lock:
            entries = list(self._load())
        for entry in entries:
            if before is None or entry.seq < before:
                if isinstance(entry, Written):
                    copy._add(entry)
                    continue
                if entry.blob is not None:
                    copy._keep(entry.blob, self._bytes(entry.blob))
                copy._add(entry)
        return copy

    # ------------------------------------------------------------------------------------- storage

    def _load(self) -> list[Checkpoint | Written]:
        if self._entries is None:
            self._entries = []
            index = self.folder / "index.jsonl" if self.folder else None
            if index is not None and index.is_file():
                for line in index.read_text(encoding="utf-8").splitlines():
                    with contextlib.suppress(ValueError, KeyError, TypeError):  # a torn last line
                        self._entries.append(_entry(json.loads(line)))
        return self._entries

    def _add(self, entry: _Entry) -> _Entry:
        with self._lock:
            entries = self._load()
            if self.folder is not None:
                record: dict[str, Any]
                if isinstance(entry, Written):
                    record = {"seq": entry.seq, "path": str(entry.path), "after": entry.digest}
                else:
                    record = {"seq": entry.seq, "path": str(entry.path), "blob": entry.blob, "mode": entry.mode}
                    if entry.skipped:
                        record["skipped"] = entry.skipped
                self._folder()
                line = json.dumps(record, ensure_ascii=False) + "\n"
                fd = os.open(self.folder / "index.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                try:
                    os.write(fd, line.encode("utf-8"))
                finally:
                    os.close(fd)
            entries.append(entry)
        return entry

    def _keep(self, blob: str, data: bytes) -> None:
        if self.folder is None:
            self._memory[blob] = data
            return
        path = self._folder() / "blobs" / blob
        if path.exists():
            return
        path.parent.mkdir(exist_ok=True, mode=0o700)
        partial = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.part")
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(partial, path)

    def _bytes(self, blob: str) -> bytes:
        if self.folder is None:
            return self._memory[blob]
        return (self.folder / "blobs" / blob).read_bytes()

    def _folder(self) -> Path:
        assert self.folder is not None
        from sagent.lib.private import private_dir  # 0700 down to the session's folder

        private_dir(self.folder)
        return self.folder


_UNKNOWN = "?"  # what sagent last wrote, when no line says (an older index, a write cut short)
_Entry = TypeVar("_Entry", Checkpoint, Written)


def _digest(path: Path) -> str | None:
    """The sha256 of what `path` holds (None: no file there; a folder or a link reads as unknown)."""
    data = _read(path)
    return hashlib.sha256(data).hexdigest() if data is not None else None


def _read(path: Path) -> bytes | None:
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    if not stat.S_ISREG(st.st_mode):
        return _UNKNOWN.encode()  # never what sagent wrote: asked about, never silently replaced
    try:
        return path.read_bytes()
    except OSError:
        return _UNKNOWN.encode()


def _entry(record: dict[str, Any]) -> Checkpoint | Written:
    if "after" in record:
        after = record["after"]
        if after is not None and not isinstance(after, str):
            raise TypeError("after")
        return Written(int(record["seq"]), Path(record["path"]), after)
    blob = record["blob"]
    if blob is not None and not isinstance(blob, str):
        raise TypeError("blob")
    return Checkpoint(int(record["seq"]), Path(record["path"]), blob, record.get("mode"), record.get("skipped", ""))


def _put_back(path: Path, data: bytes, mode: int | None) -> None:
    """Write `data` to `path` as a new file moved into place (a link there is replaced, not followed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.sagent-rewind")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(partial, mode if mode is not None else 0o644)
    os.replace(partial, path)


# ------------------------------------------------------------------------------------------ per agent

_STORES: weakref.WeakKeyDictionary[SessionLog, Checkpoints] = weakref.WeakKeyDictionary()


def root_of(agent: Agent) -> Agent:
    """The top agent of `agent`'s tree: the one whose session the user talks to."""
    while agent.parent is not None:
        agent = agent.parent
    return agent


def checkpoints_of(agent: Agent) -> Checkpoints:
    """The checkpoints of `agent`'s session (one store a session log, kept in its folder)."""
    log = agent.session
    found = _STORES.get(log)
    if found is None:
        folder = log.session_dir / "checkpoints" if log.session_dir is not None else None
        found = _STORES[log] = Checkpoints(folder)
    return found


class FileCheckpoints(Hook):
    """Keeps a checkpoint of each file before a tool writes it, and notes what the file holds after the
    call, in the top agent's session (a sub-agent's writes count for the turn of its parent's user). Put
    it last among the hooks, so the path it keeps is the one the call runs with (after any `Rewrite`). A
    checkpoint that cannot be kept (a full disk) denies the write: the file is not changed without a way
    back."""

    def __init__(self) -> None:
        self._kept: dict[str, Path] = {}  # call id -> the file checkpointed before it

    async def before_tool(self, agent: Agent, call: ToolCall) -> ToolDecision:
        tool = agent.tools.get(call.name)
        target = call.arguments.get("path")
        if getattr(tool, "writes_files", False) and isinstance(target, str) and target:
            root = root_of(agent)
            path = Path(real_path(target, str(agent.context.cwd)))  # the file the tool will really write
            if await off_loop(checkpoints_of(root).save, path, root.session.seq) is not None:
                self._kept[call.id] = path
        return ALLOW

    async def after_tool(self, agent: Agent, call: ToolCall, result: ToolResult) -> ToolResult | None:
        path = self._kept.pop(call.id, None)
        if path is not None:  # what the call left there, so a rewind can tell sagent's content from others'
            root = root_of(agent)
            await off_loop(checkpoints_of(root).note_written, path, root.session.seq)
        return None

    def on_event(self, agent: Agent, event: Event) -> None:
        # A log with a file says where each message is itself; an ephemeral one is told here.
        if agent.parent is not None or agent.session.path is not None or not isinstance(event, MessageAdded):
            return
        if isinstance(event.message, UserMessage):
            checkpoints_of(agent).mark(event.message, agent.session.seq - 1)
