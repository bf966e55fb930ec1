"""A sub-agent's own git worktree (`isolation: worktree` in its agent file): a new branch `sagent/LABEL` checked
out in `.sagent/worktrees/LABEL` of the repository, a folder git is told to ignore (in the repository's own
exclude list, never its `.gitignore`). The sub-agent works there, so sub-agents running side by side never
edit the same files; its work stays on its branch for the user to merge. A worktree left clean with no new
commit is removed when the sub-agent ends; one with changes is kept."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from sagent.lib.git import run_git

FOLDER = Path(".sagent") / "worktrees"
"""Where, in the repository, the sub-agents' worktrees are made."""
BRANCH_PREFIX = "sagent/"
_GIT_TIMEOUT_S = 30


class WorktreeError(Exception):
    """No worktree could be made: not a git repository, no commit yet, or git refused."""


def _git(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    try:
        return run_git(folder, *args, timeout=_GIT_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError) as error:
        raise WorktreeError(f"git could not run: {error}") from None


@dataclass(frozen=True, slots=True)
class Worktree:
    """A worktree made for one sub-agent."""

    path: Path
    """The worktree's folder."""
    branch: str
    """The branch checked out there, made for the sub-agent."""
    repository: Path
    """The work tree it was made from (its top folder)."""
    base: str
    """The commit the branch started at."""
    cwd: Path
    """Where in the worktree the sub-agent starts: its parent's folder, at the same place in the tree."""

    def changes(self) -> tuple[int, bool]:
        """The commits on the branch since it was made, and whether the worktree has uncommitted changes
        (untracked files count). A worktree git cannot read counts as changed, so it is kept."""
        count = _git(self.path, "rev-list", "--count", f"{self.base}..HEAD")
        status = _git(self.path, "status", "--porcelain")
        if count.returncode != 0 or status.returncode != 0:
            return 0, True
        return int(count.stdout.strip() or 0), bool(status.stdout.strip())

    def finish(self) -> str:
        """Remove the worktree and its branch when the sub-agent left nothing there; say what became of it."""
        try:
            commits, dirty = self.changes()
        except WorktreeError:
            commits, dirty = 0, True
        if commits == 0 and not dirty:
            removed = _git(self.repository, "worktree", "remove", str(self.path))
            if removed.returncode == 0:
                _git(self.repository, "branch", "-D", self.branch)
                return f"worktree {self.path} removed: no changes were made"
        what = []
        if commits:
            what.append(f"{commits} commit{'s' if commits != 1 else ''}")
        if dirty:
            what.append("uncommitted changes")
        return f"work kept on branch {self.branch} in worktree {self.path} ({', '.join(what) or 'kept'})"


def make_worktree(cwd: Path, label: str) -> Worktree:
    """A new worktree and branch for the sub-agent `label`, made from the commit checked out at `cwd`;
    WorktreeError saying why when there can be none."""
    top = _git(cwd, "rev-parse", "--show-toplevel")
    if top.returncode != 0:
        raise WorktreeError(f"isolation: worktree needs a git repository, and {cwd} is not in one")
    repository = Path(top.stdout.strip())
    head = _git(repository, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    if head.returncode != 0:
        raise WorktreeError(f"isolation: worktree needs a commit to start from; {repository} has none yet")
    base = head.stdout.strip()
    _exclude(repository)
    label = re.sub(r"[^A-Za-z0-9._-]+", "-", label).strip(".-") or "agent"  # a branch and a folder name
    name, number = label, 1
    while (repository / FOLDER / name).exists() or _branch_exists(repository, BRANCH_PREFIX + name):
        number += 1
        name = f"{label}-{number}"
    path = repository / FOLDER / name
    branch = BRANCH_PREFIX + name
    made = _git(repository, "worktree", "add", "-b", branch, str(path), base)
    if made.returncode != 0:
        raise WorktreeError(f"git worktree add failed: {made.stderr.strip() or made.stdout.strip()}")
    try:
        inside = Path(cwd).resolve().relative_to(repository.resolve())
    except ValueError:
        inside = Path()
    start = path / inside
    return Worktree(path, branch, repository, base, start if start.is_dir() else path)


def _branch_exists(repository: Path, branch: str) -> bool:
    return _git(repository, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}").returncode == 0


def _exclude(repository: Path) -> None:
    """Put the worktrees' folder in the repository's exclude list, unless git ignores it already."""
    probe = (FOLDER / "probe").as_posix()
    if _git(repository, "check-ignore", "-q", "--no-index", probe).returncode == 0:
        return
    found = _git(repository, "rev-parse", "--git-path", "info/exclude")
    if found.returncode != 0:
        return
    exclude = Path(found.stdout.strip())
    exclude = exclude if exclude.is_absolute() else repository / exclude
    try:
        exclude.parent.mkdir(parents=True, exist_ok=True)
        before = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
        joiner = "" if not before or before.endswith("\n") else "\n"
        exclude.write_text(f"{before}{joiner}/{FOLDER.as_posix()}/\n", encoding="utf-8")
    except OSError:
        pass  # git then lists the folder as untracked; nothing is lost
