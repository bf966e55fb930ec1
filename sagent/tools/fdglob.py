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
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from sagent.tools.search import _GlobWalk

_ERROR = re.compile(r"\[fd error\]: (.*): [^:]*\(os error \d+\)")
_PATH_MAX = 4096  # bytes: a longer path cannot be opened (ENAMETOOLONG), though fd may list it
_EMPTY = "/nonexistent"  # HOME and XDG_CONFIG_HOME for fd: no global ignore file, no git excludesFile


def fd_command() -> list[str] | None:
    """How to run fd with the options that make it list what sagent would read, or None when Glob keeps
    to its Python walker: fd is asked for (`SAGENT_FD=on` finds `fdfind`, then `fd`, on PATH; any other
    value names the binary) and is 8.5 or newer (it marks folders with a trailing /). Unset or `off`: the
    walker, which was faster on the machines measured (`benchmarks/glob.py`: fd's listing plus the checks
    sagent still makes on each entry took 2.3 times the walk on 2 cores)."""
    chosen = os.environ.get("SAGENT_FD", "").strip()
    if chosen.lower() in ("", "off", "0", "false", "no", "none"):
        return None
    asked = chosen.lower() in ("on", "1", "true", "yes", "auto")
    exe = shutil.which("fdfind") or shutil.which("fd") if asked else shutil.which(chosen)
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
    """Glob `**/name` below `root` into the fresh `walk` from two fd listings made side by side: every
    folder, and every entry whose name holds the longest literal part of `name` (a superset of the names
    that match it, so sagent's own match decides). Both are read as files: memory stays bounded by the
    folders, as the Python walker's. False, with `walk` as it was, when fd cannot give exactly what the
    Python walker would (then it must run): a name without a literal part gains nothing from fd."""
    command = fd_command()
    literal = max(re.split(r"\[[^]]*\]|[*?[]", name), key=len)  # outside brackets, as fnmatch reads them
    if command is None or not literal or _held_back(str(root)):
        return False
    hidden = walk.screen.hidden
    listing = _Listing(walk, root, name)
    env = {**os.environ, "HOME": _EMPTY, "XDG_CONFIG_HOME": _EMPTY}
    exact = True
    with tempfile.TemporaryFile() as folders, tempfile.TemporaryFile() as named, tempfile.TemporaryFile() as errors:
        runs: list[tuple[list[str], IO[bytes], IO[bytes] | int]] = [
            ([*command, "--type", "directory", "--", "", str(root)], folders, errors),
            ([*command, "--fixed-strings", "--case-sensitive", "--", literal, str(root)], named, subprocess.DEVNULL),
        ]
        procs: list[subprocess.Popen[bytes]] = []
        try:
            for args, out, err in runs:
                procs.append(subprocess.Popen(args, stdout=out, stderr=err, env=env))
        except OSError:
            exact = False
        for proc in procs:
            proc.wait()
        if exact and all(proc.returncode in (0, 1) for proc in procs[1:]):
            for out, weigh in ((folders, listing.folder), (named, listing.named)):
                out.seek(0)
                if not _each(out, weigh):
                    exact = False
                    break
        else:
            exact = False
        errors.seek(0)
        complaints = os.fsdecode(errors.read()).splitlines()
    unreadable: set[str] = set()
    for line in complaints:
        error = _ERROR.fullmatch(line.strip())
        if error is None:  # something fd says that sagent cannot weigh
            exact = False
            break
        unreadable.add(error[1].rstrip("/"))
    if not exact or (procs[0].returncode not in (0, 1) and not unreadable):
        walk.found, walk.skipped, walk.screen.hidden = 0, 0, hidden
        walk._hits.clear()
        return False
    walk.skipped += listing.failed + len(unreadable & listing.alive)  # folders it could not list
    return True


def _each(stream: IO[bytes], weigh: Callable[[str], bool]) -> bool:
    """`weigh` every entry of the NUL-separated `stream` until one says False (then False)."""
    rest = b""
    for chunk in iter(lambda: stream.read(1 << 16), b""):
        *items, rest = (rest + chunk).split(b"\0")
        for item in items:
            if not weigh(os.fsdecode(item)):
                return False
    return not rest or weigh(os.fsdecode(rest))


class _Listing:
    """fd's listings weighed entry by entry: every folder first (a folder comes before what it holds, as
    fd lists a folder before it reads it; one that does not is a reason to hand the search back), then
    the entries whose name may match."""

    def __init__(self, walk: _GlobWalk, root: Path, name: str) -> None:
        self.walk, self.name = walk, name
        self.alive = {str(root)}  # the folders the Python walker would list
        self.dead: set[str] = set()  # and those it would not enter, or not reach
        self.failed = 0  # folders listed by fd that no path can open
        self.plain = not re.search(r"[*?[]", name)
        self.matches = re.compile(fnmatch.translate(name)).match

    def folder(self, item: str) -> bool:
        """Decide whether the walker would enter the folder `item`; False: hand the search back."""
        walk, path = self.walk, item.rstrip("/")
        parent = os.path.dirname(path)
        if parent not in self.alive:
            if parent not in self.dead:
                return False
            self.dead.add(path)
        elif walk.ignore.ignored(path, True) or walk.screen.hides_path(path, False):
            self.dead.add(path)
        elif len(os.fsencode(path)) >= _PATH_MAX:  # fd may list what no path can open
            self.failed += 1
            self.dead.add(path)
        elif _held_back(path):
            return False
        else:
            self.alive.add(path)
        return True

    def named(self, item: str) -> bool:
        """Weigh an entry whose name may match; False: hand the search back."""
        folder = item.endswith("/")
        path = item.rstrip("/") if folder else item
        parent = os.path.dirname(path)
        if parent not in self.alive:
            return parent in self.dead  # a folder the first listing did not have: the tree changed
        base = os.path.basename(path)
        if (self.plain or not folder) and (base == self.name if self.plain else self.matches(base)):
            _judge(self.walk, path, self.plain)
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
    if walk.ignore.ignored(path, st is not None and stat.S_ISDIR(st.st_mode)):
        return
    if st is None:
        walk.skipped += 1
        return
    if (plain or stat.S_ISREG(st.st_mode)) and walk.screen.hides_path(path, False):
        return
    if stat.S_ISREG(st.st_mode):
        walk._hit(st.st_mtime, path)
