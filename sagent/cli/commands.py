"""Small subcommands that print a table: `sagent models`, `sagent sessions`."""

from __future__ import annotations

import sys
import time
from pathlib import Path


def list_models(argv: list[str]) -> int:
    from sagent.providers.catalog import CATALOG

    if argv:
        sys.stderr.write("sagent models: takes no arguments\n")
        return 2
    print(
        f"{'model':<22} {'provider':<10} {'context':>8} {'output':>7}  {'$/M in':>7} {'$/M out':>7} "
        f"{'cache w':>7} {'cache r':>7}"
    )
    for m in CATALOG:
        print(
            f"{m.id:<22} {m.provider:<10} {m.context_window:>8,} {m.max_output:>7,}  "
            f"{m.input:>7.2f} {m.output:>7.2f} {m.cache_write:>7.2f} {m.cache_read:>7.3f}"
        )
    return 0


def list_session_files(argv: list[str]) -> int:
    from sagent.agent.session import list_sessions

    cwd = Path(argv[0] if argv else ".").resolve()
    sessions = list_sessions(cwd)
    if not sessions:
        print(f"no sessions in {cwd}")
        return 0
    now = time.time()
    for s in sessions:
        age = _age(now - s.modified)
        prompt = " ".join(s.first_prompt.split())[:70]
        print(f"{s.id}  {age:>8}  {prompt}")
    return 0


def _age(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit} ago"
    return "just now"
