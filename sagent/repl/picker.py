"""A searchable list under the live area: what the input box holds filters it, Up and Down choose, Enter
takes the choice, Esc leaves it. Bare `/resume`, `/rewind` and `/fork` open one.

    open_picker(repl, "Resume which session?", [Choice(info, row, search_text), ...], on_pick)

While it is open the input box is its search field; `on_pick(value)` runs with the chosen value and may
return text for the input box (a rewound message, to edit and send again).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from prompt_toolkit.buffer import Buffer
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.layout import Container

    from sagent.repl.host import ReplHost

T = TypeVar("T")
ROWS = 10
"""How many choices show at once; the list scrolls with the selection."""


@dataclass(frozen=True)
class Choice(Generic[T]):
    """One row of a picker: the value it stands for, the line shown, and the text a search looks in
    (the line itself when empty)."""

    value: T
    line: str
    search: str = ""

    def matches(self, query: str) -> bool:
        """True when every word of `query` is in the choice's search text (any case)."""
        haystack = (self.search or self.line).casefold()
        return all(word in haystack for word in query.casefold().split())


@dataclass
class Picker(Generic[T]):
    """An open picker: its title, its choices, what picking does, and the row chosen among those shown."""

    title: str
    choices: Sequence[Choice[T]]
    on_pick: Callable[[T], str | None]
    selected: int = 0
    query: str = ""
    shown: list[Choice[T]] = field(default_factory=list)

    def filter(self, query: str) -> list[Choice[T]]:
        """The choices `query` matches, in order; the selection kept in range (back to the first when the
        query changed)."""
        if query != self.query:
            self.query, self.selected = query, 0
        self.shown = [c for c in self.choices if c.matches(query)]
        self.selected = max(0, min(self.selected, len(self.shown) - 1))
        return self.shown

    def move(self, step: int) -> None:
        if self.shown:
            self.selected = (self.selected + step) % len(self.shown)

    def lines(self, width: int) -> list[tuple[str, str]]:
        """The picker as (style, text) lines: the title with the count, the rows around the selection,
        and the keys."""
        shown = self.shown
        head = f"{self.title}  ({len(shown)} of {len(self.choices)}{', filtered' if self.query.strip() else ''})"
        out = [("class:picker.title", head)]
        start = max(0, min(self.selected - ROWS // 2, len(shown) - ROWS))
        for index in range(start, min(start + ROWS, len(shown))):
            chosen = index == self.selected
            text = ("❯ " if chosen else "  ") + shown[index].line
            out.append(("class:picker.selected" if chosen else "", text[: max(width - 1, 10)]))
        if not shown:
            out.append(("class:picker.hint", "  nothing matches; Backspace widens the search"))
        out.append(("class:picker.hint", "type to search · ↑↓ choose · Enter pick · Esc cancel"))
        return out


_OPEN: weakref.WeakKeyDictionary[Any, Picker[Any]] = weakref.WeakKeyDictionary()


def open_picker(repl: ReplHost, title: str, choices: Sequence[Choice[T]], on_pick: Callable[[T], str | None]) -> None:
    """Show a picker under the live area (replacing any open one); the input box searches it."""
    picker = Picker(title, choices, on_pick)
    picker.filter("")
    _OPEN[repl] = picker
    repl.refresh()


def picker_of(repl: ReplHost) -> Picker[Any] | None:
    """The picker open in this REPL, or None."""
    return _OPEN.get(repl)


def close_picker(repl: ReplHost) -> None:
    """Close the open picker, choosing nothing."""
    _OPEN.pop(repl, None)
    repl.refresh()


def add_keys(keys: KeyBindings, repl: ReplHost, buffer: Buffer) -> None:
    """Up, Down, Enter and Esc while a picker is open (added after the REPL's own keys, so they win then)."""
    from prompt_toolkit.filters import Condition

    is_open = Condition(lambda: picker_of(repl) is not None)

    @keys.add("up", filter=is_open)
    def _up(event: object) -> None:
        _move(repl, buffer, -1)

    @keys.add("down", filter=is_open)
    def _down(event: object) -> None:
        _move(repl, buffer, 1)

    @keys.add("escape", filter=is_open)
    @keys.add("c-c", filter=is_open)
    def _cancel(event: object) -> None:
        buffer.reset()
        close_picker(repl)

    @keys.add("enter", filter=is_open)
    def _pick(event: object) -> None:
        picker = picker_of(repl)
        if picker is None:
            return
        shown = picker.filter(buffer.text)
        if not shown:
            return
        choice = shown[picker.selected]
        buffer.reset()
        close_picker(repl)
        try:
            text = picker.on_pick(choice.value)
        except Exception as error:  # a failing pick must not take the REPL down
            repl.commit([repl.renderer.c("red", f"failed: {type(error).__name__}: {error}")])
            return
        if text:
            buffer.text = text
            buffer.cursor_position = len(text)


def _move(repl: ReplHost, buffer: Buffer, step: int) -> None:
    picker = picker_of(repl)
    if picker is not None:
        picker.filter(buffer.text)
        picker.move(step)
        repl.refresh()


def window(repl: ReplHost, buffer: Buffer) -> Container:
    """The open picker, above the input box."""
    from prompt_toolkit.filters import Condition
    from prompt_toolkit.formatted_text import StyleAndTextTuples
    from prompt_toolkit.layout import ConditionalContainer, Window
    from prompt_toolkit.layout.controls import FormattedTextControl

    def text() -> StyleAndTextTuples:
        picker = picker_of(repl)
        if picker is None:
            return []
        picker.filter(buffer.text)
        out: StyleAndTextTuples = []
        for style, line in picker.lines(repl.settings.width):
            out += [(style, line), ("", "\n")]
        return out[:-1]

    return ConditionalContainer(
        Window(FormattedTextControl(text), dont_extend_height=True),
        filter=Condition(lambda: picker_of(repl) is not None),
    )
