"""One writer per session log: an exclusive `flock` on the log file, taken when the log is created or
reopened for writing and held until it is closed (the kernel lets go when the process dies, however it
dies). The holder says who it is (pid, host, since when) in `<id>.lock` beside the log, for the message a
second writer gets; the flock alone is the lock.

Where `fcntl` does not exist (Windows) sessions are not locked. `flock` on a network file system may not
lock across machines (see docs/sessions.md).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from sagent.agent.session_check import SessionBusy, SessionError

# Windows has no fcntl: sessions are not locked there (see docs/sessions.md).
if sys.platform != "win32":
    import fcntl


def _lock_file(path: Path) -> Path:
    return path.with_suffix(".lock")


def open_locked(path: Path, *, create: bool) -> int:
    """`path` opened for appending and locked for this process; `SessionBusy` when another holds it. The
    descriptor is not inherited by the commands tools run, so none of them can keep the lock."""
    flags = os.O_RDWR | os.O_APPEND | (os.O_CREAT | os.O_EXCL if create else 0)
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as error:  # read-only, not a file, gone
        if create:
            raise  # the data folder's problem, not this session's
        raise SessionError(path, f"session log {path} cannot be opened for writing ({error.strerror})") from None
    if sys.platform != "win32":
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise SessionBusy(path, _holder_when_noted(path)) from None
    holder = {"pid": os.getpid(), "host": socket.gethostname(), "since": datetime.now().astimezone().isoformat()}
    with contextlib.suppress(OSError):  # who holds it is for the message only; the flock is the lock
        temporary = _lock_file(path).with_suffix(f".{os.getpid()}.tmp")
        fd_info = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd_info, "w") as f:
            json.dump(holder, f)
        os.replace(temporary, _lock_file(path))
    return fd


def _holder_when_noted(path: Path, wait: float = 0.5) -> dict[str, Any]:
    """The holder's note; a holder that has just taken the lock writes it a moment later, so an absent note
    is waited for a little (at most `wait` seconds) before the message goes without it."""
    deadline = time.monotonic() + wait
    while not (holder := _holder(path)) and time.monotonic() < deadline:
        time.sleep(0.01)
    return holder


def _holder(path: Path) -> dict[str, Any]:
    try:
        holder = json.loads(_lock_file(path).read_text())
    except (OSError, ValueError):
        return {}
    if isinstance(holder, dict) and isinstance(holder.get("since"), str):
        holder["since"] = holder["since"][:19].replace("T", " ")
    return holder if isinstance(holder, dict) else {}


def release(fd: int, path: Path) -> None:
    # The note goes before the lock, so the note present always names the holder of the lock.
    with contextlib.suppress(OSError):
        _lock_file(path).unlink()
    os.close(fd)


def read_all(fd: int) -> bytes:
    size = os.fstat(fd).st_size
    chunks, offset = [], 0
    while offset < size:
        chunk = os.pread(fd, min(size - offset, 1 << 20), offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)
