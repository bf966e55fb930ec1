"""A terminal resize that leaves nothing stale behind.

The REPL draws its live area (the streaming paragraph, the spinner, the rule, the input, the status line)
below the scrollback, and on a resize prompt_toolkit erases it by moving the cursor up as many rows as it
drew, then draws it again. Two habits of terminals left the old drawing's top (a spinner line, the rule)
in the scrollback for good:

- A terminal that reflows its lines (tmux, VTE terminals, iTerm2, kitty, WezTerm, Windows Terminal...) has
  already split every row wider than its new width into several rows, so that move stops short.
  `ReflowingRenderer` counts the rows as the narrower terminal holds them and erases from the true top.
  A terminal that cuts long rows instead loses as many rows above the live area (lines already printed,
  which the session log and /output still hold).
- tmux takes an erase from the screen's top-left corner for a clear screen and keeps a copy of the screen
  in its scrollback; a resize often leaves the live area at the top. `LineErasingOutput` clears the rows
  one by one instead, which looks the same and keeps no copy.

What a terminal pushed into its own scrollback while it reflowed (a drastic shrink of a full screen) is
beyond any program's reach.
"""

from __future__ import annotations

from typing import Any

from prompt_toolkit.application import Application
from prompt_toolkit.data_structures import Point
from prompt_toolkit.layout import Layout
from prompt_toolkit.output.vt100 import Vt100_Output
from prompt_toolkit.renderer import Renderer


def reflowed_rows(widths: list[int], columns: int) -> int:
    """How many rows lines of these used widths take once a terminal `columns` wide reflows them."""
    columns = max(columns, 1)
    return sum(max(1, -(-width // columns)) for width in widths)


class ReflowingRenderer(Renderer):
    """prompt_toolkit's renderer, which first erases its last drawing as the terminal holds it when the
    terminal got narrower since: before a repaint at the new width (a resize's, or the spinner's tick that
    comes before the resize's signal) and before output is printed above the live area."""

    def render(self, app: Application[Any], layout: Layout, is_done: bool = False) -> None:
        self._erase_reflowed()
        super().render(app, layout, is_done)

    def erase(self, leave_alternate_screen: bool = True) -> None:
        self._erase_reflowed()
        super().erase(leave_alternate_screen)

    def _erase_reflowed(self) -> None:
        screen, has_style, cursor, last = (
            self.last_rendered_screen,
            self._style_string_has_style,
            self._cursor_pos,
            self._last_size,
        )
        if screen is None or has_style is None or last is None or (cursor.y <= 0 and cursor.x == 0):
            return
        columns = self.output.get_size().columns
        if columns >= last.columns:
            return  # nothing was split: prompt_toolkit's own erase is right
        widths = []
        for y in range(cursor.y):
            used = [x for x, cell in screen.data_buffer[y].items() if cell.char != " " or has_style[cell.style]]
            widths.append(min(max(used, default=-1) + 1, last.columns))
        up = reflowed_rows(widths, columns) + min(cursor.x, last.columns - 1) // max(columns, 1)
        self.output.write_raw("\r")
        self.output.cursor_up(up)
        self.output.erase_down()
        self.output.flush()
        self._cursor_pos = Point(x=0, y=0)  # prompt_toolkit's own erase or redraw starts from here


class LineErasingOutput(Vt100_Output):
    """A VT100 terminal output whose "erase below" clears the rows one by one, so that tmux never takes it
    for a clear screen to copy into its scrollback (a copy of the spinner at every repaint otherwise)."""

    def erase_down(self) -> None:
        # The renderer erases from column 0 (of the row its drawing starts on), so the first row goes whole.
        rows = self.get_size().rows
        self.write_raw("\x1b7" + "\x1b[2K\x1b[B" * rows + "\x1b8")  # save, clear each row down, restore


class ReplApplication(Application[None]):
    """The REPL's prompt_toolkit application, drawn by a `ReflowingRenderer` on a `LineErasingOutput`."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        if type(self.output) is Vt100_Output:
            self.output.__class__ = LineErasingOutput  # the same terminal, only its erase replaced
        self.renderer = ReflowingRenderer(  # as Application builds its own, which nothing has used yet
            self._merged_style,
            self.output,
            full_screen=self.full_screen,
            mouse_support=self.mouse_support,
            cpr_not_supported_callback=self.cpr_not_supported_callback,
        )
