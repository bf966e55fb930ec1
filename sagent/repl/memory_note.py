"""`# note` typed in the REPL: the note is added to the project memory, and nothing is sent to the model.

The note goes to the project memory file sagent reads nearest the working folder (AGENTS.md before
CLAUDE.md in one folder, from the working folder up to the repository root), or to a new AGENTS.md at the
repository root when the project has none. Only a one-line message counts: a pasted Markdown text whose
first line is a heading is sent to the model as usual, and so is a message starting with a space. The
user's own memory (`$XDG_CONFIG_HOME/sagent/AGENTS.md`, shown by /memory) is edited by hand.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sagent.repl.host import ReplHost


class MemoryNoteError(Exception):
    """The note could not be written; the message says why."""


def is_note(text: str) -> bool:
    """Whether the input box's text is a memory note: one line starting with `#`."""
    return text.startswith("#") and "\n" not in text.strip()


def memory_target(cwd: Path) -> Path:
    """The project memory file a note goes to (see the module's docstring)."""
    from sagent.agent.memory import MEMORY_NAMES, repository_root

    cwd = cwd.resolve()
    root = repository_root(cwd)
    folders = [cwd, *[p for p in cwd.parents if p == root or root in p.parents]]
    for folder in folders:
        for name in MEMORY_NAMES:
            path = folder / name
            if path.is_file() and path.resolve().is_relative_to(root):  # what the memory loader reads
                return path
    return root / MEMORY_NAMES[0]


def add_note(cwd: Path, note: str) -> Path:
    """Append `note` as a bullet to the project memory file; its path. MemoryNoteError when it cannot."""
    path = memory_target(cwd)
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise MemoryNoteError(f"{path} is not a plain file of this repository; add the note by hand")
    try:
        before = path.read_text(encoding="utf-8") if path.exists() else ""
        separator = "" if not before or before.endswith("\n") else "\n"
        with path.open("a", encoding="utf-8") as file:
            file.write(f"{separator}- {note}\n")
    except (OSError, UnicodeDecodeError) as error:
        raise MemoryNoteError(f"cannot write {path}: {getattr(error, 'strerror', None) or error}") from None
    return path


def take_note(repl: ReplHost, text: str) -> None:
    """What Enter does with `# note`: write it, and say where it went (or why it did not)."""
    c = repl.renderer.c
    note = " ".join(text.lstrip("#").split())
    if not note:
        repl.commit([c("yellow", "# NOTE adds NOTE to the project memory (AGENTS.md); nothing is sent to the model")])
        return
    try:
        path = add_note(repl.agent.context.cwd, note)
    except MemoryNoteError as error:
        repl.commit([c("yellow", f"# not saved: {error}")])
        return
    where = c("dim", f"  ↳ added to {path}: the project memory, read at the start of each session (/clear starts one)")
    repl.commit([c("dim", "# ") + note, where])
