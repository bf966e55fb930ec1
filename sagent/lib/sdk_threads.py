"""The daemon threads that run a provider SDK's code (its import, its TLS context, its client), and waiting
for them before the interpreter's teardown.

The teardown stops every daemon thread still running when it next takes the interpreter lock; one stopped
inside an SDK's native code (a pydantic-core call back into Python) aborts the whole process (SIGABRT,
"FATAL: exception not rethrown") instead of exiting with its status. So a process about to tear itself
down waits, at most `SETTLE_SECONDS`, for these threads: `settle` (an `atexit` handler here does it for a
library user's script that ends while a client is still being built). The `sagent` command leaves with
`os._exit` instead (`sagent.cli.exit`), which ends every thread at once and safely: it calls `leaving_now`
first, so nothing waits for an import it is about to abandon.
"""

from __future__ import annotations

import atexit
import threading
import time
from collections.abc import Callable

SETTLE_SECONDS = 30.0  # at most this long; a thread that takes longer is left to the teardown

stopping = threading.Event()  # set by `settle`: a thread that loops (the deferred imports) ends its loop
_threads: list[threading.Thread] = []
_lock = threading.Lock()
_leaving_now = False


def start(target: Callable[[], object], name: str) -> threading.Thread:
    """Run `target` in a daemon thread named `name` that `settle` waits for."""
    thread = threading.Thread(target=target, name=name, daemon=True)
    with _lock:
        _threads[:] = [t for t in _threads if t.is_alive()] + [thread]
    thread.start()
    return thread


def settle(timeout: float = SETTLE_SECONDS) -> None:
    """Wait until none of these threads runs (a looping one is asked to stop after its current step), for at
    most `timeout` seconds in all."""
    stopping.set()
    end = time.monotonic() + timeout
    with _lock:
        threads = list(_threads)
    for thread in threads:
        thread.join(max(end - time.monotonic(), 0))


def leaving_now() -> None:
    """The process ends with `os._exit` next, which no thread survives: the `atexit` handler waits for none."""
    global _leaving_now
    _leaving_now = True


@atexit.register
def _before_teardown() -> None:
    if not _leaving_now:
        settle()
