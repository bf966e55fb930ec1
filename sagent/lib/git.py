"""Running git for sagent's own bookkeeping (worktrees, the project's exclude file): never interactive, its
output captured as text, bounded in time."""

from __future__ import annotations

import subprocess
from pathlib import Path


def run_git(folder: Path, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """`git ARGS` in `folder`, with no stdin and at most `timeout` seconds; OSError or SubprocessError when
    git is missing or does not answer in time (a failing git command is a result, not an error)."""
    return subprocess.run(
        ["git", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        stdin=subprocess.DEVNULL,
    )
