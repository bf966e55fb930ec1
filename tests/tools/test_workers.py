"""The worker threads blocking disk work runs on: an idle one is reused, a busy one is never waited for."""

from __future__ import annotations

import asyncio
import threading

from sagent.tools import workers
from sagent.tools.base import off_loop


async def _until_idle() -> None:
    for _ in range(500):
        if workers.idle():
            return
        await asyncio.sleep(0.01)


async def test_an_idle_worker_takes_the_next_job() -> None:
    first = await off_loop(threading.get_ident)
    await _until_idle()
    before = {t.ident for t in threading.enumerate()}  # the idle workers (earlier tests may have left several)
    second = await off_loop(threading.get_ident)
    assert first in before and second in before and threading.get_ident() not in (first, second)


async def test_a_stuck_job_does_not_hold_up_the_next() -> None:
    release = threading.Event()
    stuck = asyncio.ensure_future(off_loop(release.wait, 30))
    await asyncio.sleep(0.05)
    assert await asyncio.wait_for(off_loop(lambda: "done"), 10) == "done"  # on another thread
    release.set()
    assert await stuck is True


async def test_errors_reach_the_awaiting_task() -> None:
    def fail() -> None:
        raise OSError("the disk is gone")

    try:
        await off_loop(fail)
    except OSError as error:
        assert "the disk is gone" in str(error)
    else:
        raise AssertionError("the error was lost")
