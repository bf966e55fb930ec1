"""Keep the files sagent writes for one machine (`.sagent/settings.local.json`) out of git, as users expect.

When sagent writes such a file inside a git repository and git would commit it, the file's path goes into
the repository's own exclude list (the file `git rev-parse --git-path info/exclude` names: `.git/info/exclude`,
shared by every worktree). That list is never committed, so the project's `.gitignore` stays the team's.
Git itself answers every question (is this a repository, is the file ignored already by a `.gitignore`,
`core.excludesFile` or the list, where the list is), so worktrees and submodules work as git sees them.
No git, or no repository, and nothing is written.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from sagent.lib.git import run_git

_GIT_TIMEOUT_S = 5


def _git(folder: Path, *args: str) -> subprocess.CompletedProcess[str] | None:
    """Run git in `folder`; None when git is missing or does not answer."""
    try:
        return run_git(folder, *args, timeout=_GIT_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError):
        return None


def unignored(path: Path) -> bool:
    """Whether git would offer `path` for a commit: it is in a repository and nothing ignores it. No git, or
    no repository, is False."""
    done = _git(path.parent, "check-ignore", "-q", "--", path.name)
    return done is not None and done.returncode == 1  # 0: ignored; 128: not a repository (or git failed)


def exclude_from_git(path: Path) -> Path | None:
    """Add `path` (a file sagent just wrote) to its repository's exclude list when git would otherwise
    commit it; the list's path when a line was added, else None (no git, not in a repository, ignored
    already, or the list cannot be written: a file that stays visible to git is warned about at start)."""
    folder = path.parent
    if not unignored(path):
        return None
    tracked = _git(folder, "ls-files", "--", path.name)
    if tracked is None or tracked.stdout.strip():  # committed already: an exclude line would change nothing
        return None
    found = _git(folder, "rev-parse", "--git-path", "info/exclude", "--show-prefix")
    if found is None or found.returncode != 0:
        return None
    lines = found.stdout.splitlines()
    if len(lines) < 2:
        return None
    exclude = folder / lines[0]  # relative to `folder` in the main work tree, absolute in a linked one
    pattern = "/" + _escaped(lines[1] + path.name)
    try:
        text = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
        if pattern in text.splitlines():
            return None
        exclude.parent.mkdir(parents=True, exist_ok=True)
        with exclude.open("a", encoding="utf-8") as out:
            if text and not text.endswith("\n"):
                out.write("\n")
            out.write(f"# written by sagent: this machine's settings, not for commits\n{pattern}\n")
    except (OSError, UnicodeError):
        return None
    return exclude


def _escaped(relative: str) -> str:
    """`relative` as a gitignore pattern that matches only itself: wildcards and trailing spaces lose their
    meaning (the pattern starts with `/`, so a leading `#` or `!` has none)."""
    out = "".join("\\" + ch if ch in "*?[]\\" else ch for ch in relative)
    stripped = out.rstrip(" ")
    return stripped + "\\ " * (len(out) - len(stripped))
