"""How long a run takes to get over a stream cut mid-way, beyond the backoff it waits.

For each provider, a real Agent runs through the provider's official SDK against its fake server twice:
once with a clean stream, once with the first stream cut half-way (a chunked body closed early, as a
dropped connection looks). The figure is the difference, less the backoff the retry slept: what noticing
the cut, discarding the partial response and sending the request again costs.

    uv run python benchmarks/faults.py
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sagent.agent.agent import Agent  # noqa: E402
from sagent.events import Result, Retrying  # noqa: E402
from sagent.providers.base import RetryPolicy  # noqa: E402
from tests.fakes.sse_server import Faulty  # noqa: E402
from tests.providers.dialects import DIALECTS, Dialect  # noqa: E402
from tests.providers.test_faults import wire_events  # noqa: E402

TARGET_S = 2.0
REPEATS = 5
TEXT = "A sentence long enough to stream in many pieces, so that a cut lands in the middle of it. " * 4
POLICY = RetryPolicy(max_retries=2, base_delay=0.5)


async def one_run(d: Dialect, cut: bool, cwd: Path) -> tuple[float, float]:
    """(seconds for the run, seconds of backoff slept in it)."""
    with d.server([]) as fake:
        reply = d.text(TEXT)
        if cut:
            fake.add(Faulty(reply, cut_after=len(wire_events(fake, d, reply)) // 2, chunked=True))
        fake.add(reply)
        agent = Agent(d.model(fake.url), cwd=cwd, retry=POLICY)
        start = time.perf_counter()
        events = [e async for e in agent.run("go")]
        elapsed = time.perf_counter() - start
        await agent.aclose()
    result = events[-1]
    if not (isinstance(result, Result) and result.subtype == "success" and result.text == TEXT):
        raise SystemExit(f"{d.name}: the run did not recover: {result}")
    backoff = sum(e.delay for e in events if isinstance(e, Retrying))
    if cut and backoff == 0:
        raise SystemExit(f"{d.name}: the cut was not retried")
    return elapsed, backoff


async def recovery(d: Dialect, cwd: Path) -> float:
    """Median seconds a cut adds to a run beyond its backoff."""
    await one_run(d, False, cwd)  # warm the SDK's imports
    extra = []
    for _ in range(REPEATS):
        clean, _ = await one_run(d, False, cwd)
        cut, backoff = await one_run(d, True, cwd)
        extra.append(cut - clean - backoff)
    return statistics.median(extra)


def recovery_times() -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        return {d.name: asyncio.run(recovery(d, Path(tmp))) for d in DIALECTS}


def main() -> int:
    from benchmarks.run import report

    ok = [
        report(f"cut-stream recovery beyond backoff, {name}", seconds, "s", TARGET_S)
        for name, seconds in recovery_times().items()
    ]
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
