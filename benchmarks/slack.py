"""The Slack service's own time: from the Socket Mode envelope leaving a fake Slack to the first reply
reaching it (the agent's "working" message), on a zero-latency scripted model, through slack_sdk's
clients; and the memory one more persistent agent holds (tracemalloc, after each answered a message)."""

from __future__ import annotations

import asyncio
import gc
import statistics
import tracemalloc
from pathlib import Path

from tests.fakes.slack_server import BOT_USER, FakeSlack
from tests.slack.harness import answer, echo_model, running

MESSAGES = 30
AGENTS = 20


def first_reply_ms(fake: FakeSlack, ts: str) -> float:
    for (method, params), at in zip(fake.calls, fake.call_times, strict=True):
        if method == "chat.postMessage" and params.get("thread_ts") == ts:
            return (at - fake.sent_at[ts]) * 1000
    raise AssertionError(f"no reply to {ts}")


async def _latency(folder: Path) -> float:
    with FakeSlack() as fake:
        async with running(fake, echo_model(), folder, router_log=None):
            ts = fake.message(f"<@{BOT_USER}> create solo")
            await answer(fake, ts, "sagent", "Created")
            times = []
            for n in range(MESSAGES):
                ts = fake.message(f"message {n}")
                await answer(fake, ts, "solo", f"message {n}")
                times.append(first_reply_ms(fake, ts))
    return statistics.median(times)


async def _memory(folder: Path) -> float:
    with FakeSlack() as fake:
        async with running(fake, echo_model(), folder, router_log=None) as service:
            await service.create("warm", "warm")
            gc.collect()
            tracemalloc.start()
            before, _ = tracemalloc.get_traced_memory()
            for n in range(AGENTS):
                name = f"agent{n}"
                await service.create("helper", name)
                ts = fake.message(f"{name} hello")
                await answer(fake, ts, name, "hello")
            gc.collect()
            after, _ = tracemalloc.get_traced_memory()
            tracemalloc.stop()
    return (after - before) / AGENTS / 1024


def slack_figures(folder: Path) -> tuple[float, float]:
    """(median ms from event to first reply, KiB of memory per persistent agent)."""
    return asyncio.run(_latency(folder / "latency")), asyncio.run(_memory(folder / "memory"))


if __name__ == "__main__":
    import sys
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        ms, kib = slack_figures(Path(tmp))
        print(f"event to first reply {ms:.1f} ms (target < 100); memory per agent {kib:.0f} KiB")
        sys.exit(0)
