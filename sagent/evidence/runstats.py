"""What a session did, read from its log: turns, tool calls, files changed, tests run, tokens, cost, time and
the final answer. `sagent compare` puts two of these side by side; `sagent trace` draws their events.

Files changed are counted from the Edit and Write calls that succeeded (an Edit's removed and added lines,
a Write's lines); a test run is a Bash call whose command runs a test runner (pytest, npm test, cargo test,
go test, …), passed when the command exited 0.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sagent.agent.session_check import check, split_lines

TEST_COMMAND = re.compile(
    r"\b(pytest|py\.test|unittest|tox|nox|(npm|pnpm|yarn|bun)\s+(run\s+)?test|npx\s+(jest|vitest)|jest|vitest|"
    r"cargo\s+test|go\s+test|make\s+(test|check)|mvn\s+test|gradle\w*\s+test|rspec|phpunit|ctest)\b"
)
_EXIT = re.compile(r"exit code (-?\d+)\s*$")


@dataclass(slots=True)
class FileChange:
    """Lines added and removed in one file by the run's Edit and Write calls."""

    added: int = 0
    removed: int = 0


@dataclass(frozen=True, slots=True)
class TestRun:
    """One Bash call that ran tests, and how it ended (`exit` None when the call itself failed)."""

    command: str
    exit: int | None

    @property
    def passed(self) -> bool:
        return self.exit == 0


@dataclass(slots=True)
class RunStats:
    """The figures of one session."""

    session: str
    path: Path
    model: str = ""
    user_turns: int = 0
    responses: int = 0
    tool_calls: dict[str, int] = field(default_factory=dict)
    tool_errors: int = 0
    files: dict[str, FileChange] = field(default_factory=dict)
    tests: list[TestRun] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0
    wall_s: float = 0.0
    model_s: float = 0.0
    tool_s: float = 0.0
    final_answer: str = ""
    sub_agents: int = 0
    prompts: list[dict[str, Any]] = field(default_factory=list)
    """The run manifest of each of the agent's own requests (`purpose` turn), in order."""

    @property
    def total_tool_calls(self) -> int:
        return sum(self.tool_calls.values())

    def as_dict(self) -> dict[str, Any]:
        """The figures as plain JSON values."""
        return {
            "session": self.session,
            "path": str(self.path),
            "model": self.model,
            "user_turns": self.user_turns,
            "responses": self.responses,
            "tool_calls": self.total_tool_calls,
            "tool_calls_by_name": dict(sorted(self.tool_calls.items())),
            "tool_errors": self.tool_errors,
            "files_changed": {p: {"added": c.added, "removed": c.removed} for p, c in sorted(self.files.items())},
            "lines_added": sum(c.added for c in self.files.values()),
            "lines_removed": sum(c.removed for c in self.files.values()),
            "tests": [{"command": t.command, "exit": t.exit, "passed": t.passed} for t in self.tests],
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "cost_usd": round(self.cost_usd, 6),
            "wall_s": round(self.wall_s, 3),
            "model_s": round(self.model_s, 3),
            "tool_s": round(self.tool_s, 3),
            "sub_agents": self.sub_agents,
            "prompts": self.prompts,
            "final_answer": self.final_answer,
        }


def read_records(path: Path) -> list[dict[str, Any]]:
    """The checked records of the log at `path` (`SessionCorrupt` when it fails its check)."""
    return check(split_lines(path.read_bytes())[0], path)


def run_stats(path: Path) -> RunStats:
    """The figures of the session logged at `path`."""
    records = read_records(path)
    header = records[0]
    stats = RunStats(str(header.get("session_id", path.stem)), path, model=str(header.get("model", "")))
    calls: dict[str, dict[str, Any]] = {}
    for record in records[1:]:
        event = record.get("event") or {}
        kind = event.get("type")
        if kind == "message_added" and (event.get("message") or {}).get("role") == "user":
            stats.user_turns += 1
        elif kind == "turn_finished":
            _count_response(stats, event)
        elif kind == "tool_started":
            call = event["call"]
            calls[call.get("id", "")] = call
            stats.tool_calls[call.get("name", "?")] = stats.tool_calls.get(call.get("name", "?"), 0) + 1
        elif kind == "tool_finished":
            stats.tool_s += float(event.get("duration_ms", 0)) / 1000
            result = event["result"]
            if result.get("is_error"):
                stats.tool_errors += 1
            call = calls.get(result.get("call_id", ""))
            if call is not None:
                _count_effects(stats, call, result)
        elif kind == "session_started" or kind == "model_switched":
            stats.model = f"{event.get('provider')}/{event.get('model')}"
        elif record.get("kind") == "manifest" and (record.get("manifest") or {}).get("purpose") == "turn":
            stats.prompts.append(dict(record["manifest"]))
        elif record.get("kind") == "capsule" and record.get("role") == "sent":
            stats.sub_agents += (record.get("capsule") or {}).get("type") == "spawn"
    stats.wall_s = _seconds(records[0].get("ts"), records[-1].get("ts"))
    return stats


def _count_response(stats: RunStats, event: dict[str, Any]) -> None:
    stats.responses += 1
    usage, cost = event.get("usage") or {}, event.get("cost") or {}
    stats.input_tokens += int(usage.get("input_tokens", 0))
    stats.output_tokens += int(usage.get("output_tokens", 0))
    stats.cache_read_tokens += int(usage.get("cache_read_tokens", 0))
    stats.cache_write_tokens += int(usage.get("cache_write_tokens", 0))
    stats.cost_usd += sum(float(cost.get(k, 0) or 0) for k in ("input", "output", "cache_read", "cache_write"))
    stats.model_s += float(event.get("duration_ms", 0)) / 1000
    parts = (event.get("message") or {}).get("content") or []
    text = "".join(p.get("text", "") for p in parts if isinstance(p, dict) and p.get("type") == "text")
    if text.strip():
        stats.final_answer = text


def _count_effects(stats: RunStats, call: dict[str, Any], result: dict[str, Any]) -> None:
    name, args = call.get("name"), call.get("arguments") or {}
    text = "".join(p.get("text", "") for p in result.get("content") or [] if isinstance(p, dict))
    if name == "Bash" and isinstance(args.get("command"), str) and TEST_COMMAND.search(args["command"]):
        found = _EXIT.search(text)
        exit_code = int(found.group(1)) if found else (None if result.get("is_error") else 0)
        stats.tests.append(TestRun(args["command"], exit_code))
    if result.get("is_error") or name not in ("Edit", "Write") or not isinstance(args.get("path"), str):
        return
    change = stats.files.setdefault(args["path"], FileChange())
    if name == "Write":
        change.added += _lines(args.get("content"))
    else:
        change.removed += _lines(args.get("old_string"))
        change.added += _lines(args.get("new_string"))


def _lines(text: Any) -> int:
    return len(text.splitlines()) if isinstance(text, str) else 0


def _seconds(start: Any, end: Any) -> float:
    try:
        return (datetime.fromisoformat(str(end)) - datetime.fromisoformat(str(start))).total_seconds()
    except ValueError:
        return 0.0


def answers_agree(a: str, b: str) -> tuple[bool, float]:
    """Whether two final answers say the same (equal once case and spacing are set aside), and how alike
    they are (0 to 1)."""
    import difflib

    left, right = " ".join(a.lower().split()), " ".join(b.lower().split())
    return left == right, round(difflib.SequenceMatcher(None, left, right).ratio(), 3)
