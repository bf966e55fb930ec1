"""The session log: every event of a session appended to a JSONL file before the agent acts on it.

Layout: `$XDG_DATA_HOME/sagent/sessions/<working directory slug>/<session id>.jsonl`, folders 0700, files
0600. Each line is one record:

    {"seq": 0, "prev": null, "ts": "...", "kind": "header", "session_id": ..., "cwd": ..., ...}
    {"seq": 1, "prev": "<sha256 of line 0>", "ts": "...", "kind": "event", "event": {"type": ...}}

`prev` is the SHA-256 of the previous line's bytes and `hash` (the last field) the SHA-256 of the line
without it, so the log can be checked from the file alone; it is, whenever it is opened
(`session_check`). Streaming deltas are not written: the complete message that follows carries all of
their text. The history is rebuilt from `message_added`, `turn_finished` and `tool_finished` events, so a
resumed session sends the model exactly what it had.

A log is written by one process at a time (`session_lock`). A record is written with
one unbuffered write, and a write that fails or falls short raises `SessionWriteError`: the agent acts on
nothing whose record is not whole in the file. Every secret sagent knows (`sagent.redaction`) is replaced
by `[redacted]` before a line is written.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sagent import redaction
from sagent.agent.compaction import Thread, replace_results
from sagent.agent.session_check import (
    HASH_FIELD,
    Report,
    SessionBusy,
    SessionCorrupt,
    SessionError,
    SessionWriteError,
    check,
    line_hash,
    seal,
    split_lines,
)
from sagent.agent.session_lock import open_locked, read_all, release
from sagent.agent.storage import SessionStorage
from sagent.encoding import scrub_deep
from sagent.events import Event, TextDelta, ThinkingDelta, ToolCallDelta
from sagent.lib.xdg import data_home
from sagent.tasks import TaskList
from sagent.types import (
    AssistantMessage,
    Cost,
    Message,
    TextPart,
    ToolResult,
    Usage,
    message_from_dict,
    to_dict,
)

__all__ = ["SessionBusy", "SessionCorrupt", "SessionError", "SessionLog", "SessionState", "SessionWriteError"]

_NOT_LOGGED = (TextDelta, ThinkingDelta, ToolCallDelta)
_COPIED_OUT = ("seq", "prev", HASH_FIELD)  # what a record copied into another log gets anew
INTERRUPTED_TOOL = "interrupted: the session stopped before this tool call finished; its effects are unknown"


def data_dir() -> Path:
    return data_home() / "sagent"


def sessions_dir(cwd: Path) -> Path:
    """The folder holding the sessions started in `cwd`."""
    resolved = str(cwd.resolve())
    slug = re.sub(r"[^A-Za-z0-9._-]", "-", resolved).strip("-") or "root"
    if len(slug) > 120:  # keep the folder name short and still unique
        slug = slug[-100:] + "-" + hashlib.sha256(resolved.encode()).hexdigest()[:12]
    return data_dir() / "sessions" / slug


def new_session_id() -> str:
    # Sortable by creation time, unique without coordination.
    return time.strftime("%Y%m%d-%H%M%S") + "-" + uuid.uuid4().hex[:8]


@dataclass
class SessionState:
    """What a session log says: the history and the spend so far."""

    history: list[Message] = field(default_factory=list)
    usage_by_model: dict[str, tuple[Usage, Cost, int]] = field(default_factory=dict)
    header: dict[str, Any] = field(default_factory=dict)
    # Tool calls that never got a result (the process died mid-tool); resume answers them.
    dangling: list[ToolResult] = field(default_factory=list)
    # The provider and model the session was last using, once it has run.
    provider: str | None = None
    model: str | None = None
    # What the last compaction carried (the user's messages, the files touched), for the next one.
    thread: Thread = field(default_factory=Thread)
    # The seq of the record that brought each message of `history` (a summary: its compaction's), so a
    # message can be placed in the log (`/rewind`, `/fork`).
    seqs: list[int] = field(default_factory=list)
    # The task list as the agent last set it (TodoWrite), and each list set since the last compaction with
    # the length of the history then, so a rewind finds the list it goes back to.
    task_list: TaskList = field(default_factory=TaskList)
    task_lists: list[tuple[int, TaskList]] = field(default_factory=list)


class SessionLog:
    """An append-only, hash-chained JSONL log, written by one process at a time. `path=None` keeps
    nothing (ephemeral)."""

    def __init__(
        self,
        session_id: str,
        path: Path | None,
        *,
        seq: int = 0,
        prev: str | None = None,
        fd: int | None = None,
        storage: SessionStorage | None = None,
    ) -> None:
        self.id = session_id
        self.path = path
        self.storage = storage
        """Where the records go when not to a file (`in_storage`); None: the file at `path`, or nowhere."""
        self._seq = seq
        self._prev = prev
        self._fd = fd  # open and locked from creation or reopening until close()
        self._size = os.fstat(fd).st_size if fd is not None else 0
        self._broken: SessionWriteError | None = None
        redaction.rescan()  # variables set since the last log was opened count as secrets too

    # -------------------------------------------------------------------------------- opening

    @classmethod
    def create(
        cls, cwd: Path, header: dict[str, Any], *, directory: Path | None = None, session_id: str | None = None
    ) -> SessionLog:
        """A new session log in `directory` (default: this working directory's sessions folder), locked for
        this process and holding its header. `session_id` names it (a new id by default); FileExistsError
        when a session of that id is there already."""
        from sagent.lib.private import private_dir  # 0700 down from sagent's data folder

        folder = directory or sessions_dir(cwd)
        private_dir(folder, tighten_below=data_dir())
        session_id = session_id or new_session_id()
        path = folder / f"{session_id}.jsonl"
        if path.exists():
            raise FileExistsError(f"a session {session_id} exists already: {path}")
        log = cls(session_id, path, fd=open_locked(path, create=True))
        try:
            log.append({"kind": "header", "session_id": session_id, "cwd": str(cwd.resolve()), **header})
        except SessionWriteError:
            log.close()
            raise
        return log

    @classmethod
    def in_storage(
        cls, storage: SessionStorage, header: dict[str, Any] | None = None, *, cwd: Path | None = None
    ) -> SessionLog:
        """A new session log kept in `storage` (see `sagent.agent.storage`), holding its header; ValueError
        when the storage holds a log already (`open_storage` continues one)."""
        if storage.read():
            raise ValueError(f"{storage.name} holds a session log already: continue it with Agent.resume")
        session_id = new_session_id()
        log = cls(session_id, None, storage=storage)
        where = str((cwd or Path.cwd()).resolve())
        log.append({"kind": "header", "session_id": session_id, "cwd": where, **(header or {})})
        return log

    @classmethod
    def open_storage(cls, storage: SessionStorage) -> tuple[SessionLog, SessionState]:
        """Continue the session log kept in `storage`: checked whole first (`SessionCorrupt` at the first
        record that fails; a torn last line is left out)."""
        lines, _ = split_lines(storage.read())
        if not lines:
            raise ValueError(f"{storage.name} holds no session log")
        where = Path(storage.name)
        state = read_state(check(lines, where), where)
        session_id = state.header.get("session_id") or storage.name
        return cls(session_id, None, seq=len(lines), prev=line_hash(lines[-1]), storage=storage), state

    @classmethod
    def ephemeral(cls) -> SessionLog:
        return cls(new_session_id(), None)

    @classmethod
    def open(cls, path: Path) -> tuple[SessionLog, SessionState]:
        """Reopen an existing log for appending, and read what it holds. The log is locked for this
        process first (`SessionBusy` when another one writes it), then checked whole (`SessionCorrupt` at
        the first record that fails); a torn last record, left by a process that died mid-write, is
        dropped."""
        fd = open_locked(path, create=False)
        try:
            lines, torn = split_lines(read_all(fd))
            if torn:
                os.ftruncate(fd, sum(len(line) + 1 for line in lines))
            state = read_state(check(lines, path), path)
        except BaseException:
            release(fd, path)
            raise
        session_id = state.header.get("session_id") or path.stem
        return cls(session_id, path, seq=len(lines), prev=line_hash(lines[-1]), fd=fd), state

    @classmethod
    def fork_before_compaction(cls, path: Path) -> Path:
        """A new session holding `path`'s records up to its last compaction: the conversation as it was
        before that summary replaced it. The original log is not touched. Raises ValueError when the
        session was never compacted, `SessionCorrupt` when it is damaged."""
        records = check(split_lines(path.read_bytes())[0], path)
        compactions = [i for i, r in enumerate(records) if (r.get("event") or {}).get("type") == "compacted"]
        if not compactions:
            raise ValueError(f"session {path.stem} was never compacted")
        return cls._fork(path, records[: compactions[-1]], {"forked_before_seq": compactions[-1]})

    @classmethod
    def fork_damaged(cls, path: Path) -> tuple[Path, SessionCorrupt] | None:
        """When the log at `path` is damaged: a new session holding its records up to the last good one,
        and what was wrong. None when the log is whole. The original file is not touched. Raises
        `SessionCorrupt` when no record can be trusted (the header itself is bad)."""
        lines, _ = split_lines(path.read_bytes())
        try:
            read_state(check(lines, path), path)
            return None
        except SessionCorrupt as damage:
            if not damage.good:
                raise
            good = check(lines[: damage.good], path)
            extra = {"forked_at_line": damage.line, "fork_reason": damage.reason}
            return cls._fork(path, good, extra), damage

    @classmethod
    def fork(cls, path: Path, session_id: str | None = None) -> Path:
        """A new session (named `session_id`, or a new id) holding all of `path`'s records, to go on from
        there while the original stays as it is. `SessionCorrupt` when the log is damaged."""
        records = check(split_lines(path.read_bytes())[0], path)
        return cls._fork(path, records, {}, session_id)

    @classmethod
    def _fork(
        cls, path: Path, records: list[dict[str, Any]], extra: dict[str, Any], session_id: str | None = None
    ) -> Path:
        header = records[0]
        kept = {k: v for k, v in header.items() if k not in (*_COPIED_OUT, "ts", "kind", "session_id", "cwd")}
        kept |= {"forked_from": header.get("session_id", path.stem), **extra}
        log = cls.create(Path(header.get("cwd") or "."), kept, directory=path.parent, session_id=session_id)
        try:
            for record in records[1:]:
                log.append({k: v for k, v in record.items() if k not in _COPIED_OUT})
        finally:
            log.close()
        assert log.path is not None
        return log.path

    @property
    def seq(self) -> int:
        """The seq the next record gets: how many records the log holds (an ephemeral log counts too)."""
        return self._seq

    @property
    def session_dir(self) -> Path | None:
        """A folder for this session's side files (spilled tool outputs)."""
        return self.path.with_suffix("") if self.path else None

    # -------------------------------------------------------------------------------- writing

    def append(self, record: dict[str, Any]) -> None:
        """Write one record whole, or raise `SessionWriteError` (and write nothing more to this log)."""
        if self._broken is not None:
            raise SessionWriteError(self._broken.path, self._broken.cause)
        record = {"seq": self._seq, "prev": self._prev, "ts": datetime.now(UTC).isoformat(), **record}
        line = seal(_redact(_dumps(record))).encode("utf-8")
        if self.storage is not None:
            self._store(line + b"\n")
        elif self.path is not None:
            if self._fd is None:
                self._fd = open_locked(self.path, create=not self.path.exists())
                self._size = os.fstat(self._fd).st_size
            self._write(line + b"\n")
        self._prev = line_hash(line)
        self._seq += 1

    def _write(self, data: bytes) -> None:
        # One unbuffered write a record: once it returns, a kill of this process cannot lose it. A write
        # may fall short (a full disk, the file size limit): the rest is tried, and a failure is final.
        assert self._fd is not None and self.path is not None
        done = 0
        try:
            while done < len(data):
                written = os.write(self._fd, data[done:])
                if written <= 0:
                    raise OSError(errno.EIO, "the write made no progress")
                done += written
        except OSError as error:
            self._broken = SessionWriteError(self.path, error)
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, self._size)  # drop the partial record, so the log stays whole
            raise self._broken from error
        self._size += done

    def _store(self, data: bytes) -> None:
        assert self.storage is not None
        try:
            self.storage.append(data)
        except OSError as error:
            self._broken = SessionWriteError(Path(self.storage.name), error)
            raise self._broken from error

    def record(self, event: Event) -> None:
        if not isinstance(event, _NOT_LOGGED):
            self.append({"kind": "event", "event": to_dict(event)})

    def close(self) -> None:
        """Release the log (and its lock)."""
        if self._fd is not None and self.path is not None:
            release(self._fd, self.path)
        self._fd = None
        if self.storage is not None:
            self.storage.close()


def _dumps(record: dict[str, Any]) -> str:
    try:
        text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:  # a lone surrogate: JSON escapes keep it exactly, and the file valid UTF-8
        return json.dumps(record, ensure_ascii=True, separators=(",", ":"))


_escaped: tuple[int, list[str]] = (-1, [])  # the known secrets and their JSON-escaped forms, by generation


def _redact(text: str) -> str:
    # A secret appears in the JSON text as JSON writes it (quotes and backslashes escaped).
    global _escaped
    if _escaped[0] != redaction.generation():
        secrets = redaction.known_secrets()
        escaped = [json.dumps(s, ensure_ascii=False)[1:-1] for s in secrets]
        _escaped = (redaction.generation(), sorted(set(secrets) | set(escaped), key=len, reverse=True))
    return redaction.redact(text, _escaped[1])


# ---------------------------------------------------------------------------------------------- reading


def read_state(records: list[dict[str, Any]], path: Path | None = None) -> SessionState:
    """The history and spend that checked records (see `session_check.check`) describe. A record whose
    event cannot be rebuilt raises `SessionCorrupt` naming its line."""
    state = SessionState()
    answered: set[str] = set()
    for index, record in enumerate(records):
        try:
            _apply(state, record, answered)
            _place(state, record, index)
        except (KeyError, TypeError, ValueError, AttributeError, AssertionError) as error:
            kind = (record.get("event") or {}).get("type", record.get("kind"))
            reason = f"its {kind} record cannot be read ({type(error).__name__}: {error})"
            raise SessionCorrupt(path, index + 1, reason, index) from None
    for message in state.history:
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                if call.id not in answered:
                    state.dangling.append(ToolResult.of(call, INTERRUPTED_TOOL, is_error=True))
    return state


def _apply(state: SessionState, record: dict[str, Any], answered: set[str]) -> None:
    if record.get("kind") == "header":
        state.header = record
        return
    event = record.get("event") or {}
    kind = event.get("type")
    if kind in ("session_started", "model_switched"):
        state.provider, state.model = event["provider"], event["model"]
    elif kind == "compacted":
        kept = event.get("kept", 0)
        state.history = [_message(event["summary"]), *(state.history[-kept:] if kept else [])]
        state.task_lists = [(0, state.task_list)]  # the summary carries the list: it holds for what follows
        state.thread = Thread(
            tuple(event.get("user_messages", ())),
            tuple(event.get("files_read", ())),
            tuple(event.get("files_modified", ())),
        )
        usage, cost, n = state.usage_by_model.get(event["model"], (Usage(), Cost(), 0))
        state.usage_by_model[event["model"]] = (
            usage + Usage(**event["usage"]),
            cost + Cost(**event["cost"]),
            n + 1,
        )
    elif kind == "message_added":
        state.history.append(_message(event["message"]))
    elif kind == "turn_finished":
        message = _message(event["message"], AssistantMessage)
        state.history.append(message)
        usage, cost, n = state.usage_by_model.get(message.model, (Usage(), Cost(), 0))
        state.usage_by_model[message.model] = (
            usage + Usage(**event["usage"]),
            cost + Cost(**event["cost"]),
            n + 1,
        )
    elif kind == "context_pruned":
        stubs = [_message(r, ToolResult) for r in event["results"]]
        state.history = replace_results(state.history, stubs)
    elif kind == "tool_results_cleared":
        state.history = clear_results(state.history, set(event["call_ids"]))
    elif kind == "tool_finished":
        result = _message(event["result"], ToolResult)
        state.history.append(result)
        answered.add(result.call_id)
    elif kind == "task_list_changed":
        state.task_list = TaskList.parse(event["tasks"]["items"])
        state.task_lists.append((len(state.history), state.task_list))
    elif kind == "rewound":
        kept = event["kept"]
        if type(kept) is not int or not 0 <= kept <= len(state.history):
            raise ValueError(f"it keeps {kept!r} messages of {len(state.history)}")
        del state.history[kept:]
        state.task_lists = [(n, tasks) for n, tasks in state.task_lists if n <= kept]
        state.task_list = state.task_lists[-1][1] if state.task_lists else TaskList()


def _place(state: SessionState, record: dict[str, Any], seq: int) -> None:
    """Keep `state.seqs` beside `state.history`: the messages a record added get its seq; a change that
    replaced messages keeps the seqs of those it kept."""
    grown = len(state.history) - len(state.seqs)
    event = record.get("event") or {}
    if event.get("type") == "compacted":
        kept = event.get("kept", 0)
        state.seqs = [seq, *(state.seqs[-kept:] if kept else [])]
    elif grown < 0:
        del state.seqs[len(state.history) :]  # rewound: the first messages stay
    else:
        state.seqs += [seq] * grown


def _message(data: Any, kind: type = object) -> Any:
    """A message rebuilt from a record, of the kind expected, its texts strings (no `assert`: it must hold
    under `python -O` too)."""
    if not isinstance(data, dict):
        raise TypeError("a message is not a JSON object")
    # A log written before lone surrogates were replaced may hold them: read back as U+FFFD, so the session
    # continues instead of failing every request.
    message = scrub_deep(message_from_dict(data))
    if not isinstance(message, kind):
        raise TypeError(f"a {type(message).__name__} where a {kind.__name__} belongs")
    for part in getattr(message, "content", ()):
        if isinstance(part, TextPart) and not isinstance(part.text, str):
            raise TypeError("a text part whose text is not a string")
    return message


CLEARED = "[output cleared by the agent to save context]"


def clear_results(history: list[Message], call_ids: set[str]) -> list[Message]:
    """`history` with the output of these tool calls replaced by a short note."""
    notes = [
        ToolResult(m.call_id, m.name, (TextPart(CLEARED),), m.is_error)
        for m in history
        if isinstance(m, ToolResult) and m.call_id in call_ids
    ]
    return replace_results(history, notes)


def peek_state(path: Path) -> SessionState:
    """What a session log holds, read without opening it for writing (a torn last record left out).
    Raises `SessionCorrupt` when the log fails its check."""
    records = check(split_lines(path.read_bytes())[0], path)
    return read_state(records, path)


def verify(path: Path) -> Report:
    """Check the log at `path` whole (each record, and that the history can be rebuilt from them) without
    changing it."""
    lines, torn = split_lines(path.read_bytes())
    try:
        read_state(check(lines, path), path)
    except SessionCorrupt as damage:
        return Report(path, damage.line - 1, torn, damage)
    return Report(path, len(lines), torn)


def verify_chain(path: Path) -> bool:
    """True when the log checks out whole: each record's own hash, `seq`, `prev` and fields."""
    return verify(path).ok


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """One session of a listing: its id and file, when it was last written, its first prompt, the title
    its header stores (a fork's, say; "" when none) and the session it was forked from ("" when none)."""

    id: str
    path: Path
    modified: float
    first_prompt: str
    title: str = ""
    parent: str = ""

    @property
    def label(self) -> str:
        """What a listing calls the session: its stored title, else its first prompt, on one line."""
        return " ".join((self.title or self.first_prompt).split())


def list_sessions(cwd: Path) -> list[SessionInfo]:
    """This directory's sessions, newest first."""
    folder = sessions_dir(cwd)
    if not folder.is_dir():
        return []
    found = []
    for path in folder.glob("*.jsonl"):
        with contextlib.suppress(OSError):  # removed meanwhile, or unreadable: not listed
            title, parent = _header_names(path)
            found.append(SessionInfo(path.stem, path, path.stat().st_mtime, _first_prompt(path), title, parent))
    return sorted(found, key=lambda s: s.modified, reverse=True)


def _header_names(path: Path) -> tuple[str, str]:
    """The `title` and `forked_from` a log's header stores ("" for each it does not, or when the header
    cannot be read: a listing shows every session, checked or not)."""
    with open(path, "rb") as f:
        first = f.readline(65536)
    try:
        header = json.loads(first)
        title, parent = header.get("title"), header.get("forked_from")
    except (ValueError, AttributeError):
        return "", ""
    return (title if isinstance(title, str) else "", parent if isinstance(parent, str) else "")


def _first_prompt(path: Path) -> str:
    """The text of the first message, for listings; "" when there is none or the line is damaged (a
    listing must show every session, checked or not)."""
    with open(path, "rb") as f:
        for line in f:
            if b'"message_added"' in line:
                try:
                    message = json.loads(line)["event"]["message"]
                    parts = message.get("content") or []
                    return "".join(p.get("text", "") for p in parts if isinstance(p.get("text"), str))[:200]
                except (ValueError, KeyError, TypeError, AttributeError):
                    return ""
    return ""


def find_session(ref: str, cwd: Path) -> Path:
    """A session file from an id (of this directory's sessions, or a unique prefix), a name given with
    `--name` (the newest session of that name), or a path."""
    path = Path(ref).expanduser()
    if path.suffix == ".jsonl" and path.is_file():
        return path
    sessions = list_sessions(cwd)
    matches = [s.path for s in sessions if s.id.startswith(ref)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        named = [s.path for s in sessions if s.title == ref]  # newest first: the latest of that name
        if named:
            return named[0]
        raise FileNotFoundError(f"no session {ref!r} in {sessions_dir(cwd)}")
    raise FileNotFoundError(f"session id {ref!r} is ambiguous: {len(matches)} sessions start with it")


def age_text(seconds: float) -> str:
    """How long ago, in the largest whole unit: "3d ago", "5m ago", "just now"."""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit} ago"
    return "just now"
