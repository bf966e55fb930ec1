"""How sagent's cost grows as the work grows: one row per figure, each next to its target and the command that
reproduces it; exit 1 when one is missed.

    uv run python benchmarks/scaling.py                 # every row
    uv run python benchmarks/scaling.py rounds files    # some: rounds, files, fleet, sessions
    SCALING_PROVIDERS=anthropic,openai uv run python benchmarks/scaling.py rounds

1. CPU per tool round at rounds 30, 150 and 500 of one `sagent -p` session against each provider's fake
   server (Anthropic, OpenAI Responses, a Chat Completions endpoint, Gemini; a Read of a small file each
   round; `benchmarks/scaling_rounds.py` says how it is read): a round must not grow with the conversation,
   and takes at most 5 ms at round 500. Each request encodes only the messages the round added, but the
   body still grows about sevenfold from round 30 to round 500 (28 to 195 KiB) and all of it is handed to
   the HTTP stack and sent every round: the target is round 500 within 1.25 times round 30 (1.2, and 0.05
   for those bytes), where encoding the whole history again each round measured 2 to 5 times.
2. Peak RSS of the 500-round session: under 150 MiB.
3. Grep and Glob on a 100,000-file repository next to `rg` and `fd` run directly (ratio targets in
   `scaling_work.files_rows`).
4. 50 agents in one fleet on a real nats-server: messages per second, delivery latency (median, p95),
   memory per agent.
5. `sagent sessions search` over 1,000 sessions: the first search (building the index) and a later one.

Figures are medians; the machine is shared, so each row prints its conditions.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scaling_work import Row, benchmark, files_rows, fleet_rows, sessions_rows  # noqa: E402

COMMANDS = {
    "rounds": "uv run python benchmarks/scaling.py rounds",
    "files": "uv run python benchmarks/scaling.py files",
    "fleet": "uv run python benchmarks/scaling.py fleet",
    "sessions": "uv run python benchmarks/scaling.py sessions",
}
GROWTH = 1.25  # round 500's CPU over round 30's (see above)
ROUND_MS = 5.0
PEAK_MIB = 150.0
PROVIDERS = os.environ.get("SCALING_PROVIDERS", "anthropic,openai,chat,google").split(",")


def rounds_rows() -> list[Row]:
    rounds = benchmark("scaling_rounds")
    rows: list[Row] = []
    for provider in PROVIDERS:
        figures = rounds.measure(provider)
        condition = (
            f"median of {rounds.REPEATS} sessions of {rounds.ROUNDS} Read rounds, mean of {rounds.WINDOW} rounds"
        )
        for r, ms in figures.at.items():
            target = ROUND_MS if r == max(figures.at) else None
            size = f"; body {figures.kib.get(r, 0):.0f} KiB"
            rows.append((f"{provider}: CPU per round at round {r}", ms, "ms", target, False, condition + size))
        name = f"{provider}: round {max(figures.at)} over round {min(figures.at)}"
        rows.append((name, figures.growth, "x", GROWTH, False, "the median of each session's own ratio"))
        rows.append((f"{provider}: peak RSS of the session", figures.peak_mib, "MiB", PEAK_MIB, False, ""))
    return rows


ROWS = {"rounds": rounds_rows, "files": files_rows, "fleet": fleet_rows, "sessions": sessions_rows}


def show(row: Row) -> bool:
    name, value, unit, target, at_least, condition = row
    if target is None:
        print(f"{name:<44} {value:>9.2f} {unit:<3} {'':<22} {condition}")
        return True
    ok = value >= target if at_least else value <= target
    bound = ">=" if at_least else "<="
    verdict = "ok" if ok else "MISSED"
    print(f"{name:<44} {value:>9.2f} {unit:<3} target {bound} {target:<8.2f} {verdict:<6} {condition}")
    return ok


def main(names: list[str]) -> int:
    ok = True
    for name in names or list(ROWS):
        print(f"# {COMMANDS[name]}", flush=True)
        for row in ROWS[name]():
            ok &= show(row)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
