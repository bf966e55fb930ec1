"""Counts in words: `1 line`, `2 lines`, never `1 lines`."""

from __future__ import annotations


def plural(n: int, noun: str, many: str | None = None) -> str:
    """`noun` as it goes after the number `n`: itself for one, else `many` (`noun` + "s" when not given)."""
    return noun if n == 1 else (many if many is not None else noun + "s")


def quantity(n: int, noun: str, many: str | None = None) -> str:
    """`n` and its noun: `1 line`, `0 lines`, `1,234 lines`, `3 tool rounds`, `2 entries` (with `many`)."""
    return f"{n:,} {plural(n, noun, many)}"
