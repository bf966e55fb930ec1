"""This directory's sessions as every list shows them (`/sessions`, `/resume`, `sagent --resume`, `sagent
sessions`): ids cut only as far as they stay distinct, a title, forks under the session they came from,
and a search over all of it.

    for row in listed_sessions(cwd):
        print(row.short_id, "  " * row.depth + row.info.label)
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sagent.agent.session import SessionInfo, list_sessions

MIN_SHORT_ID = 20
"""How much of an id a list shows at least: `20261123-153012-4c1d` (date, time and 4 of its random
characters): as long as it takes beyond that to tell it from every other id listed."""


@dataclass(frozen=True, slots=True)
class ListedSession:
    """One row of a session list: the session, the id shown (a unique prefix of the whole one), its depth
    in the tree of forks (0: not a fork of a listed session) and the id of the session it came from."""

    info: SessionInfo
    short_id: str
    depth: int = 0

    @property
    def when(self) -> str:
        """When it was last written, as "2026-11-23 15:30" (local time)."""
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(self.info.modified))

    @property
    def search_text(self) -> str:
        """What a search looks in: the id, the title, the first prompt and the date."""
        return " ".join((self.info.id, self.info.title, self.info.first_prompt, self.when))

    def matches(self, query: str) -> bool:
        """True when every word of `query` is in `search_text` (any case)."""
        haystack = self.search_text.casefold()
        return all(word in haystack for word in query.casefold().split())


def short_ids(ids: Sequence[str], least: int = MIN_SHORT_ID) -> dict[str, str]:
    """For each id, its shortest prefix of at least `least` characters that starts no other id of `ids`
    (the whole id when it needs it). Any of them opens its session where an id is asked for."""
    out = {}
    for one in ids:
        size = min(least, len(one))
        while size < len(one) and any(other != one and other.startswith(one[:size]) for other in ids):
            size += 1
        out[one] = one[:size]
    return out


def session_tree(sessions: Sequence[SessionInfo]) -> list[tuple[SessionInfo, int]]:
    """`sessions` in list order: trees of forks, the tree with the newest session first; in each, a
    session then its forks (newest first), each with its depth. A fork whose parent is not among them
    stands as a tree of its own."""
    by_id = {s.id: s for s in sessions}
    children: dict[str, list[SessionInfo]] = {}
    roots = []
    for info in sessions:
        if info.parent and info.parent in by_id and info.parent != info.id:
            children.setdefault(info.parent, []).append(info)
        else:
            roots.append(info)

    def newest(info: SessionInfo, seen: frozenset[str] = frozenset()) -> float:
        below = [newest(c, seen | {info.id}) for c in children.get(info.id, ()) if c.id not in seen]
        return max([info.modified, *below])

    out: list[tuple[SessionInfo, int]] = []

    def walk(info: SessionInfo, depth: int) -> None:
        if any(info is done for done, _ in out):  # a loop of parents (hand-edited headers): once only
            return
        out.append((info, depth))
        for child in sorted(children.get(info.id, ()), key=newest, reverse=True):
            walk(child, depth + 1)

    for root in sorted(roots, key=newest, reverse=True):
        walk(root, 0)
    for info in sessions:  # sessions only reachable through a loop of parents
        if not any(info is done for done, _ in out):
            walk(info, 0)
    return out


def listed_sessions(cwd: Path) -> list[ListedSession]:
    """This directory's sessions as lists show and number them (see `session_tree`)."""
    sessions = list_sessions(cwd)
    shown = short_ids([s.id for s in sessions])
    return [ListedSession(info, shown[info.id], depth) for info, depth in session_tree(sessions)]
