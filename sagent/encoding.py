"""Text every encoder accepts: lone UTF-16 surrogates replaced with U+FFFD.

Python keeps bytes it could not decode as lone surrogates (a file name or argument that is not UTF-8), and
JSON may escape one ("\\ud800"). UTF-8 cannot encode them, so the first encoder to meet one (an SDK's
request body, a file write) raises. Text from outside is passed through `scrub` where it enters sagent.
"""

from __future__ import annotations

import dataclasses
import re
from typing import TypeVar, cast

T = TypeVar("T")

REPLACEMENT = "\ufffd"

# A str can hold a surrogate code point only when it is unpaired: decoding pairs them into one character.
_SURROGATE = re.compile("[\ud800-\udfff]")


def scrub(text: str) -> tuple[str, int]:
    """`text` with every lone surrogate replaced by U+FFFD, and how many there were."""
    if text.isascii():
        return text, 0
    return _SURROGATE.subn(REPLACEMENT, text)


def scrub_deep(value: T) -> T:
    """`value` with every lone surrogate in its text replaced by U+FFFD, through strings, lists, tuples, dict
    keys and values and frozen dataclasses (a message, a request, an event); `value` itself, not a copy,
    when it holds none (the common case costs one walk and no allocation)."""
    return cast(T, _deep(value))


def _deep(value: object) -> object:
    if isinstance(value, str):
        return value if value.isascii() else _SURROGATE.sub(REPLACEMENT, value)
    if isinstance(value, tuple | list):
        items = [_deep(item) for item in value]
        if all(new is old for new, old in zip(items, value, strict=True)):
            return value
        return type(value)(items)
    if isinstance(value, dict):
        pairs = [(_deep(k), _deep(v)) for k, v in value.items()]
        if all(nk is k and nv is v for (nk, nv), (k, v) in zip(pairs, value.items(), strict=True)):
            return value
        return dict(pairs)
    names = _field_names(type(value))
    if names:
        changes = {}
        for name in names:
            old = getattr(value, name)
            new = _deep(old)
            if new is not old:
                changes[name] = new
        return dataclasses.replace(value, **changes) if changes else value  # type: ignore[type-var]
    return value


_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    """The fields of a dataclass (none for any other class), found once per class: every streamed event is
    walked, and `dataclasses.fields` builds its answer anew each time."""
    names = _NAMES.get(cls)
    if names is None:
        names = tuple(f.name for f in dataclasses.fields(cls)) if dataclasses.is_dataclass(cls) else ()
        _NAMES[cls] = names
    return names
