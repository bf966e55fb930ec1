"""What the Claude Agent SDKs add to a one-shot task on sagent: their `query()` with sagent as the CLI, next
to the same task in a bare `sagent -p` run, on the same fake server with the same prompt.

For each provider, REPEATS rounds, each a bare run and then the SDK queries, back to back:
- bare: spawn `sagent -p PROMPT --provider P --base-url URL --output-format stream-json` and read its
  records as they come, up to the result;
- SDK: `query(prompt=PROMPT, options=ClaudeAgentOptions(cli_path=sagent, extra_args=...))`, in this
  process (the SDK imported once, as an application has it), from the call to its `ResultMessage`;
- TypeScript SDK, when node and .ci/node have it (.ci/run installs it): `query()` with
  `pathToClaudeCodeExecutable` set to sagent, timed the same way inside node (benchmarks/sdk_query.mjs);
- a follow-up: the second `query()` of a `ClaudeSDKClient` conversation, from the call to its result, with
  sagent already running.
All figures are the time to the result; an overhead is the median of the differences to the bare run
taken in the same round, and the time to the first request is printed beside the Python figures (spawn,
start-up and, for the SDK, the `initialize` handshake and the prompt written on stdin), so a difference
shows where it comes from.

Target: the SDK costs at most SDK_OVERHEAD_MS over the bare run. What it adds is small by nature: the
same one process spawn, one `initialize` request and answer over pipes, the prompt read from stdin instead
of argv, and the records parsed on the SDK's side. None of it should reach a tenth of sagent's own start-up;
a figure over the target means sagent waits for something in SDK mode (a timeout, stdin, a slow import)
that a bare run does not. A follow-up has no process to start: against a fake that answers at once, what
is left is sagent's turn and the routing of one message each way, so it should take at most FOLLOW_UP_MS.

    uv run python benchmarks/sdk.py            # all three providers
    uv run python benchmarks/sdk.py anthropic  # one
"""

from __future__ import annotations

import asyncio
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Run as a script, this folder is first on the path, where benchmarks/mcp.py would stand in for the `mcp`
# package the SDK imports: the repository's root goes there instead.
sys.path[:] = [str(ROOT), *(p for p in sys.path if Path(p or ".").resolve() != ROOT / "benchmarks")]

from benchmarks.startup import PROVIDERS, Provider, _env, _sagent  # noqa: E402

SDK_OVERHEAD_MS = 150
FOLLOW_UP_MS = 50
REPEATS = 7
PROMPT = "Say hello."
ANSWER = "Hello."


NODE_MODULES = ROOT / ".ci" / "node" / "node_modules"
TS_SDK = NODE_MODULES / "@anthropic-ai" / "claude-agent-sdk" / "package.json"


@dataclass
class Timing:
    result: float  # seconds from the start (spawn, or the call of query()) to the result
    first_request: float | None  # seconds from the start to the first request's arrival (None: not known)


def _command(p: Provider, url: str) -> list[str]:
    return [*_sagent(), "-p", PROMPT, "--provider", p.name, "--base-url", url, "--output-format", "stream-json"]


def bare_run(p: Provider, cwd: Path) -> Timing:
    """A bare `sagent -p` run: spawn to its result record on stdout."""
    with p.server([p.text(ANSWER)]) as fake:
        start = time.perf_counter()
        process = subprocess.Popen(
            _command(p, fake.url), cwd=cwd, env=_env(p, cwd / "data"), stdout=subprocess.PIPE, text=True
        )
        assert process.stdout is not None
        result_at = None
        for line in process.stdout:
            if line.strip() and json.loads(line).get("type") == "result":
                result_at = time.perf_counter()
        process.wait()
        requests = list(fake.requests)
    if process.returncode != 0 or result_at is None or len(requests) != 1:
        raise SystemExit(f"{p.name}: the bare run failed (exit {process.returncode})")
    return Timing(result_at - start, requests[0]["arrived"] - start)


async def sdk_query(p: Provider, cwd: Path) -> Timing:
    """The same task through the Python SDK's `query()`: the call to its ResultMessage."""
    from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, query

    executable = _sagent()
    if len(executable) != 1:
        raise SystemExit("the sagent console script is not installed: the SDK needs an executable as cli_path")
    with p.server([p.text(ANSWER)]) as fake:
        options = ClaudeAgentOptions(
            cli_path=executable[0],
            cwd=str(cwd),
            env=_env(p, cwd / "data"),
            extra_args={"provider": p.name, "base-url": fake.url},
        )
        result: ResultMessage | None = None
        result_at = 0.0
        start = time.perf_counter()
        async for message in query(prompt=PROMPT, options=options):
            if isinstance(message, ResultMessage):
                result, result_at = message, time.perf_counter()
        requests = list(fake.requests)
    if result is None or result.is_error or result.result != ANSWER or len(requests) != 1:
        raise SystemExit(f"{p.name}: the SDK query failed: {result}")
    return Timing(result_at - start, requests[0]["arrived"] - start)


async def sdk_follow_up(p: Provider, cwd: Path) -> float:
    """Seconds from a second `query()` of a `ClaudeSDKClient` conversation to its ResultMessage: the same
    task with sagent already running, so what is left is the turn itself and the SDK's routing."""
    from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient, ResultMessage

    with p.server([p.text(ANSWER), p.text(ANSWER)]) as fake:
        options = ClaudeAgentOptions(
            cli_path=_sagent()[0],
            cwd=str(cwd),
            env=_env(p, cwd / "data"),
            extra_args={"provider": p.name, "base-url": fake.url},
        )
        async with ClaudeSDKClient(options=options) as client:
            await client.query(PROMPT)
            async for _ in client.receive_response():
                pass
            result: ResultMessage | None = None
            result_at = 0.0
            start = time.perf_counter()
            await client.query(PROMPT)
            async for message in client.receive_response():
                if isinstance(message, ResultMessage):
                    result, result_at = message, time.perf_counter()
        requests = list(fake.requests)
    if result is None or result.is_error or result.result != ANSWER or len(requests) != 2:
        raise SystemExit(f"{p.name}: the follow-up query failed: {result}")
    return result_at - start


def ts_query(p: Provider, cwd: Path) -> Timing:
    """The same task through the TypeScript SDK's `query()`, timed inside node (its start not counted)."""
    node = shutil.which("node")
    assert node is not None
    app = cwd / "app"
    if not app.exists():  # node finds the SDK from the program's folder: a link to .ci/node's packages
        app.mkdir()
        (app / "node_modules").symlink_to(NODE_MODULES, target_is_directory=True)
        shutil.copy(ROOT / "benchmarks" / "sdk_query.mjs", app / "sdk_query.mjs")
    with p.server([p.text(ANSWER)]) as fake:
        env = _env(p, cwd / "data") | {
            "SAGENT": _sagent()[0],
            "PROJECT": str(cwd),
            "PROMPT": PROMPT,
            "SAGENT_ARGS": json.dumps({"provider": p.name, "base-url": fake.url}),
        }
        done = subprocess.run([node, "sdk_query.mjs"], cwd=app, env=env, capture_output=True, text=True)
        requests = list(fake.requests)
    lines = done.stdout.strip().splitlines()
    answer = json.loads(lines[-1]) if done.returncode == 0 and lines else {}
    if answer.get("result") != ANSWER or answer.get("is_error") or len(requests) != 1:
        raise SystemExit(f"{p.name}: the TypeScript SDK query failed (exit {done.returncode}): {done.stderr[-2000:]}")
    return Timing(answer["seconds"], None)


def ts_sdk_missing() -> str | None:
    """Why the TypeScript SDK's figure cannot be taken here, or None."""
    if shutil.which("node") is None:
        return "node is not installed"
    if not TS_SDK.exists():
        return "@anthropic-ai/claude-agent-sdk is not installed in .ci/node (.ci/run installs it)"
    if len(_sagent()) != 1:
        return "the sagent console script is not installed"
    return None


def report(name: str, value: float, target: float, note: str = "") -> bool:
    ok = value <= target
    print(f"{name:<52} {value:>9.2f} ms  target <= {target:g} ms {'ok' if ok else 'MISSED'}{note}")
    return ok


def _ms(timings: list[Timing], field: str) -> float:
    return statistics.median(getattr(t, field) for t in timings) * 1000


def _overhead(name: str, sdk: list[Timing], bare: list[Timing]) -> bool:
    """Report the median of the differences to the bare runs of the same rounds."""
    over = [(s.result - b.result) * 1000 for s, b in zip(sdk, bare, strict=True)]
    spread = sorted(round(d) for d in over)
    return report(name, statistics.median(over), SDK_OVERHEAD_MS, f"  (pairs {spread[0]} to {spread[-1]} ms)")


def measure(p: Provider, cwd: Path, with_ts: bool) -> list[bool]:
    bare_run(p, cwd)  # warm the file cache and the bytecode, for each
    asyncio.run(sdk_query(p, cwd))
    if with_ts:
        ts_query(p, cwd)
    bare: list[Timing] = []
    sdk: list[Timing] = []
    ts: list[Timing] = []
    follow_ups: list[float] = []
    for _ in range(REPEATS):
        # A bare run and the queries back to back, so each difference is taken in the same state of the
        # machine: their median is steadier than the difference of two medians when its load drifts.
        bare.append(bare_run(p, cwd))
        sdk.append(asyncio.run(sdk_query(p, cwd)))
        if with_ts:
            ts.append(ts_query(p, cwd))
        follow_ups.append(asyncio.run(sdk_follow_up(p, cwd)))
    typescript = f", TypeScript {_ms(ts, 'result'):.0f} ms" if ts else ""
    print(
        f"{p.name}: time to the result: bare sagent -p {_ms(bare, 'result'):.0f} ms, Python SDK query() "
        f"{_ms(sdk, 'result'):.0f} ms{typescript} (first request: {_ms(bare, 'first_request'):.0f} ms, "
        f"{_ms(sdk, 'first_request'):.0f} ms)"
    )
    results = [_overhead(f"{p.name}: Python SDK query() over bare sagent -p", sdk, bare)]
    if ts:
        results.append(_overhead(f"{p.name}: TypeScript SDK query() over bare sagent -p", ts, bare))
    follow_up = statistics.median(follow_ups) * 1000
    results.append(report(f"{p.name}: Python SDK follow-up query() to its result", follow_up, FOLLOW_UP_MS))
    return results


def sdk_figures(names: list[str] | None = None) -> list[bool]:
    """Measure and print the figures for the named providers (all by default); one bool per figure."""
    results: list[bool] = []
    missing = ts_sdk_missing()
    if missing:
        print(f"TypeScript SDK query() overhead: skipped, {missing}")
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        for name in names or list(PROVIDERS):
            results += measure(PROVIDERS[name], cwd, with_ts=missing is None)
    return results


if __name__ == "__main__":
    sys.exit(0 if all(sdk_figures(sys.argv[1:] or None)) else 1)
