"""`--log-level` and `SAGENT_LOG_LEVEL`: log lines of sagent and the libraries it drives (the provider SDKs,
httpx, MCP) on stderr, for finding out what a run did. Off unless asked: stdout stays the run's output."""

from __future__ import annotations

import os

LEVELS = ("debug", "info", "warning", "error")
VARIABLE = "SAGENT_LOG_LEVEL"


def log_level_problem(flag: str | None) -> str | None:
    """Why the level asked for (the flag, else the variable) cannot be used; None when it can or none is."""
    wanted = flag or os.environ.get(VARIABLE, "").strip().lower()
    if wanted and wanted not in LEVELS:
        return f"{VARIABLE}={wanted}: choose one of {', '.join(LEVELS)}"
    return None


def start_logging(flag: str | None) -> None:
    """Send log records at the level asked for (the flag, else the variable) and above to stderr."""
    wanted = flag or os.environ.get(VARIABLE, "").strip().lower()
    if not wanted:
        return
    import logging

    logging.basicConfig(
        level=wanted.upper(), format="sagent: log: %(asctime)s %(levelname)s %(name)s: %(message)s", force=True
    )
