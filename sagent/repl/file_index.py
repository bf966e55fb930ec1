"""The project's files for `@` completion, and the fuzzy match that ranks them.

The list comes from `rg --files` (which honours .gitignore) where ripgrep is installed, else from a walk
that skips the usual generated folders; either way it stops at `MAX_FILES` entries and `LIST_TIMEOUT_S`
seconds, so a mention typed in a home directory never hangs the input box. It is kept for
`FRESH_FOR_S` seconds and then listed again, so new files show up.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import subprocess
import threading
import time
from pathlib import Path

MAX_FILES = 20_000
"""Files listed at most."""
LIST_TIMEOUT_S = 3.0
"""How long listing may take before what was found so far is used."""
FRESH_FOR_S = 10.0
"""How long a listing is reused before the project is listed again."""
SKIPPED_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache"})
"""Folders the fallback walk never enters (ripgrep reads .gitignore instead)."""
_BOUNDARY = "/_-. "


class FileIndex:
    """The files (and the folders that hold them) under `root`, relative to it, listed on demand."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._paths: list[str] = []
        self._entries: list[Entry] = []
        self._listed_at = -FRESH_FOR_S
        self._lock = threading.Lock()

    def paths(self) -> list[str]:
        """Every listed file, then every folder that holds one (folders end with `/`)."""
        with self._lock:
            if time.monotonic() - self._listed_at >= FRESH_FOR_S:
                files = list_files(self.root)
                folders = sorted({str(Path(f).parent) + "/" for f in files} - {"./"})
                self._paths = files + folders
                self._entries = prepare(self._paths)
                self._listed_at = time.monotonic()
            return self._paths

    def search(self, query: str, limit: int = 50) -> list[str]:
        """The paths that match `query` fuzzily, best first."""
        self.paths()
        return rank(query, self._entries, limit)


def list_files(root: Path) -> list[str]:
    """Up to `MAX_FILES` paths of files under `root`, relative to it, sorted."""
    rg = shutil.which("rg")
    found = _ripgrep(rg, root) if rg else None
    return sorted(found if found is not None else _walk(root))


def _ripgrep(rg: str, root: Path) -> list[str] | None:
    try:
        proc = subprocess.Popen(
            [rg, "--files", "--hidden", "--glob", "!.git/", "--no-messages"],
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            errors="replace",
        )
    except OSError:
        return None
    assert proc.stdout is not None
    timer = threading.Timer(LIST_TIMEOUT_S, proc.kill)  # a slow disk: keep what came so far
    timer.start()
    found: list[str] = []
    try:
        for line in proc.stdout:
            found.append(line.rstrip("\n").removeprefix("./"))
            if len(found) >= MAX_FILES:
                break
    finally:
        timer.cancel()
        proc.kill()
        proc.stdout.close()
        proc.wait()
    return found


def _walk(root: Path) -> list[str]:
    deadline = time.monotonic() + LIST_TIMEOUT_S
    found: list[str] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        base = os.path.relpath(folder, root)
        for name in files:
            found.append(name if base == "." else f"{base}/{name}".replace(os.sep, "/"))
        if len(found) >= MAX_FILES or time.monotonic() > deadline:
            break
    return found[:MAX_FILES]


# ------------------------------------------------------------------------------------------- ranking


def fuzzy_score(query: str, path: str) -> float | None:
    """How well `path` matches `query` (its characters in order, case ignored), or None if it does not.

    Higher is better: a match inside the file name beats one spread over folders, a run of consecutive
    characters beats scattered ones, characters at word starts (after `/`, `_`, `-`, `.`) count extra,
    and of two equal matches the shorter path wins."""
    if not query:
        return 0.0 - len(path) / 1000
    q, p = query.lower(), path.lower()
    name_start = p.rstrip("/").rfind("/") + 1
    best: float | None = None
    if "/" not in q:  # the file name alone first: `appy` should find src/app.py before a/p/p/y
        in_name = _subsequence(q, p, name_start)
        if in_name is not None:
            score, first = in_name
            # Only a match that starts a word of the name earns the bonus: `sapp` means s(rc)/app, not te(s)t_app.
            best = score + (20 if _at_boundary(p, first) else 0)
    whole = _subsequence(q, p, 0)
    if whole is not None and (best is None or whole[0] > best):
        best = whole[0]
    if best is None:
        return None
    if q in p[name_start:]:
        best += 20 + (20 if p[name_start:].startswith(q) else 0)
    return best - len(path) / 100


def _at_boundary(p: str, i: int) -> bool:
    return i == 0 or p[i - 1] in _BOUNDARY


def _subsequence(q: str, p: str, start: int) -> tuple[float, int] | None:
    """The score of the leftmost match of `q` in `p` from `start`, and where it begins; None if none."""
    score = 0.0
    at = start
    previous = first = -2
    for char in q:
        found = p.find(char, at)
        if found < 0:
            return None
        if found == previous + 1:
            score += 8
        if _at_boundary(p, found):
            score += 12 if previous < 0 else 6  # the first character counts double at a word start
        if previous >= 0:
            score -= min(found - previous - 1, 10) * 0.5
        else:
            first = found
        score += 1
        previous, at = found, found + 1
    return score, first


FULLY_SCORED = 200
"""Matches scored in full at most; past that, the ones whose file name holds the query come first."""


Entry = tuple[str, str, str]
"""A path prepared for matching: as listed, lower-cased, and its file name lower-cased."""


def prepare(paths: list[str]) -> list[Entry]:
    """The entries `rank` matches against, made once per listing, shortest path first."""
    out = []
    for path in sorted(paths, key=lambda p: (len(p), p)):
        low = path.lower()
        out.append((path, low, low[low.rstrip("/").rfind("/") + 1 :]))
    return out


def fuzzy_rank(query: str, paths: list[str], limit: int = 50) -> list[str]:
    """The `limit` paths that match `query` best, best first (ties: shorter, then alphabetical)."""
    return rank(query, prepare(paths), limit)


def rank(query: str, entries: list[Entry], limit: int = 50) -> list[str]:
    """`fuzzy_rank` over prepared entries. A regular expression finds the matches at C speed, and only the
    `FULLY_SCORED` most promising are scored: those whose file name holds the query's characters, then
    those whose path does, shortest first. So a keystroke stays cheap over `MAX_FILES` paths."""
    # `[^a]*a[^b]*b...`: each class stops at the next character sought, so matching never backtracks.
    pattern = re.compile("".join(f"[^{re.escape(c)}]*{re.escape(c)}" for c in query.lower()))
    chosen = list(itertools.islice((e for e in entries if pattern.match(e[2])), FULLY_SCORED))
    if len(chosen) < FULLY_SCORED:  # then the name matches were all found: add path matches
        more = (e for e in entries if pattern.match(e[1]) and not pattern.match(e[2]))
        chosen += itertools.islice(more, FULLY_SCORED - len(chosen))
    scored = [(score, e[0]) for e in chosen if (score := fuzzy_score(query, e[0])) is not None]
    scored.sort(key=lambda item: (-item[0], len(item[1]), item[1]))
    return [path for _, path in scored[:limit]]
