"""`sagent sessions verify ID|PATH [--tree]` and `sagent sessions search TEXT`: a session's log checked
whole (and every sub-agent log below it), and this project's past sessions searched."""

from __future__ import annotations

import sys
from pathlib import Path

VERIFY_USAGE = "usage: sagent sessions verify ID|PATH [--tree]\n"


def verify_command(argv: list[str]) -> int:
    """0 when the log (with --tree: every log of the tree, and every handoff between them) checks out; 1 with
    the first break (file, record, what broke); 2 for a usage error or a file that cannot be read."""
    from sagent.agent.session import find_session

    tree = "--tree" in argv
    rest = [a for a in argv if a != "--tree"]
    if len(rest) != 1 or rest[0].startswith("-"):
        sys.stderr.write(VERIFY_USAGE)
        return 2
    try:
        path = find_session(rest[0], Path.cwd())
        if not tree:
            return _verify_one(path)
        from sagent.evidence.verify import verify_tree

        report = verify_tree(path)
    except OSError as error:  # not found, ambiguous, unreadable
        problem = f"{rest[0]}: {error.strerror}" if error.strerror else str(error)
        sys.stderr.write(f"sagent sessions verify: {problem}\n")
        return 2
    if report.first_break is not None:
        print(f"broken: {report.first_break.describe()}")
        return 1
    print(f"{path}: {report.summary()}")
    for torn in report.torn:
        print(f"  {torn}: a torn last line (a write cut short by a crash) is not counted")
    return 0


def _verify_one(path: Path) -> int:
    from sagent.agent.session import verify

    report = verify(path)
    if report.damage is not None:
        damage = report.damage
        good = f"lines 1-{damage.good} can be trusted" if damage.good else "no line can be trusted"
        print(f"{path}: damaged at line {damage.line}: {damage.reason}")
        print(
            f"  {good}; `sagent --session {path} --fork-damaged` continues from there as a new session"
            if damage.good
            else f"  {good}"
        )
        return 1
    print(f"{path}: ok, {report.records} records, last seq {report.records - 1}, chain ok")
    if report.torn:
        print("  a torn last line (a write cut short by a crash) is not counted; reopening drops it")
    return 0
