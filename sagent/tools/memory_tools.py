"""Memory and Recall: what the agent keeps for later sessions, and what it finds in earlier ones.

Memory appends a short fact to a memory file sagent reads into every later session's system prompt
(`sagent.agent.memory`): the project's `AGENTS.md` at the repository root, or the user's own file. The
facts go under a `## Remembered` heading, one line each with the date; the file stays the user's to edit.
Recall searches this project's past sessions (`sagent.evidence.recall`). In an ephemeral session Memory
saves nothing and Recall searches without writing its index.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any, BinaryIO

from sagent.lib.realpaths import PathChanged, open_real, real_path
from sagent.tools.base import AnyOrder, ToolContext, ToolError

MAX_FACT_CHARS = 500
HEADING = "## Remembered"
MAX_HITS = 20


def memory_file(scope: str, cwd: Path) -> Path:
    """The file a fact of `scope` (`project` or `user`) goes to."""
    from sagent.agent.memory import repository_root, user_memory_file

    if scope == "user":
        return user_memory_file()
    return repository_root(cwd.resolve()) / "AGENTS.md"


def remember(
    path: Path, fact: str, today: date | None = None, check: Callable[[os.stat_result], None] | None = None
) -> None:
    """Append `fact` as one dated line under the file's `## Remembered` heading (added at the end when the
    file has none). One write, appended: an edit the user makes meanwhile is kept. `path` is a real path
    (`sagent.lib.realpaths`): it is opened through no symlink, so the file written is the one checked."""
    fd = open_real(str(path), os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NONBLOCK, 0o644, make_parents=True)
    with os.fdopen(fd, "r+b") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ToolError(f"{path} is not a regular file; Memory writes only to one")
        if check is not None:
            check(st)
        _append(f, fact, today)


def _append(f: BinaryIO, fact: str, today: date | None) -> None:
    existing = f.read().decode("utf-8", errors="replace")
    lead = ""
    if HEADING not in existing.splitlines():
        lead = (
            ("\n" if existing and not existing.endswith("\n") else "") + ("\n" if existing else "") + HEADING + "\n\n"
        )
    elif existing and not existing.endswith("\n"):
        lead = "\n"
    line = f"- {fact} ({(today or date.today()).isoformat()})\n"
    f.write((lead + line).encode("utf-8"))


class Memory(AnyOrder):
    name = "Memory"
    description = (
        "Save a short fact for later sessions: a decision, a convention, a command that works, where something "
        "lives. It is appended to the project's AGENTS.md (scope 'project', the default) or the user's own "
        "memory file (scope 'user', for preferences that hold in every project), which later sessions read "
        "into their instructions. One fact per call, one line, self-contained; never a secret."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "fact": {"type": "string", "description": f"the fact, one line (at most {MAX_FACT_CHARS} characters)"},
            "scope": {"type": "string", "enum": ["project", "user"], "description": "where to keep it"},
        },
        "required": ["fact"],
    }

    def resource(self, arguments: dict[str, Any], ctx: ToolContext) -> str | None:
        return str(memory_file(str(arguments.get("scope") or "project"), ctx.cwd))

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        fact = " ".join(str(arguments.get("fact") or "").split())
        scope = arguments.get("scope") or "project"
        if scope not in ("project", "user"):
            raise ToolError("scope is 'project' or 'user'")
        if not fact:
            raise ToolError("give the fact to remember")
        if len(fact) > MAX_FACT_CHARS:
            raise ToolError(f"a fact is at most {MAX_FACT_CHARS} characters; this one has {len(fact)}: shorten it")
        if ctx.ephemeral:
            raise ToolError("this session is ephemeral: nothing is saved, memory included")
        from sagent.redaction import known_secrets

        if any(secret and secret in fact for secret in known_secrets()):
            raise ToolError("the fact holds a secret (an API key or token): it is not saved")
        path = Path(real_path(str(memory_file(str(scope), ctx.cwd)), "/"))  # AGENTS.md may be a symlink
        ctx.refuse_file(self.name, str(path))
        try:
            remember(path, fact, check=ctx.link_check(self.name))
        except PathChanged:
            raise ToolError(f"cannot write {path}: a symlink was put in its path after the check") from None
        except OSError as error:
            raise ToolError(f"cannot write {path}: {error.strerror or error}") from None
        return f"remembered in {path} (read into later sessions)"


class Recall(AnyOrder):
    name = "Recall"
    reproducible = True
    description = (
        "Search this project's past sessions (what the user asked, what agents answered, what they told each "
        "other) for words, e.g. what was decided about a module last week. Returns the session, the turn and a "
        "snippet for each match, best first. Every word must match."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "the words to find"},
            "limit": {"type": "integer", "description": f"at most this many matches (default 8, up to {MAX_HITS})"},
        },
        "required": ["query"],
    }

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        import asyncio

        query = str(arguments.get("query") or "").strip()
        if not query:
            raise ToolError("give the words to search for")
        limit = arguments.get("limit")
        limit = 8 if limit is None else limit
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise ToolError("limit is a whole number, 1 or more")
        current = ctx.session_dir.name if ctx.session_dir is not None and not ctx.ephemeral else None
        window = getattr(ctx.runtime, "history_window", None)
        if callable(window) and window() is not None:
            current = None  # the earlier turns of this session are out of the model's sight: search them too
        return await asyncio.to_thread(_search, ctx.cwd, query, min(limit, MAX_HITS), current, ctx.ephemeral)


def _search(cwd: Path, query: str, limit: int, current: str | None, ephemeral: bool) -> str:
    import sqlite3

    from sagent.evidence.recall import RecallIndex

    try:
        with RecallIndex.for_project(cwd, ephemeral=ephemeral) as index:
            index.update()
            hits = index.search(query, limit=limit, exclude=current)
    except (OSError, sqlite3.Error) as error:
        raise ToolError(f"the session index cannot be read or written ({error})") from None
    if not hits:
        return f"no past session of this project mentions {query!r}"
    return "\n".join(hit.line() for hit in hits)
