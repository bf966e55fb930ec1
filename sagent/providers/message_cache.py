"""Each message's wire form, converted once while the message stays in the history.

Messages are frozen, so a message object that comes again in the next request converts to the same thing:
a round converts only the messages it added. A message that changed (a compaction's summary, a rewind, a
cleared tool result) is a new object and is converted anew, and one that left the history is forgotten.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from sagent.types import Message

T = TypeVar("T")


class MessageCache(Generic[T]):
    """`convert(message)` for each message of a history, from the last history's answers where the same
    message object comes again. Callers must not change what `convert` returned (it is handed out again)."""

    def __init__(self, convert: Callable[[Message], T]) -> None:
        self._convert = convert
        self._held: dict[int, tuple[Message, T]] = {}

    def each(self, history: tuple[Message, ...]) -> list[T]:
        kept: dict[int, tuple[Message, T]] = {}
        out: list[T] = []
        for message in history:
            hit = self._held.get(id(message))
            if hit is None or hit[0] is not message:
                hit = (message, self._convert(message))
            kept[id(message)] = hit
            out.append(hit[1])
        self._held = kept
        return out
