"""sagent's speed and memory targets, each measured and printed next to its target.

    uv run python benchmarks/run.py

These are measurements, not tests: the machines are noisy, so nothing here fails the test suite. A
figure over its target prints `MISSED` and the command exits 1, so a regression is hard to overlook.
"""

from __future__ import annotations

import asyncio
import gc
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sagent.agent.agent import Agent  # noqa: E402
from sagent.agent.session import SessionLog  # noqa: E402
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn  # noqa: E402
from sagent.tools.base import tool  # noqa: E402

ROUNDS = 50


def report(name: str, value: float, unit: str, target: float, *, at_least: bool = False) -> bool:
    ok = value >= target if at_least else value < target
    bound = ">=" if at_least else "<"
    print(f"{name:<52} {value:>9.2f} {unit:<3} target {bound} {target:g} {unit:<3} {'ok' if ok else 'MISSED'}")
    return ok


def cold_start(runs: int = 15) -> float:
    """Median wall time of `sagent --version` in a fresh process."""
    exe = shutil.which("sagent", path=str(Path(sys.executable).parent)) or shutil.which("sagent")
    command = [exe, "--version"] if exe else [sys.executable, "-m", "sagent.cli.main", "--version"]
    subprocess.run(command, check=True, capture_output=True)  # warm the file cache
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


@tool
def echo(text: str) -> str:
    """Echo the text.

    Args:
        text: what to echo
    """
    return text


def session_script(rounds: int) -> list:
    steps = [tool_turn(("echo", {"text": f"step {i} " + "x" * 200})) for i in range(rounds)]
    return [*steps, text_turn("done")]


async def one_session(folder: Path, rounds: int) -> float:
    """Seconds for a session of `rounds` tool rounds on a zero-latency model, with a real session log."""
    log = SessionLog.create(folder, {"model": "scripted"})
    agent = Agent(ScriptedModel(session_script(rounds)), tools=[echo], session=log, cwd=folder)
    start = time.perf_counter()
    async for _ in agent.run("go"):
        pass
    elapsed = time.perf_counter() - start
    log.close()
    return elapsed


def loop_overhead(folder: Path, repeats: int = 7) -> tuple[float, float]:
    """(ms per tool round, MiB allocated at peak) for a 50-round session."""
    asyncio.run(one_session(folder, ROUNDS))  # warm imports and caches
    per_round = [asyncio.run(one_session(folder, ROUNDS)) * 1000 / ROUNDS for _ in range(repeats)]
    gc.collect()
    tracemalloc.start()
    asyncio.run(one_session(folder, ROUNDS))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return statistics.median(per_round), peak / 2**20


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["XDG_DATA_HOME"] = tmp  # keep benchmark sessions out of the user's data
        print(f"sagent benchmarks ({sys.platform}, Python {sys.version.split()[0]}, {os.cpu_count()} cores)")
        results = [
            report("cold start: sagent --version", cold_start(), "ms", 150),
        ]
        ms, mib = loop_overhead(Path(tmp))
        results.append(report(f"agent overhead per tool round ({ROUNDS}-round session)", ms, "ms", 5))
        results.append(report(f"extra memory for a {ROUNDS}-round session (peak)", mib, "MiB", 20))
        from benchmarks.fleet import CHILDREN, fleet_costs

        per_child, kib, whole = fleet_costs(Path(tmp))
        results.append(
            report(f"overhead per sub-agent, {CHILDREN} at once ({whole:.0f} ms in all)", per_child, "ms", 2)
        )
        results.append(report(f"memory per sub-agent, {CHILDREN} at once (peak)", kib / 1024, "MiB", 1))
        from benchmarks.slack import AGENTS, slack_figures

        reply_ms, agent_kib = slack_figures(Path(tmp))
        results.append(report("Slack: event to first reply (fake Slack and model)", reply_ms, "ms", 100))
        results.append(report(f"Slack: memory per persistent agent ({AGENTS} agents)", agent_kib / 1024, "MiB", 1))
        from benchmarks.repl import HISTORY, repl_costs

        typing, streaming = repl_costs()
        results.append(report(f"REPL keystroke, {HISTORY:,}-message session", typing, "ms", 16))
        results.append(report(f"REPL redraw per streamed chunk, {HISTORY:,} messages", streaming, "ms", 16))
        from benchmarks.repl import busy_repl_costs

        typing, streaming, spinning = busy_repl_costs()
        results.append(report(f"REPL keystroke, spinner running, {HISTORY:,} messages", typing, "ms", 16))
        results.append(report(f"REPL redraw per streamed chunk, spinner running, {HISTORY:,}", streaming, "ms", 16))
        results.append(report(f"REPL spinner frame redraw, {HISTORY:,} messages", spinning, "ms", 16))
        from benchmarks.repl_lists import picker_keystroke_ms, tool_line_ms

        results.append(report("REPL keystroke searching the /model list", picker_keystroke_ms(), "ms", 16))
        results.append(report("REPL tool line fitted to the width", tool_line_ms(), "ms", 1))
        from benchmarks.mentions import TARGET_MS as MENTION_TARGET_MS
        from benchmarks.mentions import mention_rank_ms

        results.append(
            report("REPL @ completion: rank 20,000 paths per keystroke", mention_rank_ms(), "ms", MENTION_TARGET_MS)
        )
        from benchmarks.read_memory import TARGET_MIB, read_memory_figures

        for what, mib, _ in read_memory_figures():
            results.append(report(f"Read peak RSS above idle: {what}", mib, "MiB", TARGET_MIB))
        from benchmarks.memory import BASH_FLOOD_SECONDS, BASH_FLOOD_TARGET_MIB, bash_flood_peak_rss

        mib, spilled = bash_flood_peak_rss()
        name = f"Bash `yes` for {BASH_FLOOD_SECONDS} s ({spilled:,.0f} MiB to file): peak RSS"
        results.append(report(name, mib, "MiB", BASH_FLOOD_TARGET_MIB))
        from benchmarks.context import TURNS, context_figures

        f = context_figures()
        print(
            f"{TURNS}-turn coding session (fake Anthropic server, cache per Anthropic's rules): "
            f"{f.input_tokens:,} input tokens sent, ${f.cost_usd:.4f} (${f.cost_without_cache_usd:.4f} uncached)"
        )
        share = 100 * f.cached_share_from_turn_3
        results.append(report("input tokens read from cache, turn 3 on", share, "%", 85, at_least=True))
        print(f"{'context before compaction → after':<52} {f.before_compaction:>9,} → {f.after_compaction:,} tokens")
        share = 100 * f.after_compaction_cached_share
        results.append(report("input read from cache, first request after it", share, "%", 50, at_least=True))
        from benchmarks.session_cost import CACHED_SHARE_TARGET, COST_TARGET_USD, session_figures
        from benchmarks.session_cost import ROUNDS as SESSION_ROUNDS

        s = session_figures()
        name = f"{SESSION_ROUNDS}-round sagent -p session, Sonnet prices: cost"
        results.append(report(name, 100 * s.cost_usd, "¢", 100 * COST_TARGET_USD))
        share, target = 100 * s.cached_share_from_request_3, 100 * CACHED_SHARE_TARGET
        results.append(report("  input read from cache, request 3 on", share, "%", target, at_least=True))
        from benchmarks.permissions import TARGET_MS, permission_check_costs

        for name, ms in permission_check_costs().items():
            results.append(report(f"permission check (CPU): {name}", ms * 1000, "µs", TARGET_MS * 1000))
        from benchmarks.bash_lines import LINES, parse_costs

        load, parse_us, check_us = parse_costs()
        print(f"{'Bash rules: loading the Bash grammar (once a run)':<52} {load:>9.2f} ms")
        results.append(report(f"Bash rules: parse a new line ({len(LINES)} typical, CPU)", parse_us, "µs", 100))
        results.append(report("Bash rules: whole check of a new line (CPU)", check_us, "µs", TARGET_MS * 1000))
        from benchmarks.sandbox import sandbox_figures

        for name, value, unit, target, at_least in sandbox_figures():  # cost per Bash call, questions saved
            results.append(report(name, value, unit, target, at_least=at_least))
        from benchmarks.startup import startup_figures

        results += startup_figures()  # spawn to first request, last answer to exit, gap per tool round
        from benchmarks.sdk import sdk_figures

        results += sdk_figures()  # the Claude Agent SDK's query() over a bare sagent -p, same task and fake
        from benchmarks.mcp import mcp_figures

        results += mcp_figures()  # first request with three MCP servers, request bytes with 60 MCP tools
        from benchmarks.evidence import figures as evidence_figures

        results += evidence_figures(report)  # verify speed, search index cost
        from benchmarks.resume import table as resume_table

        resume_table()  # input tokens per turn: replay vs resume vs prompt caching (no target)
        from benchmarks.fleet_nats import fleet_nats_figures

        nats_rows = fleet_nats_figures()
        if nats_rows is None:
            print("fleet across processes: skipped, nats-server is not installed")
        for name, value, unit, target, at_least in nats_rows or ():
            results.append(report(name, value, unit, target, at_least=at_least))
        from benchmarks.cli_providers import cli_provider_figures

        results += cli_provider_figures()  # AnthropicCLI beside the API, per round (skipped without `claude`)
        from benchmarks.cli_gemini import gemini_cli_figures

        results += gemini_cli_figures()  # GoogleCLI beside the Gemini API, per round (skipped without `gemini`)
        from benchmarks.faults import TARGET_S, recovery_times

        for name, seconds in recovery_times().items():
            results.append(report(f"cut-stream recovery beyond backoff, {name}", seconds, "s", TARGET_S))
        from benchmarks.advisor import advisor_figures

        results += advisor_figures()  # executor alone, strong alone, the pair; the local model per tool round
        from benchmarks.selfhosted import selfhosted_figures

        hosted = selfhosted_figures()  # the tiny HuggingFace model on the CPU; None without the extra
        if hosted is None:
            print("SelfHosted: skipped, the selfhosted extra is not installed")
        for name, value, unit, target, at_least in hosted or ():
            results.append(report(name, value, unit, target, at_least=at_least))
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
