"""Checking a session and, with its tree, every sub-agent session below it: each log's hash chain (as on
opening, `sagent.agent.session_check`), each capsule's content id, and that every handoff between two
sessions of the tree is recorded in both logs with the same content.

A sub-agent's log lives in `<parent log without .jsonl>/agents/<id>.jsonl`, so the tree is found from the
files alone. The first break found is reported with its file, its record number (1-based, as the line of
the file) and what broke.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sagent.agent.session import read_state
from sagent.agent.session_check import SessionCorrupt, check, split_lines
from sagent.evidence.capsules import CAPSULE_KIND, capsule_id
from sagent.lib.words import quantity


@dataclass(frozen=True, slots=True)
class Break:
    """The first thing that does not check out: where (file and 1-based record number) and what."""

    path: Path
    record: int
    reason: str

    def describe(self) -> str:
        return f"{self.path}: record {self.record}: {self.reason}"


@dataclass(slots=True)
class TreeReport:
    """What `verify_tree` checked, and the first break (None when everything checks out)."""

    sessions: list[Path] = field(default_factory=list)
    records: int = 0
    capsules: int = 0
    paired: int = 0
    torn: list[Path] = field(default_factory=list)
    first_break: Break | None = None

    @property
    def ok(self) -> bool:
        return self.first_break is None

    def summary(self) -> str:
        return (
            f"ok: {quantity(len(self.sessions), 'session')}, {quantity(self.records, 'record')}, hash chains ok; "
            f"{quantity(self.capsules, 'capsule record')}, {quantity(self.paired, 'handoff')} sealed in both logs"
        )


def sub_sessions(path: Path) -> list[Path]:
    """The logs of the sub-agents `path`'s session started (directly), oldest first."""
    folder = path.with_suffix("") / "agents"
    return sorted(folder.glob("*.jsonl")) if folder.is_dir() else []


def session_tree(path: Path) -> list[Path]:
    """`path` and every sub-agent session below it, parents before their children."""
    found = [path]
    for child in sub_sessions(path):
        found += session_tree(child)
    return found


@dataclass(frozen=True, slots=True)
class _Seen:
    path: Path
    record: int
    role: str
    session: str
    body: dict[str, Any]


def verify_tree(path: Path, *, tree: bool = True) -> TreeReport:
    """Check the session at `path` (and, with `tree`, every sub-agent session below it). OSError when a
    file cannot be read."""
    report = TreeReport(sessions=session_tree(path) if tree else [path])
    seen: dict[str, list[_Seen]] = {}
    ids: dict[str, Path] = {}
    for log in report.sessions:
        records, problem = _check_log(log, report)
        if problem is not None:
            report.first_break = problem
            return report
        session = str(records[0].get("session_id", log.stem))
        ids[session] = log
        for index, record in enumerate(records):
            if record.get("kind") != CAPSULE_KIND:
                continue
            report.capsules += 1
            problem = _check_capsule(log, index + 1, record, session)
            if problem is not None:
                report.first_break = problem
                return report
            seen.setdefault(record["id"], []).append(_Seen(log, index + 1, record["role"], session, record["capsule"]))
    if tree:
        report.first_break = _check_pairs(seen, ids, report)
    return report


def _check_log(log: Path, report: TreeReport) -> tuple[list[dict[str, Any]], Break | None]:
    lines, torn = split_lines(log.read_bytes())
    if torn:
        report.torn.append(log)
    try:
        records = check(lines, log)
        read_state(records, log)
    except SessionCorrupt as damage:
        return [], Break(log, damage.line, damage.reason)
    report.records += len(records)
    return records, None


def _check_capsule(log: Path, number: int, record: dict[str, Any], session: str) -> Break | None:
    body = record["capsule"]
    if record.get("role") not in ("sent", "received"):
        return Break(log, number, f"a capsule whose role is {record.get('role')!r} (sent or received expected)")
    if capsule_id(body) != record.get("id"):
        return Break(log, number, "the capsule's content does not match its id: it was changed after it was sealed")
    side = "sender" if record["role"] == "sent" else "receiver"
    party = body.get(side)
    own = party.get("session") if isinstance(party, dict) else None
    if own is not None and own != session:
        return Break(log, number, f"a capsule {record['role']} by session {own} is recorded in session {session}")
    return None


def _check_pairs(seen: dict[str, list[_Seen]], ids: dict[str, Path], report: TreeReport) -> Break | None:
    """Every handoff between two sessions of the tree is in both logs: sent in one, received in the other."""
    for capsule, copies in seen.items():
        first = copies[0]
        roles = {c.role for c in copies}
        ends = {side: (first.body.get(side) or {}).get("session") for side in ("sender", "receiver")}
        if not all(session in ids for session in ends.values()):
            continue  # the other end is outside this tree (an agent elsewhere, or the tree's own parent)
        for role, side in (("sent", "sender"), ("received", "receiver")):
            if role not in roles:
                label = (first.body.get(side) or {}).get("label")
                where = ids[str(ends[side])]
                return Break(
                    first.path,
                    first.record,
                    f"capsule {capsule[:12]} ({first.body.get('type')}) is not recorded as {role} in the log of "
                    f"{label} ({where})",
                )
        if len(copies) > 2:
            return Break(copies[2].path, copies[2].record, f"capsule {capsule[:12]} is recorded more than twice")
        report.paired += 1
    return None
