"""Output whose reader went away: `sagent models | head`, a stream-json consumer that quit.

Python ignores SIGPIPE, so a write to a pipe nobody reads raises BrokenPipeError instead of ending the
process the way it ends `cat` or `yes`. sagent ends as those tools do, quietly: no traceback, and the exit
status a shell reports for a process that SIGPIPE ended, 141 (128 + 13), so a script under
`set -o pipefail` can still tell that the output was cut short.
"""

from __future__ import annotations

import contextlib
import os
import sys

EXIT_CLOSED_PIPE = 141  # 128 + SIGPIPE, what `yes | head -1` reports for `yes`

__all__ = ["EXIT_CLOSED_PIPE", "is_closed_output", "quiet_closed_output"]


def is_closed_output(error: BaseException) -> bool:
    """Whether `error` is a write to stdout or stderr whose reader closed the pipe (and not a pipe to one of
    sagent's own child processes, which is a real fault)."""
    return isinstance(error, BrokenPipeError) and bool(_closed_fds())


def quiet_closed_output() -> int:
    """Point the closed stdout or stderr at /dev/null, so the flush at exit does not fail on it again, and
    return the exit status for a cut output."""
    for fd in _closed_fds():
        with contextlib.suppress(OSError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, fd)
            os.close(devnull)
    return EXIT_CLOSED_PIPE


def _closed_fds() -> list[int]:
    """The standard output descriptors (1, 2) that are pipes whose reading end is closed."""
    found = []
    for stream in (sys.__stdout__, sys.__stderr__):
        try:
            fd = stream.fileno() if stream is not None else -1
        except (OSError, ValueError):
            continue
        if fd >= 0 and _reader_gone(fd):
            found.append(fd)
    return found


def _reader_gone(fd: int) -> bool:
    try:
        import select

        poller = select.poll()
    except (ImportError, AttributeError):  # no poll (Windows): a BrokenPipeError there is taken as stdout's
        return fd == 1
    poller.register(fd, 0)  # no events asked for: only the error and hang-up states, which are always reported
    return any(flags & (select.POLLERR | select.POLLHUP) for _, flags in poller.poll(0))
