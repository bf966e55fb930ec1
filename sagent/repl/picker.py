"""A searchable list under the live area (`/model`, a bare `/resume`, `/rewind`, `/fork`): the input box
is its search field, Up and Down move, Enter chooses, Esc closes. The state is pure (`Picker`); `add_keys`
and `picker_window` wire it to the REPL's screen, the way approval.py wires its question.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sagent.repl.tool_view import clip

if TYPE_CHECKING:
    from prompt_toolkit.buffer import Buffer
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.layout import Container

    from sagent.repl.host import ReplHost

ROWS = 10
"""At most this many rows of the list are shown at once; the list scrolls to keep the chosen one in view."""


@dataclass(frozen=True)
class PickItem:
    """One row: what is shown, the words a search matches against, and the value chosen."""

    label: str
    search: str
    value: Any


@dataclass
class Picker:
    """A list to search and choose from; `on_choose` gets the chosen item's value."""

    title: str
    items: list[PickItem]
    on_choose: Callable[[Any], str | None]
    """Runs with the chosen value; text it returns goes into the input box (a rewound message, to edit)."""
    header: str = ""
    query: str = ""
    index: int = 0
    _top: int = field(default=0, repr=False)
    _drawn: tuple[tuple[object, ...], list[tuple[str, bool]]] | None = field(default=None, repr=False)

    def matches(self) -> list[PickItem]:
        """The items whose search text holds every word of the query (any case), in their order."""
        words = self.query.lower().split()
        return [item for item in self.items if all(w in item.search.lower() for w in words)]

    def search(self, query: str) -> None:
        """A new query: the first match is chosen."""
        self.query, self.index, self._top = query, 0, 0

    def move(self, delta: int) -> None:
        """Move the choice by `delta` rows, stopping at either end."""
        count = len(self.matches())
        self.index = min(max(self.index + delta, 0), max(count - 1, 0))

    def chosen(self) -> PickItem | None:
        """The item Enter would choose, or None when nothing matches."""
        found = self.matches()
        return found[self.index] if 0 <= self.index < len(found) else None

    def text(self, width: int, rows: int = ROWS) -> str:
        """The title, the visible rows (the chosen one marked) and a footer, each cut to `width`."""
        return "\n".join(line for line, _ in self.lines(width, rows))

    def lines(self, width: int, rows: int = ROWS) -> list[tuple[str, bool]]:
        """The lines of `text`, each with whether it is the chosen row (the screen highlights it)."""
        key = (self.query, self.index, width, rows, self._top)
        if self._drawn is None or self._drawn[0] != key:  # one redraw asks several times
            self._drawn = (key, self._lines(width, rows))
        return self._drawn[1]

    def _lines(self, width: int, rows: int) -> list[tuple[str, bool]]:
        found = self.matches()
        rows = max(rows, 1)
        if self.index < self._top:
            self._top = self.index
        elif self.index >= self._top + rows:
            self._top = self.index - rows + 1
        room = max(width - 1, 12)
        title = self.title + (f" · search: {self.query}" if self.query else " · type to search")
        lines = [(clip(title, room), False)]
        if self.header:
            lines.append(("  " + clip(self.header, room - 2, squeeze=False), False))
        for n, item in enumerate(found[self._top : self._top + rows], self._top):
            mark = "› " if n == self.index else "  "
            lines.append((mark + clip(item.label, room - 2, squeeze=False), n == self.index))
        if not found:
            lines.append((clip(f"  nothing matches {self.query!r}", room), False))
        shown = f"{len(found)} of {len(self.items)}" if self.query else f"{len(self.items)}"
        lines.append((clip(f"  {shown} · ↑↓ move · Enter chooses · Esc closes", room), False))
        return lines


def open_picker(repl: ReplHost, picker: Picker) -> None:
    """Show `picker` under the live area; the input box becomes its search field."""
    repl.state.picker = picker
    repl.refresh()


def close_picker(repl: ReplHost) -> None:
    """Close the picker without choosing."""
    repl.state.picker = None
    repl.refresh()


def add_keys(keys: KeyBindings, repl: ReplHost, buffer: Buffer) -> None:
    """The picker's keys, which win over the input box's own while a picker is open (added after them)."""
    from prompt_toolkit.filters import Condition

    is_open = Condition(lambda: repl.state.picker is not None)

    def moving(delta: int) -> Callable[[object], None]:
        def handler(event: object) -> None:
            if repl.state.picker is not None:
                repl.state.picker.move(delta)
                repl.refresh()

        return handler

    moves = (("up", -1), ("down", 1), ("pageup", -ROWS), ("pagedown", ROWS), ("c-p", -1), ("c-n", 1), ("tab", 1))
    for key, delta in moves:  # Tab too: it must not hold the search text as a message for later
        keys.add(key, filter=is_open)(moving(delta))

    @keys.add("enter", filter=is_open)
    def _choose(event: object) -> None:
        picker = repl.state.picker
        item = picker.chosen() if picker is not None else None
        if item is None:
            return  # nothing matches: the user edits the search
        repl.state.picker = None
        buffer.reset()
        try:
            text = picker.on_choose(item.value)  # type: ignore[union-attr]
        except Exception as error:  # a choice that fails must not take the REPL down
            repl.commit([repl.renderer.c("red", f"failed: {type(error).__name__}: {error}")])
            text = None
        if text:
            buffer.text = text
            buffer.cursor_position = len(text)
        repl.refresh()

    def _close(event: object) -> None:
        buffer.reset()
        close_picker(repl)

    keys.add("escape", filter=is_open)(_close)
    keys.add("c-c", filter=is_open)(_close)

    def follow(_: object) -> None:
        if repl.state.picker is not None:
            repl.state.picker.search(buffer.text)

    buffer.on_text_changed += follow


def picker_window(repl: ReplHost, width: Callable[[], int]) -> Container:
    """The open picker, above the input box, the chosen row highlighted. Plain styled text, not ANSI: the
    window is redrawn on every keystroke while the user searches, and parsing escape codes costs."""
    from prompt_toolkit.filters import Condition
    from prompt_toolkit.formatted_text import StyleAndTextTuples
    from prompt_toolkit.layout import ConditionalContainer, Window
    from prompt_toolkit.layout.controls import FormattedTextControl

    def text() -> StyleAndTextTuples:
        picker = repl.state.picker
        if picker is None:
            return []
        rows = ROWS
        if repl.app is not None:  # a short terminal keeps room for the input and the status line
            with contextlib.suppress(Exception):  # no terminal to ask (a closed pty)
                rows = min(ROWS, max(repl.app.output.get_size().rows - 10, 3))
        out: StyleAndTextTuples = []
        for n, (line, chosen) in enumerate(picker.lines(width(), rows)):
            style = "class:picker.chosen" if chosen else "class:picker.title" if n == 0 else "class:picker"
            out += [(style, line), ("", "\n")]
        return out[:-1]

    return ConditionalContainer(
        Window(FormattedTextControl(text), dont_extend_height=True),
        filter=Condition(lambda: repl.state.picker is not None),
    )
