"""The private copy of piped standard input too large for the model: written redacted, readable only by the
user, and removed when the run ends (normally, on an error, on SIGTERM, SIGHUP or Ctrl+C). A copy left by
a run that was killed outright (`kill -9`) is removed by the next run of the same user.

Each copy is named after the process that wrote it, its pid and start time
(`sagent-stdin-<pid>-<start>-<random>.txt`), so that a later run can tell a copy whose run is gone from a
copy of a run still going, even when the pid was reused.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType

PREFIX = "sagent-stdin-"
_NAME = re.compile(r"sagent-stdin-(\d+)-(\d+)-[0-9a-z_]+\.txt")
_LEGACY = re.compile(r"sagent-stdin-[0-9a-z_]+\.txt")  # an earlier version's name, without its pid
LEGACY_AGE = 24 * 3600  # seconds after which an earlier version's copy counts as left behind

_copies: list[Path] = []


def save(text: str) -> Path:
    """Write `text` (redacted) to a new private file in the temporary directory and return its path; it is
    removed when this process ends, whichever way it ends short of SIGKILL."""
    from sagent.redaction import redact

    remove_stale()
    _remove_on_signals()
    started = _start_time(os.getpid())
    fd, name = tempfile.mkstemp(prefix=f"{PREFIX}{os.getpid()}-{started}-", suffix=".txt")  # mode 0600
    path = Path(name)
    _copies.append(path)
    with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as f:
        f.write(redact(text))
    return path


@atexit.register
def remove() -> None:
    """Remove this process's copies (at the end of the run; also at exit, as a safety net)."""
    while _copies:
        with contextlib.suppress(OSError):
            _copies.pop().unlink(missing_ok=True)


def remove_stale(folder: Path | None = None) -> list[Path]:
    """Remove the user's copies whose run is gone (its process ended, or the pid now names a later one),
    and an earlier version's copies older than a day; the paths removed."""
    folder = folder or Path(tempfile.gettempdir())
    removed: list[Path] = []
    try:
        entries = [e for e in os.scandir(folder) if e.name.startswith(PREFIX)]
    except OSError:
        return removed
    for entry in entries:
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not entry.is_file(follow_symlinks=False) or (hasattr(os, "getuid") and st.st_uid != os.getuid()):
            continue  # another user's, or not a file sagent wrote
        named = _NAME.fullmatch(entry.name)
        if named:
            stale = not _alive(int(named[1]), int(named[2]))
        else:
            stale = bool(_LEGACY.fullmatch(entry.name)) and time.time() - st.st_mtime > LEGACY_AGE
        if stale:
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
    return removed


def _start_time(pid: int) -> int:
    """The process's start time in clock ticks after boot (Linux), else 0."""
    from sagent.tools.processes import start_time

    return start_time(pid) or 0


def _alive(pid: int, started: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process has that pid now: not ours to judge, keep the file
    now = _start_time(pid)
    return not started or not now or now == started


def _remove_on_signals() -> None:
    """SIGTERM and SIGHUP, while nothing else handles them, end the process through Python's exit (so the
    copy is removed) instead of killing it outright. The headless run installs its own handlers while the
    agent runs; these cover the start-up before it and the end after it."""
    for name, code in (("SIGTERM", 130), ("SIGHUP", 129)):
        sig = getattr(signal, name, None)
        if sig is None:
            continue
        with contextlib.suppress(ValueError, OSError):  # not the main thread
            if signal.getsignal(sig) is signal.SIG_DFL:
                signal.signal(sig, _exiting(code))


def _exiting(code: int) -> Callable[[int, FrameType | None], None]:
    def handler(signum: int, frame: FrameType | None) -> None:
        with contextlib.suppress(OSError):
            sys.stderr.write("sagent: interrupted; exiting\n")
        raise SystemExit(code)

    return handler
