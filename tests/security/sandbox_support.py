"""What the sandbox tests share: a context whose Bash runs in the sandbox, and finding, from outside, the
processes a sandboxed command started (their pids inside are those of the call's own PID namespace, so they
are found by a marker in their command line)."""

from __future__ import annotations

import contextlib
import os
import signal
import time
import uuid
from pathlib import Path

import pytest

from sagent.sandbox.bwrap import unavailable

needs_sandbox = pytest.mark.skipif(unavailable() is not None, reason=f"no sandbox here: {unavailable()}")


def marker() -> str:
    """A sleep duration no other process uses: `sleep <marker>` is findable in /proc."""
    return f"{3000 + uuid.uuid4().int % 100000}.{uuid.uuid4().int % 1000:03d}"


def with_marker(mark: str) -> list[int]:
    """The live processes whose command line holds `mark`."""
    found = []
    needle = mark.encode()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            if needle in Path(f"/proc/{name}/cmdline").read_bytes():
                state = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[0]
                if state not in ("Z", "X"):
                    found.append(int(name))
        except (OSError, IndexError):
            continue
    return found


def none_left(mark: str, within: float = 10.0) -> bool:
    """True once no process carries `mark` (waiting up to `within` seconds for the kernel to finish)."""
    deadline = time.monotonic() + within
    while with_marker(mark) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not with_marker(mark)


def kill_marked(mark: str) -> None:
    for pid in with_marker(mark):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
