"""Memory under a flood of input: each figure is the peak resident memory of a fresh sagent process doing
one thing, above the same process idle (its imports loaded), so the figure is what the flood costs.

    uv run python benchmarks/memory.py

Peak RSS is the kernel's VmHWM, reset after the idle reading through /proc/self/clear_refs (Linux).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASH_FLOOD_SECONDS = 10
BASH_FLOOD_TARGET_MIB = 100

# ------------------------------------------------------------------------------- Bash: 10 s of `yes`

_BASH_FLOOD = """
import asyncio, sys, tempfile
from pathlib import Path
from sagent.agent.calls import execute
from sagent.tools.base import ToolContext
from sagent.tools.shell import Bash
from sagent.types import ToolCall

def kib(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1])

async def main(seconds):
    with tempfile.TemporaryDirectory() as tmp:
        ctx = ToolContext(cwd=Path(tmp), session_dir=Path(tmp) / "session")
        await execute({"Bash": Bash()}, ToolCall("warm", "Bash", {"command": "seq 1 100000"}), ctx)
        idle = kib("VmRSS")
        Path("/proc/self/clear_refs").write_text("5")  # the peak (VmHWM) starts again from here
        call = ToolCall("flood", "Bash", {"command": f"timeout {seconds} yes", "timeout": seconds + 60})
        result = await execute({"Bash": Bash()}, call, ctx)
        spilled = sum(f.stat().st_size for f in (Path(tmp) / "session" / "outputs").iterdir())
        print(kib("VmHWM") - idle, spilled, len(result.text))

asyncio.run(main(int(sys.argv[1])))
"""


def bash_flood_peak_rss(seconds: int = BASH_FLOOD_SECONDS) -> tuple[float, float]:
    """(MiB of peak RSS above idle, MiB written to the output file) for `yes` run `seconds` in Bash, through
    the agent's tool call path (so a second spill of the result would count too)."""
    out = subprocess.run(
        [sys.executable, "-c", _BASH_FLOOD, str(seconds)], cwd=ROOT, capture_output=True, text=True, check=True
    )
    peak_kib, spilled, _ = (int(x) for x in out.stdout.split())
    return peak_kib / 1024, spilled / 2**20


def main() -> int:
    sys.path.insert(0, str(ROOT))
    from benchmarks.run import report

    mib, spilled = bash_flood_peak_rss()
    name = f"Bash `yes` for {BASH_FLOOD_SECONDS} s ({spilled:,.0f} MiB to file): peak RSS"
    return 0 if report(name, mib, "MiB", BASH_FLOOD_TARGET_MIB) else 1


if __name__ == "__main__":
    sys.exit(main())
