"""Which session a run opens: the one `--session`, `--continue` or `--resume` names, a fork of it
(`--fork-session`, `--before-compaction`, `--fork-damaged`), or, for `--session PATH` naming a file that is
not there yet, none: the new session is then written at that path."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from sagent.agent.session import SessionLog, find_session, list_sessions
from sagent.cli.agent_setup import UsageError


def session_to_continue(args: argparse.Namespace, cwd: Path) -> Path | None:
    path = _session_named(args, cwd)
    if path is None or not getattr(args, "fork_session", False):
        return path
    try:  # --fork-session: go on in a new session holding the old one's records
        return SessionLog.fork(path, getattr(args, "session_id", None))
    except FileExistsError as error:
        raise UsageError(f"--session-id: {error}") from None


def _session_named(args: argparse.Namespace, cwd: Path) -> Path | None:
    if args.session:
        args.new_session_at = new_session_file(args.session)
        if args.new_session_at is not None:
            return None  # a path to a file not there yet: the new session is written there
        try:
            path = find_session(args.session, cwd)
        except FileNotFoundError as error:
            raise UsageError(str(error)) from None
        return _before_compaction(args, _fork_damaged(args, path))
    if args.continue_:
        sessions = list_sessions(cwd)
        if not sessions:
            raise UsageError(f"no session to continue in {cwd}")
        return _before_compaction(args, _fork_damaged(args, sessions[0].path))
    return None


def new_session_file(ref: str) -> Path | None:
    """`--session PATH` naming a `.jsonl` file that does not exist yet, in a folder that does: where a new
    session is started (its name, without `.jsonl`, is its id); None for anything else (an id, a session
    that exists). A UsageError for a name that cannot be a session's id or a folder that is missing."""
    path = Path(ref).expanduser()
    if path.suffix != ".jsonl" or path.exists():
        return None
    if not path.parent.is_dir():
        raise UsageError(f"--session {ref}: the folder {path.parent} does not exist")
    if not re.fullmatch(r"[A-Za-z0-9_-]+", path.stem):
        raise UsageError(f"--session {ref}: a new session's file name is its id: letters, digits, - and _ only")
    return path.absolute()


def _fork_damaged(args: argparse.Namespace, path: Path | None) -> Path | None:
    """With --fork-damaged, a damaged log is continued as a new session forked from its last good record
    (the damaged file stays as it is); a whole one is continued as it is."""
    if path is None or not args.fork_damaged:
        return path
    forked = SessionLog.fork_damaged(path)
    if forked is None:
        return path
    new, damage = forked
    sys.stderr.write(
        f"sagent: session {path.stem} is damaged at line {damage.line} ({damage.reason}); continuing from its "
        f"last good record (line {damage.good}) as a new session {new.stem}; {path} is kept as it is\n"
    )
    return new


def _before_compaction(args: argparse.Namespace, path: Path | None) -> Path | None:
    """With --before-compaction, a new session forked from `path` as it was before its last compaction."""
    if path is None or not args.before_compaction:
        return path
    try:
        forked = SessionLog.fork_before_compaction(path)
    except ValueError as error:
        raise UsageError(f"--before-compaction: {error}") from None
    sys.stderr.write(f"sagent: continuing session {path.stem} from before its last compaction as {forked.stem}\n")
    return forked


def forked_as_asked(args: argparse.Namespace, path: Path | None) -> Path | None:
    """`path`, or the new session --fork-damaged and --before-compaction fork from it."""
    return _before_compaction(args, _fork_damaged(args, path))
