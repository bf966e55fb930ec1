"""The session log: every event of a session appended to a JSONL file before the agent acts on it.

Layout: `$XDG_DATA_HOME/sagent/sessions/<working directory slug>/<session id>.jsonl`, folders 0700, files
0600. Each line is one record:

    {"seq": 0, "prev": null, "ts": "...", "kind": "header", "session_id": ..., "cwd": ..., ...}
    {"seq": 1, "prev": "<sha256 of line 0>", "ts": "...", "kind": "event", "event": {"type": ...}}

`prev` is the SHA-256 of the previous line's bytes, so the chain can be verified from the file alone.
Streaming deltas are not written: the complete message that follows carries all of their text. The
history is rebuilt from `message_added`, `turn_finished` and `tool_finished` events, so a resumed session
sends the model exactly what it had. Values of API-key-like environment variables never reach the file.
"""

from __future__ import annotations

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

from sagent.agent.compaction import Thread, replace_results
from sagent.events import Event, TextDelta, ThinkingDelta, ToolCallDelta
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

_NOT_LOGGED = (TextDelta, ThinkingDelta, ToolCallDelta)
_SECRET_NAME = re.compile(r"(API_KEY|TOKEN|SECRET|PASSWORD)", re.I)
INTERRUPTED_TOOL = "interrupted: the session stopped before this tool call finished; its effects are unknown"


def data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "sagent"


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


def _secrets() -> list[str]:
    return sorted(
        (v for k, v in os.environ.items() if _SECRET_NAME.search(k) and len(v) >= 12),
        key=len,
        reverse=True,
    )


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


class SessionLog:
    """An append-only, hash-chained JSONL log. `path=None` keeps nothing (ephemeral)."""

    def __init__(self, session_id: str, path: Path | None, *, seq: int = 0, prev: str | None = None) -> None:
        self.id = session_id
        self.path = path
        self._seq = seq
        self._prev = prev
        self._fd: int | None = None
        self._secrets = _secrets()

    # -------------------------------------------------------------------------------- opening

    @classmethod
    def create(cls, cwd: Path, header: dict[str, Any], *, directory: Path | None = None) -> SessionLog:
        folder = directory or sessions_dir(cwd)
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        session_id = new_session_id()
        log = cls(session_id, folder / f"{session_id}.jsonl")
        log.append({"kind": "header", "session_id": session_id, "cwd": str(cwd.resolve()), **header})
        return log

    @classmethod
    def ephemeral(cls) -> SessionLog:
        return cls(new_session_id(), None)

    @classmethod
    def open(cls, path: Path) -> tuple[SessionLog, SessionState]:
        """Reopen an existing log for appending, and read what it holds."""
        raw = path.read_bytes()
        if raw and not raw.endswith(b"\n"):
            # The process died mid-write: drop the torn record so the chain stays whole.
            raw = raw[: raw.rfind(b"\n") + 1]
            with open(path, "r+b") as f:
                f.truncate(len(raw))
        lines = raw.splitlines()
        state = read_state(lines)
        prev = hashlib.sha256(lines[-1]).hexdigest() if lines else None
        session_id = state.header.get("session_id") or path.stem
        return cls(session_id, path, seq=len(lines), prev=prev), state

    @classmethod
    def fork_before_compaction(cls, path: Path) -> Path:
        """A new session holding `path`'s records up to its last compaction: the conversation as it was
        before that summary replaced it. The original log is not touched. Raises ValueError when the
        session was never compacted."""
        lines = path.read_bytes().splitlines()
        records = [json.loads(line) for line in lines]
        compactions = [i for i, r in enumerate(records) if (r.get("event") or {}).get("type") == "compacted"]
        if not compactions:
            raise ValueError(f"session {path.stem} was never compacted")
        header = next((r for r in records if r.get("kind") == "header"), {"kind": "header"})
        keep = [r for r in records[: compactions[-1]] if r.get("kind") != "header"]
        extra = {k: v for k, v in header.items() if k not in ("seq", "prev", "ts", "kind", "session_id", "cwd")}
        extra |= {"forked_from": header.get("session_id", path.stem), "forked_before_seq": compactions[-1]}
        log = cls.create(Path(header.get("cwd") or "."), extra, directory=path.parent)
        for record in keep:
            log.append({k: v for k, v in record.items() if k not in ("seq", "prev")})
        log.close()
        assert log.path is not None
        return log.path

    @property
    def session_dir(self) -> Path | None:
        """A folder for this session's side files (spilled tool outputs)."""
        return self.path.with_suffix("") if self.path else None

    # -------------------------------------------------------------------------------- writing

    def append(self, record: dict[str, Any]) -> None:
        record = {"seq": self._seq, "prev": self._prev, "ts": datetime.now(UTC).isoformat(), **record}
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        for secret in self._secrets:
            if secret in line:
                line = line.replace(secret, "[redacted]")
        # A lone surrogate (a file name that is not UTF-8) becomes its JSON escape: valid UTF-8 that reads back
        # as the same string, where a strict encode would raise.
        data = line.encode("utf-8", "backslashreplace")
        self._prev = hashlib.sha256(data).hexdigest()
        self._seq += 1
        if self.path is None:
            return
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        # One unbuffered write a record: once it returns, a kill of this process cannot lose it.
        os.write(self._fd, data + b"\n")

    def record(self, event: Event) -> None:
        if not isinstance(event, _NOT_LOGGED):
            self.append({"kind": "event", "event": to_dict(event)})

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


# ---------------------------------------------------------------------------------------------- reading


def read_state(lines: list[bytes]) -> SessionState:
    state = SessionState()
    answered: set[str] = set()
    for line in lines:
        record = json.loads(line)
        if record.get("kind") == "header":
            state.header = record
            continue
        event = record.get("event") or {}
        kind = event.get("type")
        if kind in ("session_started", "model_switched"):
            state.provider, state.model = event["provider"], event["model"]
        elif kind == "compacted":
            kept = event.get("kept", 0)
            state.history = [message_from_dict(event["summary"]), *(state.history[-kept:] if kept else [])]
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
            state.history.append(message_from_dict(event["message"]))
        elif kind == "turn_finished":
            message = message_from_dict(event["message"])
            state.history.append(message)
            assert isinstance(message, AssistantMessage)
            usage, cost, n = state.usage_by_model.get(message.model, (Usage(), Cost(), 0))
            state.usage_by_model[message.model] = (
                usage + Usage(**event["usage"]),
                cost + Cost(**event["cost"]),
                n + 1,
            )
        elif kind == "context_pruned":
            stubs = [message_from_dict(r) for r in event["results"]]
            state.history = replace_results(state.history, stubs)  # type: ignore[arg-type]
        elif kind == "tool_results_cleared":
            state.history = clear_results(state.history, set(event["call_ids"]))
        elif kind == "tool_finished":
            result = message_from_dict(event["result"])
            assert isinstance(result, ToolResult)
            state.history.append(result)
            answered.add(result.call_id)
    for message in state.history:
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                if call.id not in answered:
                    state.dangling.append(ToolResult.of(call, INTERRUPTED_TOOL, is_error=True))
    return state


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
    """What a session log holds, read without opening it for writing."""
    raw = path.read_bytes()
    return read_state(raw[: raw.rfind(b"\n") + 1].splitlines())  # without a torn last record


def verify_chain(path: Path) -> bool:
    """True when every record's `prev` is the SHA-256 of the line before it."""
    prev = None
    for line in path.read_bytes().splitlines():
        if json.loads(line).get("prev") != prev:
            return False
        prev = hashlib.sha256(line).hexdigest()
    return True


@dataclass(frozen=True, slots=True)
class SessionInfo:
    id: str
    path: Path
    modified: float
    first_prompt: str


def list_sessions(cwd: Path) -> list[SessionInfo]:
    """This directory's sessions, newest first."""
    folder = sessions_dir(cwd)
    if not folder.is_dir():
        return []
    found = []
    for path in folder.glob("*.jsonl"):
        found.append(SessionInfo(path.stem, path, path.stat().st_mtime, _first_prompt(path)))
    return sorted(found, key=lambda s: s.modified, reverse=True)


def _first_prompt(path: Path) -> str:
    with open(path, "rb") as f:
        for line in f:
            if b'"message_added"' in line:
                message = json.loads(line)["event"]["message"]
                parts = message.get("content") or []
                return "".join(p.get("text", "") for p in parts)[:200]
    return ""


def find_session(ref: str, cwd: Path) -> Path:
    """A session file from an id (of this directory's sessions, or a unique prefix) or a path."""
    path = Path(ref).expanduser()
    if path.suffix == ".jsonl" and path.is_file():
        return path
    matches = [s.path for s in list_sessions(cwd) if s.id.startswith(ref)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise FileNotFoundError(f"no session {ref!r} in {sessions_dir(cwd)}")
    raise FileNotFoundError(f"session id {ref!r} is ambiguous: {len(matches)} sessions start with it")


def age_text(seconds: float) -> str:
    """How long ago, in the largest whole unit: "3d ago", "5m ago", "just now"."""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit} ago"
    return "just now"
