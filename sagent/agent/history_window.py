"""A history window: only the last N turns go to the model; the turns before stay in the session log, and
the Recall tool finds them there.

A turn starts at a message from the user (or from another agent) and runs to the next one, its tool rounds
included. The cut is always at the start of a turn whose tool results all answer calls inside the window,
so a request never holds a result without its call. The first message kept says how many turns are left
out and how to reach them. The window moves by one turn each turn, so the provider's prompt cache cannot
reuse the request's beginning across that move: a window trades cache reuse for a request that stays small.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from sagent.types import Message, PeerMessage, TextPart, ToolResult, UserMessage


def turn_starts(history: Sequence[Message]) -> list[int]:
    """The indices of the messages that start a turn."""
    return [i for i, m in enumerate(history) if isinstance(m, (UserMessage, PeerMessage))]


def windowed(history: Sequence[Message], turns: int | None) -> tuple[Message, ...]:
    """`history` as a request sends it with a window of `turns` (None: all of it)."""
    if turns is None:
        return tuple(history)
    starts = turn_starts(history)
    if len(starts) <= turns:
        return tuple(history)
    cut = _safe_cut(history, starts, len(starts) - max(turns, 1))
    if cut == 0:
        return tuple(history)
    left_out = sum(1 for s in starts if s < cut)
    first = history[cut]
    if isinstance(first, UserMessage):
        first = _noted(first, left_out)
    return (first, *history[cut + 1 :])


@functools.lru_cache(maxsize=32)
def _noted(first: UserMessage, left_out: int) -> UserMessage:
    """`first` with the note on what the window leaves out: the same object from request to request while
    the window holds still, so what a provider converted of the request before still holds for it."""
    note = TextPart(
        f"[{left_out} earlier turn{'s' if left_out != 1 else ''} of this session are not shown (a history window "
        "of the last turns is on); they are kept in the session log, and the Recall tool searches them]\n\n"
    )
    return UserMessage((note, *first.content), typed=first.typed)


def _safe_cut(history: Sequence[Message], starts: list[int], index: int) -> int:
    """The start of turn `index`, or of an earlier turn when a result after it answers a call before it."""
    while index > 0:
        cut = starts[index]
        called_after = {
            c.id
            for m in history[cut:]
            if not isinstance(m, (UserMessage, PeerMessage, ToolResult))
            for c in m.tool_calls
        }
        if all(r.call_id in called_after for r in history[cut:] if isinstance(r, ToolResult)):
            return cut
        index -= 1
    return 0
