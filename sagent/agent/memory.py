"""Project memory: the instructions a project keeps for coding agents, read into the system prompt.

sagent reads AGENTS.md (and CLAUDE.md where a project has one) in every folder from the repository root
down to the working directory, after a user-level file (`$XDG_CONFIG_HOME/sagent/AGENTS.md`). Files nearer
the working directory come later, so their word wins where they disagree. The whole is capped: a project
cannot crowd the context out, and a cut file says so and where to Read the rest. A project's memory file
that is a symlink out of the repository is not read: a cloned repository cannot send a file of yours to the
model by linking to it.

The memory goes into the system prompt once, at the start of a session, so it stays part of the cached
prefix for the whole session.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

MEMORY_NAMES = ("AGENTS.md", "CLAUDE.md")
MAX_FILE_CHARS = 20_000
MAX_TOTAL_CHARS = 40_000
INTRO = (
    "# Project memory\n"
    "Instructions kept by the user and the project for agents working here. Files nearer the working "
    "directory come later and take precedence. Follow them unless the user says otherwise."
)


@dataclass(frozen=True, slots=True)
class MemoryFile:
    path: Path
    text: str
    cut: bool  # True when only the head of the file is included


def user_memory_file() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "sagent" / "AGENTS.md"


def repository_root(cwd: Path) -> Path:
    """The nearest folder at or above `cwd` holding `.git`; `cwd` itself outside a repository."""
    for folder in (cwd, *cwd.parents):
        if (folder / ".git").exists():
            return folder
    return cwd


def memory_files(cwd: Path, user_file: Path | None = None) -> list[MemoryFile]:
    """The memory files for `cwd`, in the order they are read, each cut to fit what room is left."""
    cwd = cwd.resolve()
    root = repository_root(cwd)
    folders = [cwd, *[p for p in cwd.parents if p == root or root in p.parents]]
    candidates = [user_file or user_memory_file()]
    for folder in reversed(folders):
        candidates += [folder / name for name in MEMORY_NAMES]
    found: list[MemoryFile] = []
    room = MAX_TOTAL_CHARS
    seen: set[Path] = set()
    user = candidates[0]
    for path in candidates:
        if room <= 0 or not path.is_file() or path.resolve() in seen:
            continue
        if path != user and not path.resolve().is_relative_to(root):
            continue  # a project's memory file linked out of the repository (to ~/.ssh/id_rsa, say) is not read
        seen.add(path.resolve())
        try:
            text = path.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            continue
        if not text:
            continue
        limit = min(MAX_FILE_CHARS, room)
        found.append(MemoryFile(path, text[:limit], len(text) > limit))
        room -= min(len(text), limit)
    return found


def memory_prompt(files: list[MemoryFile]) -> str:
    """The system prompt section for `files`; empty when there are none."""
    if not files:
        return ""
    sections = [INTRO]
    for f in files:
        body = f.text
        if f.cut:
            body += f"\n\n[… cut to fit the context; Read {f.path} for the rest]"
        sections.append(f"## {f.path}\n\n{body}")
    return "\n\n".join(sections)
