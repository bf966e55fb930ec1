"""Glob's fast path: `fd` (Debian's `fdfind`) lists the tree, and sagent's own rules judge each entry.

fd is asked only for the common shape of pattern, `**` then one name (`**/*.py`, `src/**/test_*.py`), and
it only lists: every folder it would enter and every name it finds still goes through the checks the
Python walker applies, in the same order (`.gitignore` as sagent reads it, then the permission rules), so
the files, their order and the counts of entries left out or skipped are the same. fd may leave out less
than sagent (it skips nothing sagent keeps): it reads `.gitignore` only where git would, and sagent drops
the rest. Where fd would leave out more, because a folder sagent enters holds a `.ignore` or `.fdignore`
file, a `.git/info/exclude` with rules, or a `.git` file (a worktree or submodule whose excludes live
elsewhere), the search is done by the Python walker instead. fd's global ignore files are not read.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
import shutil
import stat
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sagent.tools.search import _GlobWalk

_ERROR = re.compile(r"\[fd error\]: (.*): [^:]*\(os error \d+\)")
_PATH_MAX = 4096  # bytes: a longer path cannot be opened (ENAMETOOLONG), though fd may list it
_EMPTY = "/nonexistent"  # HOME and XDG_CONFIG_HOME for fd: no global ignore file, no git excludesFile


def fd_command() -> list[str] | None:
    """How to run fd with the options that make it list what sagent would read, or None when no fd
    that can is installed (`fdfind` or `fd` on PATH, 8.5 or newer: it marks folders with a trailing /)."""
    exe = shutil.which("fdfind") or shutil.which("fd")
    return None if exe is None else _options(exe)


@functools.lru_cache(maxsize=4)
def _options(exe: str) -> list[str] | None:
    try:
        version = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=10).stdout
        helptext = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.match(r"fd(?:find)? (\d+)\.(\d+)", version)
    if found is None or (int(found[1]), int(found[2])) < (8, 5):
        return None
    args = [exe, "--print0", "--hidden", "--no-ignore-parent", "--color", "never", "--exclude", "**/.git/*"]
    args += [flag for flag in ("--no-require-git", "--no-global-ignore-file") if flag in helptext]
    return args


def _held_back(folder: str) -> bool:
    """Whether fd would leave out, in `folder`, what sagent's rules keep."""
    if os.path.lexists(os.path.join(folder, ".ignore")) or os.path.lexists(os.path.join(folder, ".fdignore")):
        return True
    git = os.path.join(folder, ".git")
    if not os.path.lexists(git):
        return False
    if not os.path.isdir(git) or os.path.islink(git):
        return True
    try:
        with open(os.path.join(git, "info", "exclude"), errors="replace") as f:
            return any(line.strip() and not line.startswith("#") for line in f)
    except FileNotFoundError:
        return False
    except OSError:
        return True


def fd_select(walk: _GlobWalk, root: Path, name: str) -> bool:
    """Glob `**/name` below `root` into `walk` from fd's listing; False, with `walk` untouched, when fd
    cannot give exactly what the Python walker would (then it must run)."""
    command = fd_command()
    if command is None:
        return False
    env = {**os.environ, "HOME": _EMPTY, "XDG_CONFIG_HOME": _EMPTY}
    try:
        proc = subprocess.run([*command, "--", "", str(root)], capture_output=True, env=env)
    except OSError:
        return False
    unreadable: set[str] = set()
    for line in os.fsdecode(proc.stderr).splitlines():
        error = _ERROR.fullmatch(line.strip())
        if error is None:
            return False  # something fd says that sagent cannot weigh
        unreadable.add(error[1].rstrip("/"))
    if proc.returncode not in (0, 1) and not unreadable:
        return False
    folders: list[str] = []
    entries: list[str] = []
    for item in os.fsdecode(proc.stdout).split("\0"):
        if item.endswith("/"):
            folders.append(item.rstrip("/"))
        elif item:
            entries.append(item)
    hidden_before = walk.screen.hidden
    alive = {str(root)}  # the folders the Python walker would list
    failed = int(str(root) in unreadable)
    for folder in sorted(folders):  # a folder sorts before what it holds
        if os.path.dirname(folder) not in alive or walk.ignore.ignored(Path(folder), True):
            continue
        if walk.screen.hides_path(folder, False):
            continue
        if len(os.fsencode(folder)) >= _PATH_MAX or folder in unreadable:  # fd may list what no path opens
            failed += 1
        else:
            alive.add(folder)
    if any(_held_back(folder) for folder in alive):
        walk.screen.hidden = hidden_before
        return False
    walk.skipped += failed
    plain = not re.search(r"[*?[]", name)
    matches = re.compile(fnmatch.translate(name)).match
    for path in entries + (folders if plain else []):
        base = os.path.basename(path)
        if os.path.dirname(path) in alive and (base == name if plain else matches(base)):
            _judge(walk, path, plain)
    return True


def _judge(walk: _GlobWalk, path: str, plain: bool) -> None:
    """One name that matched, weighed as the Python walker does: `_GlobWalk._plain` for a plain name
    (a name that is not there is no match), `_GlobWalk.select` for a wildcard (the rules first)."""
    try:
        st: os.stat_result | None = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        if plain:
            return
        st = None
    except OSError:
        st = None
    if plain and st is None:
        walk.skipped += 1
        return
    if walk.ignore.ignored(Path(path), st is not None and stat.S_ISDIR(st.st_mode)):
        return
    if st is None:
        walk.skipped += 1
        return
    if (plain or stat.S_ISREG(st.st_mode)) and walk.screen.hides_path(path, False):
        return
    if stat.S_ISREG(st.st_mode):
        walk._hit(st.st_mtime, path)
