"""How long `sagent config` takes with a user and a project settings file, beside `sagent --version`.

    uv run python benchmarks/config.py

Prints each figure next to its target and exits 1 when one is missed: `sagent config` in under 100 ms,
and no more than 20 ms over `sagent --version` (which is Python's start-up and the argument parser), so
reading, checking and merging the files and printing the table stay cheap.

The files hold no `compactAt`, `provider`, `tools` or `allowProviders`: checking those imports what knows
their values (the compaction policy, the provider registry, the tools), as a run does anyway.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = 21


def median_ms(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    subprocess.run(command, check=True, capture_output=True, cwd=cwd, env=env)  # warm the file cache
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, cwd=cwd, env=env)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def report(name: str, value: float, target: float) -> bool:
    ok = value < target
    print(f"{name:<52} {value:>9.2f} ms  target < {target:g} ms  {'ok' if ok else 'MISSED'}")
    return ok


def main() -> int:
    exe = shutil.which("sagent", path=str(Path(sys.executable).parent)) or shutil.which("sagent")
    base = [exe] if exe else [sys.executable, "-m", "sagent.cli.main"]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "xdg" / "sagent").mkdir(parents=True)
        (root / "project" / ".sagent").mkdir(parents=True)
        (root / "xdg" / "sagent" / "settings.json").write_text(
            json.dumps({"effort": "high", "maxAgents": 8, "env": {"SAGENT_BENCH": "1"}})
        )
        (root / "project" / ".sagent" / "settings.json").write_text(
            json.dumps({"model": "claude-sonnet-4-6", "maxBudgetUsd": 5, "permissions": {}})
        )
        # bytecode cached as an installed sagent has it, whatever this shell says
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env = {**env, "XDG_CONFIG_HOME": str(root / "xdg"), "XDG_DATA_HOME": str(root / "data")}
        cwd = root / "project"
        config = median_ms([*base, "config"], cwd, env)
        version = median_ms([*base, "--version"], cwd, env)
    ok = report("sagent config (a user and a project file)", config, 100)
    ok &= report("sagent config over sagent --version", config - version, 20)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
