"""What sagent itself spends of a tool round, apart from the tool: Read rounds and Bash rounds (in the OS
sandbox, as sagent runs them by default), each through a real `sagent -p` against the fake Anthropic server.

    uv run python benchmarks/rounds.py

- The round gap: from the end of one response to the arrival of the next request at the fake (all of it in).
- The tool's time: the call's `duration_ms` in the session log (ToolFinished): for Bash, the sandbox and the
  command (starting it in the live sandbox, bash's run, ending it), counted apart as the issue asks.
- sagent's own share: the gap less the tool's time, round by round: reading the response, the hooks and
  permission checks, the session log, the checkpoints, the manifest, building and sending the next request.

REPEATS runs of ROUNDS rounds for each kind, medians over all rounds. Targets: sagent's own share at most
3 ms for both kinds; the Bash round gap below pi's (12.0 ms in the side-by-side run that opens the issue;
`benchmarks/peers.py` measures pi and the other CLIs in one run here).
"""

from __future__ import annotations

import itertools
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.startup import PROVIDERS, _env, _sagent  # noqa: E402
from tests.fakes import anthropic_server as anth  # noqa: E402

OWN_SHARE_MS = 3.0
PI_BASH_GAP_MS = 12.0
REPEATS = 3
ROUNDS = 20

CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "Read": ("Read", {"path": "small.txt"}),
    "Bash": ("Bash", {"command": "echo round"}),
}


def _reply(kind: str, n: int) -> anth.Reply:
    name, arguments = CALLS[kind]
    return anth.Reply([{"type": "tool_use", "id": f"toolu_{n:04d}", "name": name, "input": arguments}], "tool_use")


def _tool_times(data: Path) -> list[float]:
    """The `duration_ms` of each finished tool call in the run's one session log, in order."""
    (log,) = data.rglob("sessions/**/*.jsonl")
    times = []
    for line in log.read_text().splitlines():
        record = json.loads(line)
        event = record.get("event") if record.get("kind") == "event" else None
        if isinstance(event, dict) and event.get("type") == "tool_finished":
            times.append(float(event["duration_ms"]))
    return times


def one_run(kind: str, folder: Path) -> tuple[list[float], list[float]]:
    """The gaps (ms) of one run of ROUNDS rounds of `kind`, and the tool's time (ms) in each."""
    data = Path(tempfile.mkdtemp(dir=folder))
    steps = [_reply(kind, n) for n in range(ROUNDS)] + [anth.text_response("done")]
    with anth.FakeAnthropic(steps) as fake:
        fake.keep_alive = True  # the API keeps the connection: a round must not pay for a new one
        command = [*_sagent(), "-p", "go", "--provider", "anthropic", "--base-url", fake.url]
        done = subprocess.run(
            [*command, "--output-format", "json"],
            cwd=folder,
            env=_env(PROVIDERS["anthropic"], data),
            capture_output=True,
            text=True,
        )
        requests = list(fake.requests)
    if done.returncode != 0 or len(requests) != ROUNDS + 1:
        raise SystemExit(f"{kind}: the run failed (exit {done.returncode}): {done.stdout}{done.stderr}")
    gaps = [(b["arrived"] - a["answered"]) * 1000 for a, b in itertools.pairwise(requests)]
    tools = _tool_times(data)
    if len(tools) != ROUNDS:
        raise SystemExit(f"{kind}: {len(tools)} tool calls logged, not {ROUNDS}")
    return gaps, tools


def report(name: str, value: float, target: float, note: str = "") -> bool:
    ok = value < target
    print(f"{name:<52} {value:>8.2f} ms  target < {target:g} ms {'ok' if ok else 'MISSED'}{note}")
    return ok


def main() -> int:
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "small.txt").write_text("a small file\n" * 5)
        one_run("Read", folder)  # the file cache and the bytecode warm
        measured: dict[str, tuple[list[float], list[float]]] = {kind: ([], []) for kind in CALLS}
        for _ in range(REPEATS):  # the kinds interleaved, so both see the same machine
            for kind in CALLS:
                gaps, tools = one_run(kind, folder)
                measured[kind][0].extend(gaps)
                measured[kind][1].extend(tools)
    for kind, (gaps, tools) in measured.items():
        own = [gap - tool for gap, tool in zip(gaps, tools, strict=True)]
        note = f"  (gap {statistics.median(gaps):.2f} ms, of it the tool {statistics.median(tools):.2f} ms)"
        results.append(report(f"{kind} round: sagent's own share", statistics.median(own), OWN_SHARE_MS, note))
    bash_gap = statistics.median(measured["Bash"][0])
    results.append(report("Bash round gap, sandbox on (pi's: 12.0 ms)", bash_gap, PI_BASH_GAP_MS))
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
