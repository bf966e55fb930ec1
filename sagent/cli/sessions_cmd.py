"""`sagent sessions verify ID|PATH [--tree]` and `sagent sessions search TEXT`: a session's log checked
whole (and every sub-agent log below it), and this project's past sessions searched."""

from __future__ import annotations

import sys
from pathlib import Path

from sagent.lib.words import quantity

VERIFY_USAGE = "usage: sagent sessions verify ID|PATH|DIR [--tree]\n"
VERIFY_HELP = """
Checks a session log's chain of records (each names the one before it and its own hash): exit 0 when it
is whole, 1 with the first break (file, record, what broke), 2 when it cannot be found or read. --tree
checks every sub-agent log below it too, and the handoffs between them. DIR, a bundle written by
`sagent sessions export`, is checked whole: every file as listed, then every log of its tree.
"""


def verify_command(argv: list[str]) -> int:
    """0 when the log (with --tree: every log of the tree, and every handoff between them) checks out; 1 with
    the first break (file, record, what broke); 2 for a usage error or a file that cannot be read."""
    from sagent.agent.session import find_session
    from sagent.cli.subcommands import asks_help

    if asks_help(argv):
        sys.stdout.write(VERIFY_USAGE + VERIFY_HELP)
        return 0
    tree = "--tree" in argv
    rest = [a for a in argv if a != "--tree"]
    if len(rest) != 1 or rest[0].startswith("-"):
        sys.stderr.write(VERIFY_USAGE)
        return 2
    if Path(rest[0]).is_dir():  # a folder is a bundle (sagent sessions export), never a log
        from sagent.cli.bundle_cmd import verify_bundle_command

        return verify_bundle_command(Path(rest[0]))
    try:
        path = find_session(rest[0], Path.cwd())
        if not tree:
            return _verify_one(path)
        from sagent.evidence.verify import verify_tree

        report = verify_tree(path)
    except BrokenPipeError:
        raise  # the output's reader left: `main` ends quietly (sagent.cli.closed_pipe)
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
    print(f"{path}: ok, {quantity(report.records, 'record')}, last seq {report.records - 1}, chain ok")
    if report.torn:
        print("  a torn last line (a write cut short by a crash) is not counted; reopening drops it")
    return 0


SEARCH_USAGE = "usage: sagent sessions search TEXT [--limit N] [--rebuild] [--json] [--ephemeral]\n"
SEARCH_HELP = """
This project's past sessions holding every word of TEXT, best first: session, turn, who, snippet.
  --limit N     at most N matches (default 10)
  --rebuild     read the index again from every log
  --json        one JSON array of matches
  --ephemeral   build the index in memory, writing nothing
Exit 0 with matches, 1 without, 2 on misuse.
"""


def search_command(argv: list[str]) -> int:
    """`sagent sessions search TEXT`: this project's past sessions holding every word of TEXT, best first
    (session, turn, who, snippet). The index is brought up to date first (`--rebuild`: read again from
    every log; `--ephemeral`: built in memory, nothing written). 0 with matches, 1 without, 2 on misuse."""
    import argparse
    import json
    import sqlite3

    from sagent.cli.subcommands import asks_help
    from sagent.evidence.recall import RecallIndex

    if asks_help(argv):
        sys.stdout.write(SEARCH_USAGE + SEARCH_HELP)
        return 0
    parser = argparse.ArgumentParser(prog="sagent sessions search", add_help=False, exit_on_error=False)
    parser.add_argument("text", nargs="+")
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--ephemeral", action="store_true")
    try:
        args, extra = parser.parse_known_args(argv)
    except (argparse.ArgumentError, SystemExit):
        sys.stderr.write(SEARCH_USAGE)
        return 2
    if extra or args.limit < 1:
        sys.stderr.write(SEARCH_USAGE)
        return 2
    text = " ".join(args.text)
    try:
        with RecallIndex.for_project(Path.cwd(), ephemeral=args.ephemeral) as index:
            stats = index.rebuild() if args.rebuild else index.update()
            hits = index.search(text, limit=args.limit)
    except (OSError, sqlite3.Error) as error:
        sys.stderr.write(f"sagent sessions search: the index cannot be used ({error}); try --rebuild\n")
        return 2
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "session": h.session,
                        "turn": h.turn,
                        "role": h.role,
                        "ts": h.ts,
                        "snippet": h.snippet,
                        "path": h.path,
                    }
                    for h in hits
                ],
                ensure_ascii=False,
            )
        )
    else:
        for hit in hits:
            print(hit.line())
        if not hits:
            print(f"no session of this project mentions {text!r} ({quantity(stats.logs, 'log')} searched)")
    return 0 if hits else 1
