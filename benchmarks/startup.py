"""How fast `sagent -p` reaches its first request, how fast it exits after the last answer, and what a tool
round costs between two requests, on each provider's fake server with its official SDK.

For each provider, a real `sagent -p TASK --provider P --base-url URL` process runs against the fake:
- spawn to first request (target: FIRST_REQUEST_MS, the time Claude Code takes here), the median of REPEATS;
- the same over a bare `python -c "import SDK"` (to its end) measured right before it: the SDK's import was
  the floor, which sagent's own start-up hides behind; the command imports less of the SDK than a bare import
  does (`sagent.lib.deferred_import`), so this is now below zero;
- the last response fully sent to the process's exit (writing the result, closing the session log);
- the gap per tool round, in REPEATS tasks of ROUNDS rounds of a Read of a small file, one after each pair
  above: the time from the end of one response to the arrival of the next request (all of it in), median
  over the rounds.

    uv run python benchmarks/startup.py                        # all three providers
    uv run python benchmarks/startup.py anthropic              # one
    uv run python benchmarks/startup.py --no-bytecode openai   # with PYTHONDONTWRITEBYTECODE=1

Two conditions, named on each row. By default Python keeps the bytecode it compiles (in a folder of this
run's own, as an installed package has its `.pyc` files), even where PYTHONDONTWRITEBYTECODE is set. With
`--no-bytecode`, PYTHONDONTWRITEBYTECODE=1 is set: Python keeps nothing, so the bare import uses only the
bytecode the install compiled (`uv sync --compile-bytecode`; none after a plain `uv sync`) and compiles the
rest on every run, while the sagent command keeps what it compiled in the user's cache (`sagent.lib.bytecode`,
in a folder of this measurement's own), so its runs after the first one (the warm-up) read it.
"""

from __future__ import annotations

import itertools
import os
import shutil
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

from tests.fakes import anthropic_server as anth  # noqa: E402
from tests.fakes import gemini_server as gem  # noqa: E402
from tests.fakes import openai_responses_server as resp  # noqa: E402
from tests.fakes.sse_server import FakeServer  # noqa: E402

FIRST_REQUEST_MS = 600
FIRST_REQUEST_OVER_IMPORT_MS = 100
EXIT_TAIL_MS = 50
GAP_MS = 3
REPEATS = 7
ROUNDS = 10


@dataclass(frozen=True)
class Provider:
    name: str
    sdk: str  # the module a bare import measures
    key_variable: str
    server: Callable[[list[Any]], FakeServer]
    text: Callable[[str], Any]
    read: Callable[[int, str], Any]  # (round, path): a reply that calls Read


def _anthropic_read(n: int, path: str) -> Any:
    block = {"type": "tool_use", "id": f"toolu_read{n:03d}", "name": "Read", "input": {"path": path}}
    return anth.Reply([block], "tool_use")


PROVIDERS = {
    p.name: p
    for p in (
        Provider(
            "anthropic", "anthropic", "ANTHROPIC_API_KEY", anth.FakeAnthropic, anth.text_response, _anthropic_read
        ),
        Provider(
            "openai",
            "openai",
            "OPENAI_API_KEY",
            resp.FakeResponses,
            resp.responses_text,
            lambda n, path: resp.responses_tools([("Read", {"path": path})]),
        ),
        Provider(
            "google",
            "google.genai",
            "GEMINI_API_KEY",
            gem.FakeGemini,
            gem.gemini_text,
            lambda n, path: gem.gemini_tools([("Read", {"path": path})]),
        ),
    )
}


def _sagent() -> list[str]:
    exe = shutil.which("sagent", path=str(Path(sys.executable).parent)) or shutil.which("sagent")
    return [exe] if exe else [sys.executable, "-m", "sagent.cli.main"]


BYTECODE = True  # False with --no-bytecode


def condition() -> str:
    """The condition the figures are measured in, as the rows name it."""
    return "bytecode kept" if BYTECODE else "PYTHONDONTWRITEBYTECODE=1"


def _env(p: Provider, data: Path) -> dict[str, str]:
    """The environment of the measured processes: a fake key, sessions in `data`, and, unless `BYTECODE` is
    off, compiled bytecode kept (in a folder of its own, as an installed package has it) even where
    PYTHONDONTWRITEBYTECODE is set, so both sagent and the bare import are measured as a user runs them, not
    compiling their source."""
    unwanted = ("_API_KEY", "_BASE_URL", "PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")
    env = {k: v for k, v in os.environ.items() if not k.endswith(unwanted)}
    env.update({p.key_variable: "test", "XDG_DATA_HOME": str(data), "XDG_CONFIG_HOME": str(data / "config")})
    if BYTECODE:
        env["PYTHONPYCACHEPREFIX"] = str(data.parent / "bytecode")
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env["XDG_CACHE_HOME"] = str(data.parent / "cache")
    return env


def bare_import(p: Provider, cwd: Path) -> float:
    """Seconds from spawn to the end of `python -c "import SDK"` (left with `os._exit`: the interpreter's
    teardown after it, a third of a second, is no part of the floor)."""
    code = f"import {p.sdk}, os; os._exit(0)"
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, cwd=cwd, env=_env(p, cwd / "data"))
    return time.perf_counter() - start


@dataclass
class Run:
    first_request: float  # seconds from spawn to the first request's arrival
    exit_tail: float  # seconds from the last response sent to the process's exit
    gaps: list[float]  # seconds from each response's end to the next request


def one_run(p: Provider, cwd: Path, rounds: int) -> Run:
    steps = [p.read(n, "small.txt") for n in range(rounds)] + [p.text("done")]
    with p.server(steps) as fake:
        fake.keep_alive = True  # the APIs keep the connection: a round must not pay for a new one
        command = [*_sagent(), "-p", "go", "--provider", p.name, "--base-url", fake.url, "--output-format", "json"]
        start = time.perf_counter()
        done = subprocess.run(command, cwd=cwd, env=_env(p, cwd / "data"), capture_output=True, text=True)
        ended = time.perf_counter()
        requests = list(fake.requests)
    if done.returncode != 0 or len(requests) != rounds + 1 or '"is_error": false' not in done.stdout:
        raise SystemExit(f"{p.name}: the run failed (exit {done.returncode}): {done.stdout}{done.stderr}")
    gaps = [b["arrived"] - a["answered"] for a, b in itertools.pairwise(requests)]
    return Run(requests[0]["arrived"] - start, ended - requests[-1]["answered"], gaps)


def report(name: str, value: float, target: float, note: str = "") -> bool:
    ok = value <= target
    print(f"{name:<62} {value:>9.2f} ms  target <= {target:g} ms {'ok' if ok else 'MISSED'}{note}")
    return ok


def measure(p: Provider, cwd: Path) -> list[bool]:
    one_run(p, cwd, 1)  # warm the file cache and the bytecode
    bare_import(p, cwd)
    over, imports, firsts, tails, gaps = [], [], [], [], []
    for _ in range(REPEATS):
        # A bare import and a run back to back, so each difference is taken in the same state of the
        # machine: their median is steadier than the difference of two medians when its load drifts.
        imports.append(bare_import(p, cwd))
        run = one_run(p, cwd, 1)
        firsts.append(run.first_request)
        over.append(run.first_request - imports[-1])
        tails.append(run.exit_tail)
        # The rounds too are taken across the whole measurement, not in one burst of the machine's load.
        gaps += one_run(p, cwd, ROUNDS).gaps
    sdk = statistics.median(imports) * 1000
    first = statistics.median(firsts) * 1000
    spread = sorted(round(d * 1000) for d in over)
    command = f"uv run python benchmarks/startup.py{'' if BYTECODE else ' --no-bytecode'} {p.name}"
    return [
        report(
            f"{p.name}: spawn to first request ({condition()})",
            first,
            FIRST_REQUEST_MS,
            f"  ({command})",
        ),
        report(
            f"{p.name}: spawn to first request, over bare import",
            statistics.median(over) * 1000,
            FIRST_REQUEST_OVER_IMPORT_MS,
            f"  (medians: {first:.0f} ms, import {p.sdk} {sdk:.0f} ms; pairs {spread[0]} to {spread[-1]} ms)",
        ),
        report(f"{p.name}: last response to exit", statistics.median(tails) * 1000, EXIT_TAIL_MS),
        report(f"{p.name}: gap per tool round (Read)", statistics.median(gaps) * 1000, GAP_MS),
    ]


def startup_figures(names: list[str] | None = None) -> list[bool]:
    """Measure and print the figures for the named providers (all by default); one bool per figure."""
    results: list[bool] = []
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        (cwd / "small.txt").write_text("a small file\n" * 5)
        for name in names or list(PROVIDERS):
            results += measure(PROVIDERS[name], cwd)
    return results


if __name__ == "__main__":
    names = [arg for arg in sys.argv[1:] if arg != "--no-bytecode"]
    BYTECODE = "--no-bytecode" not in sys.argv[1:]
    sys.exit(0 if all(startup_figures(names or None)) else 1)
