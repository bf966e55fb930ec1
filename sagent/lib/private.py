"""Folders only their user can enter: sagent's data (session logs, spilled outputs, checkpoints) is made
0700 all the way down, not only at the leaf (`Path.mkdir(parents=True, mode=…)` gives the folders it
creates above the leaf the umask's mode, 0755 usually)."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

PRIVATE_DIR = 0o700


def private_dir(path: Path, tighten_below: Path | None = None) -> Path:
    """Create `path` and every missing folder above it, each 0700; returns `path`.

    Folders that already exist are left as they are, except those at or below `tighten_below` (sagent's
    own data folder), which are made 0700 when they are the user's and open to others: what an earlier
    version created 0755 is closed on the next run."""
    missing: list[Path] = []
    here = path
    while not here.exists() and here.parent != here:
        missing.append(here)
        here = here.parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=PRIVATE_DIR)
    if tighten_below is not None:
        _tighten(path, tighten_below)
    return path


def _tighten(path: Path, top: Path) -> None:
    """Make `path` and the folders between it and `top` (both included) 0700 where they are ours."""
    if path != top and not path.is_relative_to(top):
        return
    uid = os.getuid() if hasattr(os, "getuid") else None
    here = path
    while True:
        with contextlib.suppress(OSError):
            st = os.lstat(here)
            if stat.S_ISDIR(st.st_mode) and (uid is None or st.st_uid == uid) and stat.S_IMODE(st.st_mode) & 0o077:
                os.chmod(here, stat.S_IMODE(st.st_mode) & ~0o077)
        if here == top or here.parent == here:
            return
        here = here.parent
