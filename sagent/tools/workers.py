"""Daemon threads for the tools' blocking disk work, kept a while after a job to take the next one.

Starting a thread for every Read costs a hand-shake with the new thread before the loop can go on (the
larger part of a small Read); a worker that waits for the next job costs one wake-up. A worker that is
busy (a read stuck on a hung mount) is never waited for: a job finding no idle worker gets a new thread,
and every thread is a daemon, so none can keep sagent from exiting.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

IDLE_SECONDS = 30.0  # how long an idle worker waits for a job before it ends

_jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
_lock = threading.Lock()
_idle = 0  # workers waiting on `_jobs`, each owed at most one job


def idle() -> int:
    """How many workers wait for a job now."""
    return _idle


def submit(job: Callable[[], None]) -> None:
    """Run `job` in an idle worker, or in a new daemon thread when every worker is busy. `job` must not
    raise (its errors are its own to hand over)."""
    global _idle
    with _lock:
        if _idle > 0:
            _idle -= 1
            _jobs.put(job)
            return
    threading.Thread(target=_work, args=(job,), name="sagent-io", daemon=True).start()


def _work(job: Callable[[], None]) -> None:
    global _idle
    while True:
        job()
        with _lock:
            _idle += 1
        try:
            job = _jobs.get(timeout=IDLE_SECONDS)
        except queue.Empty:
            with _lock:  # a job handed over just as the wait ended is still this worker's to run
                try:
                    job = _jobs.get_nowait()
                except queue.Empty:
                    _idle -= 1
                    return
