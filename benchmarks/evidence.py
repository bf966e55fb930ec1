"""Sessions as evidence: how long `sagent sessions verify --tree` takes on a 10,000-record session, and what
keeping the search index up to date costs per session (first indexing, an update after a turn, an update
when nothing changed).

    uv run python benchmarks/evidence.py
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sagent.agent.session import SessionLog  # noqa: E402
from sagent.events import MessageAdded, ToolFinished, ToolStarted, TurnFinished  # noqa: E402
from sagent.evidence.recall import RecallIndex  # noqa: E402
from sagent.evidence.verify import verify_tree  # noqa: E402
from sagent.types import AssistantMessage, Cost, TextPart, ToolCall, ToolResult, Usage, UserMessage  # noqa: E402

RECORDS = 10_000
SESSIONS = 20
TURNS_PER_SESSION = 25  # about 100 records each


def write_turn(log: SessionLog, n: int) -> None:
    """One turn of a coding session: the question, a tool call and its result, the answer (5 records)."""
    log.record(MessageAdded(UserMessage.of(f"turn {n}: why does test_parser_{n} fail on the staging build?")))
    call = ToolCall(f"call_{n}", "Read", {"path": f"src/module_{n % 40}.py"})
    log.record(TurnFinished(AssistantMessage((call,), model="m"), Usage(900, 40), Cost(), 0.0, 800.0))
    log.record(ToolStarted(call))
    log.record(ToolFinished(ToolResult.of(call, "def parse(text):\n    return text.split()\n" * 20), 2.0))
    answer = AssistantMessage((TextPart(f"test_parser_{n} fails because the tokenizer drops the last line."),))
    log.record(TurnFinished(answer, Usage(1200, 80), Cost(), 0.0, 900.0))


def session_of(folder: Path, records: int) -> Path:
    log = SessionLog.create(folder, {"provider": "scripted", "model": "m"}, directory=folder)
    for n in range(-(-(records - 1) // 5)):  # whole turns, at least `records` records
        write_turn(log, n)
    log.close()
    assert log.path is not None
    return log.path


def verify_seconds(repeats: int = 3) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as folder:
        path = session_of(Path(folder), RECORDS)
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            report = verify_tree(path)
            times.append(time.perf_counter() - start)
            assert report.ok
        return statistics.median(times), report.records


def index_costs() -> tuple[float, float, float]:
    """Milliseconds per session: the first indexing, an update after one more turn, an update with no change."""
    with tempfile.TemporaryDirectory() as folder:
        sessions = Path(folder) / "sessions"
        for _ in range(SESSIONS):
            session_of(sessions, 1 + 5 * TURNS_PER_SESSION)
        with RecallIndex(sessions, sessions / "search.sqlite") as index:
            start = time.perf_counter()
            index.update()
            first = (time.perf_counter() - start) / SESSIONS
            path = sorted(sessions.glob("*.jsonl"))[0]
            log, _ = SessionLog.open(path)
            write_turn(log, 999)
            log.close()
            start = time.perf_counter()
            stats = index.update()
            after_turn = time.perf_counter() - start
            assert stats.read == 1
            start = time.perf_counter()
            index.update()
            unchanged = (time.perf_counter() - start) / SESSIONS
        return first * 1000, after_turn * 1000, unchanged * 1000


def figures(report) -> list[bool]:  # type: ignore[no-untyped-def]
    import os

    results = []
    if hasattr(os, "getloadavg"):
        print(f"(load average while measuring: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    seconds, records = verify_seconds()
    results.append(report(f"sessions verify --tree, {records:,}-record session", seconds, "s", 1))
    first, after_turn, unchanged = index_costs()
    name = f"search index: first indexing, per session (~{5 * TURNS_PER_SESSION} records)"
    results.append(report(name, first, "ms", 50))
    results.append(report(f"search index: update after a turn ({SESSIONS} sessions)", after_turn, "ms", 50))
    results.append(report("search index: update, nothing changed, per session", unchanged, "ms", 1))
    return results


if __name__ == "__main__":
    from benchmarks.run import report as print_report

    sys.exit(0 if all(figures(print_report)) else 1)
