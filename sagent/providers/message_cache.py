"""Each message's wire form, converted once while the message stays in the history.

Messages are frozen, so a message object that comes again in the next request converts to the same thing:
a round converts only the messages it added. A message that changed (a compaction's summary, a rewind, a
cleared tool result) is a new object and is converted anew, and one that left the history is forgotten.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from sagent.types import Message

T = TypeVar("T")

ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
"""The encoder of request bodies sent as JSON text: compact, UTF-8 (the body is sent as its UTF-8 bytes)."""


class MessageCache(Generic[T]):
    """`convert(message)` for each message of a history, from the last history's answers where the same
    message object comes again. Callers must not change what `convert` returned (it is handed out again)."""

    def __init__(self, convert: Callable[[Message], T]) -> None:
        self._convert = convert
        self._held: dict[int, tuple[Message, T]] = {}
        self._last: tuple[tuple[Message, ...], list[T]] = ((), [])

    def each(self, history: tuple[Message, ...]) -> list[T]:
        """`[convert(m) for m in history]`, each message converted once while it stays in the history."""
        messages, converted = self._last
        if len(history) >= len(messages) and all(map(operator.is_, history, messages)):
            # The last history and more (a round's new messages): only those are looked at.
            added = history[len(messages) :]
            new = [self._convert(m) for m in added]
            self._held.update((id(m), (m, v)) for m, v in zip(added, new, strict=True))
            self._last = (history, converted + new)
            return converted + new
        kept: dict[int, tuple[Message, T]] = {}
        out: list[T] = []
        for message in history:
            hit = self._held.get(id(message))
            if hit is None or hit[0] is not message:
                hit = (message, self._convert(message))
            kept[id(message)] = hit
            out.append(hit[1])
        self._held = kept
        self._last = (history, out)
        return list(out)


class _Items:
    """One message's wire items, and their JSON once asked for."""

    __slots__ = ("_text", "items")

    def __init__(self, items: list[dict[str, Any]]) -> None:
        self.items = items
        self._text: str | None = None

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = ",".join(ENCODER.encode(item) for item in self.items)
        return self._text


class ItemCache:
    """For a wire format whose list of items is each message's items one after another (the Responses
    API's `input`): the list, and its JSON, each message's items converted and encoded once while the
    message stays in the history; when the history only grew, the last list and JSON are extended."""

    def __init__(self, convert: Callable[[Message], list[dict[str, Any]]]) -> None:
        self._convert = convert
        self._cache: MessageCache[_Items] = MessageCache(lambda message: _Items(convert(message)))
        self._messages: tuple[Message, ...] = ()
        self._items: list[dict[str, Any]] = []
        self._text = ""  # the items' JSON, comma-separated

    def items(self, history: tuple[Message, ...]) -> list[dict[str, Any]]:
        """Every message's items, in order (a new list; the items are shared: do not change them)."""
        known = len(self._messages)
        if len(history) >= known and all(map(operator.is_, history, self._messages)):
            added = [_Items(self._convert(m)) for m in history[known:]]
            items = self._items + [item for entry in added for item in entry.items]
            texts = [entry.text for entry in added if entry.items]
            self._text = ",".join([self._text, *texts] if self._text else texts)
        else:
            converted = self._cache.each(history)
            items = [item for entry in converted for item in entry.items]
            self._text = ",".join(entry.text for entry in converted if entry.items)
        self._messages, self._items = history, items
        return items

    def json(self, items: list[dict[str, Any]]) -> str:
        """`ENCODER.encode(items)`: from each message's JSON when `items` is the last list `items()` gave."""
        if items is not self._items:
            return ENCODER.encode(items)
        return "[" + self._text + "]"


def encode_body(params: dict[str, Any], key: str, text: str) -> bytes:
    """`ENCODER.encode(params)` as UTF-8 bytes, with `text` as the JSON of `params[key]`."""
    pieces = [f"{ENCODER.encode(k)}:{text if k == key else ENCODER.encode(v)}" for k, v in params.items()]
    return ("{" + ",".join(pieces) + "}").encode("utf-8")
