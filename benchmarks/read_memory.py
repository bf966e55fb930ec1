"""What Read costs in memory on what never fits: `/dev/zero`, a 1 GB sparse file, a 200 MB text file.

    uv run python benchmarks/read_memory.py

Each figure is the peak resident memory of a fresh process that reads the file, above that of the same
process reading a one-line file (the idle cost: Python, sagent's tools, an event loop, a thread). The
child may not grow past 4 GB of address space, so a regression that reads the device whole ends with a
figure over target rather than a swapping machine.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_MIB = 100

CHILD = """
import asyncio, json, resource, sys
from pathlib import Path
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
from sagent.tools import Read
from sagent.tools.base import ToolContext, ToolError
try:
    asyncio.run(Read().run({"path": sys.argv[1]}, ToolContext(cwd=Path.cwd())))
    outcome = "read"
except ToolError as error:
    outcome = str(error)[:80]
except MemoryError:
    outcome = "ran out of memory"
print(json.dumps({"peak_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "outcome": outcome}))
"""


def read_peak(path: str) -> tuple[float, str]:
    """(MiB of peak resident memory, what Read said) for a Read of `path` in a fresh process."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, path], cwd=ROOT, capture_output=True, text=True, timeout=300
        )
    except subprocess.TimeoutExpired:
        return float("inf"), "did not return in 300 s"
    if done.returncode != 0:
        return float("inf"), f"crashed: {done.stderr.strip().splitlines()[-1:]}"
    figures = json.loads(done.stdout)
    return figures["peak_kib"] / 1024, figures["outcome"]


def read_memory_figures() -> list[tuple[str, float, str]]:
    """(what was read, MiB above idle, what Read said) for each hostile file."""
    with tempfile.TemporaryDirectory() as tmp:
        sparse = Path(tmp) / "sparse.img"
        with open(sparse, "wb") as f:
            f.truncate(2**30)
        text = Path(tmp) / "big.log"
        with open(text, "w") as f:
            for block in range(50):
                f.write("".join(f"line {block:02d}{n:06d} {'x' * 28}\n" for n in range(100_000)))
        small = Path(tmp) / "small.txt"
        small.write_text("one line\n")
        idle = min(read_peak(str(small))[0] for _ in range(3))
        hostile = [
            ("/dev/zero", "/dev/zero"),
            ("1 GB sparse file", str(sparse)),
            ("200 MB text file, a page", str(text)),
        ]
        figures = []
        for what, path in hostile:
            peak, outcome = read_peak(path)
            figures.append((what, max(0.0, peak - idle), outcome))
        return figures


def main() -> int:
    sys.path.insert(0, str(ROOT))
    from benchmarks.run import report

    ok = True
    for what, mib, outcome in read_memory_figures():
        ok &= report(f"Read peak RSS above idle: {what}", mib, "MiB", TARGET_MIB)
        print(f"    ({outcome})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
