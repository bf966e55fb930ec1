"""CPU per tool round as one session grows, and the memory of a long session: rows 1 and 2 of the scaling table.

A real `sagent -p go --provider P --base-url URL` process runs ROUNDS rounds of a Read of a small file against
the provider's fake server (its official SDK, a kept connection), then answers. As each request arrives, the
fake reads the process's CPU time (all its threads, in the scheduler's nanoseconds: see `_cpu_seconds`)
and, at the last request, its peak resident memory (`VmHWM` in `/proc/PID/status`). A round's CPU is the
difference between two requests' readings; the figure at round R is the mean over the WINDOW rounds around
R (the last WINDOW rounds for the last round; from round 10 for round 30, past the first rounds' imports),
the median over REPEATS sessions. The fake's own work (it parses every request) is in another process and
is not counted.

    uv run python benchmarks/scaling_rounds.py [anthropic|openai|chat|google] [ROUNDS]
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from startup import PROVIDERS, Provider, _env, _sagent  # noqa: E402

from tests.fakes import openai_chat_server as chat  # noqa: E402

ROUNDS = 500
# The rounds the CPU figure is taken at (SCALING_AT=30,150,500,1000 with ROUNDS 1000 looks further).
AT = tuple(int(r) for r in os.environ.get("SCALING_AT", "30,150,500").split(","))
WINDOW = 40
REPEATS = 5
_TICK = os.sysconf("SC_CLK_TCK")

CHAT = Provider(  # an OpenAI-compatible endpoint (Chat Completions), as `--provider moonshot` reaches one
    "chat",
    "openai",
    "MOONSHOT_API_KEY",
    chat.FakeChat,
    lambda text: chat.text_chunks(text, {"prompt_tokens": 100, "completion_tokens": 20}),
    lambda n, path: chat.tool_chunks(
        [("Read", json.dumps({"path": path}))], {"prompt_tokens": 100, "completion_tokens": 20}
    ),
)
ALL = {**PROVIDERS, "chat": CHAT}
_FLAGS = {"chat": ["--provider", "moonshot"]}


def _cpu_seconds(pid: int) -> float:
    """The CPU time of all the process's threads: the scheduler's nanoseconds (`/proc/PID/task/*/schedstat`)
    where the kernel keeps them, else utime + stime in clock ticks (`/proc/PID/stat`). A thread that ended
    is no longer counted by the first: the rounds' threads (a worker pool) are kept, so it does not matter."""
    try:
        total = 0
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(FileNotFoundError), open(f"/proc/{pid}/task/{task}/schedstat") as stat:
                total += int(stat.read().split()[0])
        return total / 1e9
    except OSError:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _TICK


def _peak_rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


@dataclass
class Session:
    cpu: list[float]  # the process's CPU seconds as each request arrived
    peak_mib: float  # its peak RSS at the last request
    wall: float  # seconds from the first request to the last
    kib: dict[int, float]  # the request body's size at the rounds of AT, in KiB (as JSON re-encoded here)


def one_session(p: Provider, cwd: Path, rounds: int) -> Session:
    """One `sagent -p` session of `rounds` Read rounds, read as described above."""
    cpu: list[float] = []
    peak = [0.0]
    kib: dict[int, float] = {}
    process: list[subprocess.Popen[str]] = []

    def step(n: int) -> Callable[[dict[str, Any]], Any]:
        def answer(request: dict[str, Any]) -> Any:
            pid = process[0].pid
            cpu.append(_cpu_seconds(pid))
            if n == rounds:
                peak[0] = _peak_rss_mib(pid)
            if n in AT or n == rounds:
                kib[n] = len(json.dumps(request["body"], separators=(",", ":"))) / 1024
            return p.read(n, "small.txt") if n < rounds else p.text("done")

        return answer

    with p.server([step(n) for n in range(rounds + 1)]) as fake:
        fake.keep_alive = True
        flags = _FLAGS.get(p.name, ["--provider", p.name])
        command = [*_sagent(), "-p", "go", *flags, "--base-url", fake.url, "--output-format", "json"]
        env = _env(p, cwd / "data")
        with subprocess.Popen(
            command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        ) as proc:
            process.append(proc)
            out, err = proc.communicate(timeout=900)
        arrived = [r["arrived"] for r in fake.requests]
    if proc.returncode != 0 or len(cpu) != rounds + 1 or '"is_error": false' not in out:
        raise SystemExit(
            f"{p.name}: the run failed (exit {proc.returncode}, {len(cpu)} requests): {out[-500:]}{err[-2000:]}"
        )
    return Session(cpu, peak[0], arrived[-1] - arrived[0], kib)


def per_round_ms(session: Session, at: int) -> float:
    """Mean CPU milliseconds of the WINDOW rounds around round `at` (ending at the last round)."""
    last = min(at + WINDOW // 2, len(session.cpu) - 1)
    first = max(1, last - WINDOW)
    return (session.cpu[last] - session.cpu[first]) * 1000 / (last - first)


@dataclass
class Figures:
    provider: str
    at: dict[int, float]  # round -> median CPU ms per round
    growth: float  # the median over the sessions of the last round's figure over the first's
    peak_mib: float  # median peak RSS
    wall_s: float
    kib: dict[int, float]  # round -> the request body's size


def measure(name: str, rounds: int = ROUNDS, repeats: int = REPEATS) -> Figures:
    p = ALL[name]
    sessions = []
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        (cwd / "small.txt").write_text("a small file\n" * 5)
        one_session(p, cwd, 3)  # the bytecode and the file cache
        for _ in range(repeats):
            sessions.append(one_session(p, cwd, rounds))
    at = {r: statistics.median(per_round_ms(s, r) for s in sessions) for r in AT if r <= rounds}
    first, last = min(at), max(at)
    growth = statistics.median(per_round_ms(s, last) / per_round_ms(s, first) for s in sessions)
    return Figures(
        name,
        at,
        growth,
        statistics.median(s.peak_mib for s in sessions),
        statistics.median(s.wall for s in sessions),
        sessions[0].kib,
    )


if __name__ == "__main__":
    name = sys.argv[1] if len(sys.argv) > 1 else "anthropic"
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else ROUNDS
    start = time.perf_counter()
    figures = measure(name, rounds, 1)
    for r, ms in figures.at.items():
        print(f"{name}: CPU per round at round {r}: {ms:.2f} ms")
    print(f"{name}: round {max(figures.at)} over round {min(figures.at)}: {figures.growth:.2f}x")
    print(f"{name}: peak RSS {figures.peak_mib:.1f} MiB, {figures.wall_s:.1f} s of rounds, bodies {figures.kib} KiB")
