"""CPU per tool round as one session grows, and the memory of a long session: rows 1 and 2 of the scaling table.

A real `sagent -p go --provider P --base-url URL` process runs ROUNDS rounds of a Read of a small file against
the provider's fake server (its official SDK, a kept connection), then answers. As each request arrives, the
fake reads the process's CPU time (`/proc/PID/stat`: utime + stime, in clock ticks) and, at the last
request, its peak resident memory (`VmHWM` in `/proc/PID/status`). A round's CPU is the difference between
two requests' readings; the figure at round R is the mean over the WINDOW rounds that end at R (a clock tick
is 10 ms, so a window of 40 rounds reads to a quarter of a millisecond), the median over REPEATS sessions.
The fake's own work (it parses every request) is in another process and is not counted.

    uv run python benchmarks/scaling_rounds.py [anthropic|openai|chat|google] [ROUNDS]
"""

from __future__ import annotations

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
AT = (30, 150, 500)  # the rounds the CPU figure is taken at
WINDOW = 40
REPEATS = 3
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


def one_session(p: Provider, cwd: Path, rounds: int) -> Session:
    """One `sagent -p` session of `rounds` Read rounds, read as described above."""
    cpu: list[float] = []
    peak = [0.0]
    process: list[subprocess.Popen[str]] = []

    def step(n: int) -> Callable[[dict[str, Any]], Any]:
        def answer(request: dict[str, Any]) -> Any:
            pid = process[0].pid
            cpu.append(_cpu_seconds(pid))
            if n == rounds:
                peak[0] = _peak_rss_mib(pid)
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
    return Session(cpu, peak[0], arrived[-1] - arrived[0])


def per_round_ms(session: Session, at: int) -> float:
    """Mean CPU milliseconds of the WINDOW rounds that end at round `at`."""
    first = max(1, at - WINDOW)
    return (session.cpu[at] - session.cpu[first]) * 1000 / (at - first)


@dataclass
class Figures:
    provider: str
    at: dict[int, float]  # round -> median CPU ms per round
    peak_mib: float  # median peak RSS
    wall_s: float


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
    return Figures(
        name,
        at,
        statistics.median(s.peak_mib for s in sessions),
        statistics.median(s.wall for s in sessions),
    )


if __name__ == "__main__":
    name = sys.argv[1] if len(sys.argv) > 1 else "anthropic"
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else ROUNDS
    start = time.perf_counter()
    figures = measure(name, rounds, 1)
    for r, ms in figures.at.items():
        print(f"{name}: CPU per round at round {r}: {ms:.2f} ms")
    print(f"{name}: peak RSS {figures.peak_mib:.1f} MiB, {figures.wall_s:.1f} s of rounds")
