"""Frozen JSON values: a JSON object or array that nothing can change after it is kept.

    directive = json_freeze({"prompt": "fix the test", "tags": ["ci"]})
    directive["prompt"]                  # 'fix the test'
    directive["tags"]                    # ('ci',)
    json.dumps(json_thaw(directive))     # back to plain dicts and lists

Objects become `FrozenMap` (a read-only, hashable mapping, equal to any mapping with equal items), arrays
become tuples; strings, numbers, booleans and None stay as they are. A value kept by sagent
(a run's directive) is frozen so that the caller changing its dict afterwards cannot change what was run.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TypeAlias, TypeVar, overload

JSON: TypeAlias = "bool | int | float | str | list[JSON] | tuple[JSON, ...] | Mapping[str, JSON] | None"
"""A JSON value as Python holds it (json.loads gives dicts and lists; frozen values are accepted too)."""

FrozenJSON: TypeAlias = "bool | int | float | str | tuple[FrozenJSON, ...] | FrozenMap[FrozenJSON] | None"
"""A JSON value that cannot change: objects are `FrozenMap`, arrays tuples."""

_V = TypeVar("_V")


class FrozenMap(Mapping[str, _V]):
    """A read-only mapping of a copy of its items: hashable, equal to any mapping with the same items."""

    __slots__ = ("_hash", "_items")

    def __init__(self, items: Mapping[str, _V]) -> None:
        self._items: dict[str, _V] = dict(items)
        self._hash: int | None = None

    def __getitem__(self, key: str) -> _V:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self._items.items()))
        return self._hash

    def __repr__(self) -> str:
        return f"FrozenMap({self._items!r})"


@overload
def json_freeze(value: Mapping[str, JSON]) -> FrozenMap[FrozenJSON]: ...
@overload
def json_freeze(value: list[JSON] | tuple[JSON, ...]) -> tuple[FrozenJSON, ...]: ...
@overload
def json_freeze(value: JSON) -> FrozenJSON: ...
def json_freeze(value: JSON) -> FrozenJSON:
    """`value` with every object made a `FrozenMap` and every array a tuple, all the way down; a copy, so
    later changes to `value` do not show. TypeError for anything JSON cannot hold (a set, bytes, an
    object key that is not a string, any other object), naming where it is."""
    return _freeze(value, "$")


def json_thaw(value: FrozenJSON | JSON) -> JSON:
    """The plain form of a (frozen) JSON value: mappings as dicts, arrays as lists, ready for json.dumps."""
    if isinstance(value, Mapping):
        return {k: json_thaw(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_thaw(v) for v in value]
    return value


def _freeze(value: object, where: str) -> FrozenJSON:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Mapping):
        bad = [k for k in value if not isinstance(k, str)]
        if bad:
            raise TypeError(f"json_freeze: the object at {where} has a key that is not a string: {bad[0]!r}")
        return FrozenMap({k: _freeze(v, f"{where}.{k}") for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(_freeze(v, f"{where}[{i}]") for i, v in enumerate(value))
    raise TypeError(f"json_freeze: {type(value).__name__} at {where} is not a JSON value")


def canonical_json(value: JSON) -> bytes:
    """The one byte form of a JSON value that two writers agree on: keys sorted, no spaces, UTF-8 (lone
    surrogates escaped), so its SHA-256 names the value. Frozen values give the bytes of their plain form."""
    import json

    plain = json_thaw(value)
    try:
        return json.dumps(plain, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(plain, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("utf-8")


def json_kind(value: object) -> str:
    """A short description of a JSON value for an error message: `true`, `null`, `"text"` or `3` (cut at
    60 characters), `a list`, `an object`."""
    import json

    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float, str)):
        return json.dumps(value)[:60]
    return "a list" if isinstance(value, list) else "an object"
