"""The Claude Agent SDK's overhead on sagent: the same one-shot question asked through the Python SDK's
`query()` (sagent as its CLI) and through a bare `sagent -p --output-format stream-json` run, each against
the fake Anthropic server, and a follow-up question in a `ClaudeSDKClient` conversation (no process start)
next to it. Wall time from the start of the call to its result, median of RUNS (default 7).

    uv run python benchmarks/sdk_query.py [RUNS]

Target: the SDK adds at most 150 ms to a one-shot query (a process start, the initialize exchange and the
message routing); a follow-up in a conversation answers in well under a bare run's time.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# This folder's mcp.py would stand in for the MCP package the SDK imports: the repository root instead.
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != ROOT / "benchmarks"]

from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient, ResultMessage, query  # noqa: E402

from tests.fakes.anthropic_server import FakeAnthropic, text_response  # noqa: E402

TARGET_MS = 150.0


def wrapper(folder: Path, url: str) -> str:
    script = folder / "sagent-cli"
    script.write_text(
        f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m sagent --provider anthropic --base-url {url} "$@"\n'
    )
    script.chmod(0o755)
    return str(script)


def bare_run(folder: Path, url: str) -> float:
    command = [sys.executable, "-m", "sagent", "--provider", "anthropic", "--base-url", url]
    start = time.perf_counter()
    done = subprocess.run(
        [*command, "-p", "hi", "--output-format", "stream-json"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
    )
    assert '"type": "result"' in done.stdout
    return (time.perf_counter() - start) * 1000


async def sdk_query(folder: Path, cli: str) -> float:
    start = time.perf_counter()
    async for message in query(prompt="hi", options=ClaudeAgentOptions(cli_path=cli, cwd=str(folder))):
        if isinstance(message, ResultMessage):
            assert message.result == "ok"
    return (time.perf_counter() - start) * 1000


async def follow_ups(folder: Path, cli: str, runs: int) -> list[float]:
    times = []
    async with ClaudeSDKClient(options=ClaudeAgentOptions(cli_path=cli, cwd=str(folder))) as client:
        for _ in range(runs + 1):
            start = time.perf_counter()
            await client.query("again")
            async for _message in client.receive_response():
                pass
            times.append((time.perf_counter() - start) * 1000)
    return times[1:]  # the first also waits for the process to start


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    os.environ["ANTHROPIC_API_KEY"] = "sk-ant-benchmark"
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        os.environ["XDG_DATA_HOME"] = str(folder / "data")
        with FakeAnthropic([text_response("ok") for _ in range(3 * runs + 4)]) as fake:
            cli = wrapper(folder, fake.url)
            bare_run(folder, fake.url)  # warm the start-up cache first
            bare, sdk = [], []
            for _ in range(runs):  # alternated, so a busy moment of the machine weighs on both alike
                bare.append(bare_run(folder, fake.url))
                sdk.append(asyncio.run(sdk_query(folder, cli)))
            turns = asyncio.run(follow_ups(folder, cli, runs))
    b, s, t = statistics.median(bare), statistics.median(sdk), statistics.median(turns)
    print(f"bare sagent -p (stream-json)     {b:7.0f} ms")
    print(f"SDK query() on sagent            {s:7.0f} ms   overhead {s - b:+.0f} ms (target at most {TARGET_MS:.0f})")
    print(f"SDK follow-up in a conversation  {t:7.0f} ms")
    return 0 if s - b <= TARGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
