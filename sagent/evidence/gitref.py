"""The commit a working directory's repository is at, read from the `.git` files (no `git` process, so a
session's start costs nothing measurable): recorded in a session's header as where the run started."""

from __future__ import annotations

import re
from pathlib import Path

_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


def git_dir(cwd: Path) -> tuple[Path, Path] | None:
    """The repository's root and its git folder (a worktree's `.git` file followed), or None outside one."""
    for folder in (cwd, *cwd.parents):
        dot = folder / ".git"
        if dot.is_dir():
            return folder, dot
        if dot.is_file():
            try:
                text = dot.read_text(encoding="utf-8", errors="replace").strip()
            except OSError:
                return None
            if text.startswith("gitdir:"):
                target = Path(text.split(":", 1)[1].strip())
                return folder, target if target.is_absolute() else (folder / target).resolve()
            return None
    return None


def head_commit(cwd: Path) -> tuple[Path, str] | None:
    """The repository root of `cwd` and the commit its HEAD points at; None outside a repository or before
    the first commit."""
    found = git_dir(cwd.resolve())
    if found is None:
        return None
    root, folder = found
    try:
        head = (folder / "HEAD").read_text(encoding="utf-8", errors="replace").strip()
        if _SHA.match(head):
            return root, head
        if not head.startswith("ref:"):
            return None
        ref = head.split(":", 1)[1].strip()
        common = folder
        if (folder / "commondir").is_file():
            common = (folder / (folder / "commondir").read_text().strip()).resolve()
        for base in (folder, common):
            if (base / ref).is_file():
                sha = (base / ref).read_text(encoding="utf-8", errors="replace").strip()
                return (root, sha) if _SHA.match(sha) else None
        packed = common / "packed-refs"
        if packed.is_file():
            for line in packed.read_text(encoding="utf-8", errors="replace").splitlines():
                sha, _, name = line.partition(" ")
                if name == ref and _SHA.match(sha):
                    return root, sha
    except OSError:
        return None
    return None


def start_point(cwd: Path) -> dict[str, str]:
    """What a session header records of where the run started: the repository and its commit, if any."""
    found = head_commit(cwd)
    return {"git_root": str(found[0]), "git_commit": found[1]} if found else {}
