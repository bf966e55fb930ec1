"""The prompt that asks an agent to write the project memory (`/init` in the REPL, `sagent -p /init`):
look at the repository with its tools, then write AGENTS.md at its root, or improve the memory file that
is there rather than replace it."""

from __future__ import annotations

import os
from pathlib import Path

WRITING_TOOLS = ("Write", "Edit")
"""The tools /init needs, one or the other: the agent writes the file itself."""

LOOK = (
    "Look at this repository with your tools before writing anything: list its files, read the README, the "
    "build and package files (pyproject.toml, package.json, Cargo.toml, go.mod, Makefile, ...), the CI "
    "configuration, and a few source and test files."
)
CONTENT = (
    "It is read by coding agents at the start of every session, so it holds what they need to work here, in "
    "short Markdown sections: what the project is (a few lines); how to set it up, build, run the tests (a "
    "single test too) and lint, with the exact commands; the layout (the main folders and what each holds); "
    "the conventions a change must follow (code style, naming, tests, commits) as the code and docs show them. "
    "Be specific to this repository, state only what you saw in its files, leave out generic advice, and keep "
    "it under about 100 lines."
)


def init_target(cwd: Path) -> Path:
    """The memory file /init writes: the repository root's AGENTS.md, or its CLAUDE.md when only that one
    exists (sagent reads both; a second file would say everything twice)."""
    from sagent.agent.memory import MEMORY_NAMES, repository_root

    root = repository_root(cwd.resolve())
    for name in MEMORY_NAMES:
        if (root / name).is_file():
            return root / name
    return root / MEMORY_NAMES[0]


def init_prompt(target: Path, cwd: Path) -> str:
    """The message /init sends: write `target` from a look at the repository, or improve it when it exists."""
    shown = os.path.relpath(target, cwd.resolve()) if target.is_relative_to(cwd.resolve()) else str(target)
    if target.is_file():
        return (
            f"Improve {shown}, this repository's instructions for coding agents. {LOOK} Read {shown} first and "
            f"edit it in place rather than replacing it: keep what is still true and the instructions people "
            f"wrote there, correct what the repository contradicts, and add what is missing. {CONTENT}"
        )
    return f"Write {shown}: this repository's instructions for coding agents. {LOOK} {CONTENT}"
