"""Recall: full-text search over this project's past sessions.

The index is an SQLite FTS5 database beside the project's session logs (`<sessions dir>/search.sqlite`).
It is never the source of truth: it is brought up to date from the logs before each search, reading only
what was appended to each log since (a log that shrank or was replaced is read again whole), and it can be
deleted at any time and rebuilt (`rebuild=True`, `sagent sessions search --rebuild`). The user's messages,
the agents' answers and the messages between agents are indexed, each with its session and turn (the
number of the user message it followed, from 1). Sub-agent logs are searched too.

An ephemeral search (`--ephemeral`, or a session that keeps no log) builds the index in memory and
writes nothing.
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sagent.agent.session import sessions_dir

INDEX_NAME = "search.sqlite"
SCHEMA_VERSION = 1
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True, slots=True)
class Hit:
    """One place a search matched: the session, the turn, who said it, when, and a snippet."""

    session: str
    turn: int
    role: str
    ts: str
    snippet: str
    path: str

    def line(self) -> str:
        return f"{self.session}  turn {self.turn}  {self.role}: {self.snippet}"


@dataclass(frozen=True, slots=True)
class IndexStats:
    """What an update did: logs looked at, logs (re)read, entries added, bytes read."""

    logs: int = 0
    read: int = 0
    entries: int = 0
    bytes_read: int = 0


def index_path(cwd: Path) -> Path:
    """Where the search index of `cwd`'s sessions lives."""
    return sessions_dir(cwd) / INDEX_NAME


def query_of(text: str) -> str:
    """An FTS5 query matching every word of `text` (each quoted: no operator of the user's is obeyed)."""
    words = _WORD.findall(text)
    return " ".join(f'"{w}"' for w in words)


class RecallIndex:
    """The search index of one project's sessions; `path=None` keeps it in memory (writes nothing)."""

    def __init__(self, sessions: Path, path: Path | None) -> None:
        self.sessions = sessions
        self.path = path
        if path is not None:
            from sagent.lib.private import private_dir

            private_dir(path.parent)
        self.db = sqlite3.connect(str(path) if path is not None else ":memory:")
        self._prepare()

    @classmethod
    def for_project(cls, cwd: Path, *, ephemeral: bool = False) -> RecallIndex:
        folder = sessions_dir(cwd)
        return cls(folder, None if ephemeral else folder / INDEX_NAME)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> RecallIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _prepare(self) -> None:
        db = self.db
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version != SCHEMA_VERSION:
            db.executescript("DROP TABLE IF EXISTS logs; DROP TABLE IF EXISTS entries;")
        db.executescript(
            f"""
            CREATE TABLE IF NOT EXISTS logs (path TEXT PRIMARY KEY, session TEXT, size INTEGER, head TEXT,
                                             turn INTEGER);
            CREATE VIRTUAL TABLE IF NOT EXISTS entries USING fts5(text, session UNINDEXED, turn UNINDEXED,
                                                                  role UNINDEXED, ts UNINDEXED, path UNINDEXED);
            PRAGMA user_version = {SCHEMA_VERSION};
            """
        )
        if self.path is not None:
            with contextlib.suppress(OSError):
                self.path.chmod(0o600)

    def rebuild(self) -> IndexStats:
        """Forget everything indexed and read every log again."""
        self.db.executescript("DELETE FROM logs; DELETE FROM entries;")
        return self.update()

    def update(self) -> IndexStats:
        """Bring the index up to date with the logs: only what was appended since the last update is read."""
        stats = IndexStats()
        known = {row[0]: row[1:] for row in self.db.execute("SELECT path, size, head, turn FROM logs")}
        present = set()
        with self.db:
            for log in _logs(self.sessions):
                key = str(log)
                present.add(key)
                stats = _plus(stats, logs=1)
                try:
                    stats = self._update_one(log, key, known.get(key), stats)
                except OSError:
                    continue  # removed meanwhile or unreadable: searched next time
            for gone in set(known) - present:
                self.db.execute("DELETE FROM entries WHERE path = ?", (gone,))
                self.db.execute("DELETE FROM logs WHERE path = ?", (gone,))
        return stats

    def _update_one(self, log: Path, key: str, known: tuple[Any, ...] | None, stats: IndexStats) -> IndexStats:
        size = log.stat().st_size
        with open(log, "rb") as f:
            head = f.readline(4096)[:200].decode("utf-8", "replace")
            if known is not None and known[1] == head and known[0] == size:
                return stats
            start, turn = (known[0], known[2]) if known is not None and known[1] == head and size > known[0] else (0, 0)
            if start == 0 and known is not None:
                self.db.execute("DELETE FROM entries WHERE path = ?", (key,))
            f.seek(start)
            raw = f.read(size - start)
        end = raw.rfind(b"\n") + 1  # a torn last line waits for the next update
        session = log.stem
        rows = []
        for line in raw[:end].splitlines():
            for role, text, ts, new_turn in _entries(line, turn):
                turn = new_turn
                if text:
                    rows.append((text, session, turn, role, ts, key))
        self.db.executemany("INSERT INTO entries (text, session, turn, role, ts, path) VALUES (?,?,?,?,?,?)", rows)
        self.db.execute(
            "INSERT OR REPLACE INTO logs (path, session, size, head, turn) VALUES (?,?,?,?,?)",
            (key, session, start + end, head, turn),
        )
        return _plus(stats, read=1, entries=len(rows), bytes_read=end)

    def search(self, text: str, *, limit: int = 10, exclude: str | None = None) -> list[Hit]:
        """The best matches for every word of `text`, newest session first among equals."""
        query = query_of(text)
        if not query:
            return []
        rows = self.db.execute(
            "SELECT session, turn, role, ts, snippet(entries, 0, '[', ']', '…', 16), path FROM entries "
            "WHERE entries MATCH ? AND session != ? ORDER BY rank, ts DESC LIMIT ?",
            (query, exclude or "", limit),
        ).fetchall()
        return [
            Hit(str(s), int(t), str(r), str(ts), " ".join(str(snip).split()), str(p)) for s, t, r, ts, snip, p in rows
        ]


def _plus(stats: IndexStats, **more: int) -> IndexStats:
    return IndexStats(*(getattr(stats, name) + more.get(name, 0) for name in ("logs", "read", "entries", "bytes_read")))


def _logs(folder: Path) -> Iterator[Path]:
    if folder.is_dir():
        yield from sorted(folder.rglob("*.jsonl"))


def _entries(line: bytes, turn: int) -> Iterator[tuple[str, str, str, int]]:
    """What one log line adds to the index: (role, text, ts, turn after it)."""
    if b'"message_added"' not in line and b'"turn_finished"' not in line:
        return
    try:
        record = json.loads(line)
        event = record.get("event") or {}
        message = event.get("message") or {}
        ts = str(record.get("ts", ""))
    except (ValueError, AttributeError):
        return
    if not isinstance(message, dict):
        return
    role = message.get("role")
    if event.get("type") == "message_added" and role == "user":
        turn += 1
    elif role == "peer":
        role = f"from {message.get('sender', '?')}"
    elif role != "assistant":
        return
    yield str(role), _text(message), ts, turn


def _text(message: dict[str, Any]) -> str:
    parts = message.get("content")
    if isinstance(parts, str):
        return parts
    if not isinstance(parts, list):
        text = message.get("text")
        return text if isinstance(text, str) else ""
    return "\n".join(p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str))
