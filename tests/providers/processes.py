"""Whether a process group has ended, for the tests that kill a CLI mid-turn."""

from __future__ import annotations

import time
from pathlib import Path


def running_in_group(pgid: int) -> list[int]:
    """The processes of group `pgid` that still run. A zombie (ended, not yet reaped by whoever adopted
    it) runs nothing and is not counted."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # it ended while we looked
        state, group = fields[0], int(fields[2])
        if group == pgid and state != "Z":
            found.append(int(stat.parent.name))
    return found


def group_ends(pgid: int, within: float = 10.0) -> bool:
    """True once no process of group `pgid` runs, waiting up to `within` seconds."""
    deadline = time.monotonic() + within
    while running_in_group(pgid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
