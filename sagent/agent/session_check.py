"""Checking a session log before it is trusted: each line whole, the hash chain, `seq`, the header, fields.

A log is a file anyone with the user's rights can edit, and a disk can damage. What the model is sent on
resume is rebuilt from it, so it is read only when every record checks out:

- each line is valid UTF-8 and one JSON object;
- its `hash` (written since this check exists) is the SHA-256 of the line without that field, so an edit
  to any record, the last one included, is found;
- `seq` counts 0, 1, 2, … with no gap or repeat, and `prev` is the SHA-256 of the line before (`null` for
  the first), so a record removed, duplicated or moved is found;
- record 0, and only record 0, is the header, with `session_id` and `cwd`;
- a `capsule` or `manifest` record (`sagent.evidence`) holds its object of that name;
- an event record has an `event` object whose `type` is a string and which holds every field its type
  needs (the fields without a default of the dataclass in `sagent.events`).

A torn last line (no newline: the process died mid-write) is not damage: it is dropped. What the chain
cannot show: a record cut from the end looks like a run that stopped earlier, and whoever can write the
file can recompute every hash. It finds damage and edits, it does not prove who wrote the file.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sagent import events

HASH_FIELD = "hash"
# Records beside the events, and the object each must hold; the history is not rebuilt from them.
EVIDENCE_KINDS = {"capsule": "capsule", "manifest": "manifest"}
_SEAL = re.compile(rb',"hash":"([0-9a-f]{64})"\}$')


class SessionError(Exception):
    """A session log that cannot be used as asked: damaged, held by another process, or unwritable."""

    def __init__(self, path: Path | None, message: str) -> None:
        super().__init__(message)
        self.path = path


class SessionCorrupt(SessionError):
    """The log fails its check. `line` is the first bad line (1-based); the `good` lines before it can be
    trusted (0 when not even the header can)."""

    def __init__(self, path: Path | None, line: int, reason: str, good: int) -> None:
        self.line, self.reason, self.good = line, reason, good
        where = str(path) if path else "session log"
        if good:
            advice = (
                f"to go on from its last good record (line {good}) as a new session, add --fork-damaged "
                "(the file is kept as it is)"
            )
        else:
            advice = "no record of it can be trusted; start a new session"
        super().__init__(path, f"session log {where} is damaged at line {line}: {reason}; {advice}")


class SessionBusy(SessionError):
    """Another process (or another log object in this one) is writing the session."""

    def __init__(self, path: Path, holder: dict[str, Any]) -> None:
        self.holder = holder
        if holder.get("pid") == os.getpid():
            holder = {**holder, "pid": f"{os.getpid()}, this process"}
        who = f"pid {holder.get('pid', '?')}"
        if holder.get("host"):
            who += f" on {holder['host']}"
        if holder.get("since"):
            who += f", since {holder['since']}"
        super().__init__(
            path,
            f"session {path.stem} is in use by another sagent ({who}); one process writes a session at a "
            "time: wait for it to finish, or start a new session",
        )


class SessionWriteError(SessionError):
    """A record could not be written whole (disk full, file too large, I/O error): nothing after it runs."""

    path: Path  # always known here: only a log with a file writes

    def __init__(self, path: Path, cause: OSError) -> None:
        self.cause = cause
        reason = cause.strerror or str(cause)
        super().__init__(
            path,
            f"the session log {path} could not be written ({reason}); the run stopped before acting on the "
            "record. Free some space (or raise the file size limit), then continue the session with -c",
        )


def seal(body: str) -> str:
    """`body` (one JSON object, no newline) with its own SHA-256 as a last field `hash`."""
    digest = hashlib.sha256(body.encode("utf-8")).hexdigest()
    return f'{body[:-1]},"{HASH_FIELD}":"{digest}"}}'


def line_hash(line: bytes) -> str:
    """What the next record's `prev` holds: the SHA-256 of this line's bytes."""
    return hashlib.sha256(line).hexdigest()


def split_lines(raw: bytes) -> tuple[list[bytes], bool]:
    """The whole lines of a log, and whether a torn last line (an interrupted write) was left out."""
    end = raw.rfind(b"\n") + 1
    return raw[:end].split(b"\n")[:-1], end < len(raw)


@dataclass(frozen=True, slots=True)
class Report:
    """What `verify` found: how many records, the last `seq`, and the damage if any."""

    path: Path
    records: int
    torn: bool
    damage: SessionCorrupt | None = None

    @property
    def ok(self) -> bool:
        return self.damage is None


def check(lines: list[bytes], path: Path | None) -> list[dict[str, Any]]:
    """The records of `lines`, each checked; raises `SessionCorrupt` at the first one that fails."""
    records: list[dict[str, Any]] = []
    for index, line in enumerate(lines):
        problem = _problem(index, line, lines[index - 1] if index else None, records)
        if problem is not None:
            reason, good = problem
            raise SessionCorrupt(path, index + 1, reason, good)
    if not lines:
        raise SessionCorrupt(path, 1, "the file is empty: the session header is missing", 0)
    return records


def _problem(index: int, line: bytes, before: bytes | None, records: list[dict[str, Any]]) -> tuple[str, int] | None:
    """Why line `index` cannot be trusted and how many lines before it can; None when it checks out (it is
    then added to `records`)."""
    if not line.strip():
        return "an empty line", index
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as error:
        return f"not valid UTF-8 (byte {error.start + 1})", index
    try:
        record = json.loads(text)
    except json.JSONDecodeError as error:
        return f"not a JSON record ({error.msg} at column {error.colno})", index
    except (ValueError, RecursionError) as error:  # too many digits or too deep: no position to give
        return f"not a JSON record ({str(error)[:80]})", index
    if not isinstance(record, dict):
        return "not a JSON object", index
    sealed = _SEAL.search(line)
    if HASH_FIELD in record:
        if sealed is None or record[HASH_FIELD] != sealed.group(1).decode():
            return "its hash field is not the last one written", index
        if hashlib.sha256(line[: sealed.start()] + b"}").hexdigest() != record[HASH_FIELD]:
            return "its content does not match its hash: the record was changed after it was written", index
    seq = record.get("seq")
    if type(seq) is not int:
        return "no integer seq", index
    if seq != index:
        what = "repeats an earlier record" if seq < index else "a record before it is missing"
        return f"seq is {seq} where {index} was expected ({what})", index
    prev = record.get("prev")
    expected = None if before is None else line_hash(before)
    if prev != expected:
        # Without its own hash, the line before may be the changed one: trust neither.
        trusted = index if before is None or _SEAL.search(before) else index - 1
        return "prev is not the hash of the line before: a record before it was changed, removed or moved", trusted
    if not isinstance(record.get("ts"), str):
        return "no ts string", index
    problem = _schema(index, record)
    if problem is not None:
        return problem, index
    records.append(record)
    return None


def _schema(index: int, record: dict[str, Any]) -> str | None:
    kind = record.get("kind")
    if index == 0:
        if kind != "header":
            return "the first record is not the session header"
        missing = [k for k in ("session_id", "cwd") if not isinstance(record.get(k), str)]
        return f"the header has no {' or '.join(missing)}" if missing else None
    if kind == "header":
        return "a second session header"
    if kind in EVIDENCE_KINDS:  # a sealed handoff or a request's manifest (`sagent.evidence`)
        field = EVIDENCE_KINDS[kind]
        return None if isinstance(record.get(field), dict) else f"a {kind} record without its {field} object"
    if kind != "event":
        return f"unknown record kind {kind!r}"
    event = record.get("event")
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        return "an event record without an event object and its type"
    missing = [name for name in REQUIRED.get(event["type"], ()) if name not in event]
    if missing:
        return f"the {event['type']} event has no {', '.join(missing)}"
    return None


def _required_fields() -> dict[str, tuple[str, ...]]:
    """Per event type, the fields it cannot be rebuilt without (those without a default)."""
    found: dict[str, tuple[str, ...]] = {}
    for cls in typing.get_args(events.Event):
        fields = dataclasses.fields(cls)
        name = next(f.default for f in fields if f.name == "type")
        assert isinstance(name, str)  # every event declares its `type` tag with a default
        found[name] = tuple(
            f.name for f in fields if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        )
    return found


REQUIRED = _required_fields()
