"""`sagent --resume` without an id: this directory's sessions in a list to search (type to filter by title,
id or date, Up/Down, Enter) before the REPL starts. Without a terminal to draw it on, a numbered list and
a question on stdin."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sagent.agent.session_list import ListedSession, listed_sessions
from sagent.cli.agent_setup import UsageError
from sagent.repl.picker import Picker, PickItem


def pick_session_path(cwd: Path) -> Path | None:
    """The session the user picks to resume; None when they cancel. UsageError when there is none."""
    rows = listed_sessions(cwd)
    if not rows:
        raise UsageError(f"no session to resume in {cwd}")
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        return _ask_by_number(rows[:20])
    from sagent.repl.session_commands import session_line

    choices = [PickItem(session_line(row), row.search_text, row) for row in rows]
    chosen = choose("Resume which session? (newest first; forks under their session)", choices)
    return chosen.info.path if chosen is not None else None


def choose(title: str, choices: Sequence[PickItem]) -> Any:
    """Let the user pick one of `choices` in the terminal: what they type filters the list, Up and Down
    move, Enter picks, Esc or Ctrl+C cancels (None)."""
    from prompt_toolkit.application import Application
    from prompt_toolkit.buffer import Buffer
    from prompt_toolkit.formatted_text import StyleAndTextTuples
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
    from prompt_toolkit.layout import HSplit, Layout, Window
    from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
    from prompt_toolkit.output import create_output

    picker = Picker(title, list(choices), lambda _: None)
    search = Buffer(multiline=False, on_text_changed=lambda buffer: picker.search(buffer.text))
    keys = KeyBindings()
    picked: list[Any] = []
    width = create_output().get_size().columns

    @keys.add("up")
    def _up(event: KeyPressEvent) -> None:
        picker.move(-1)

    @keys.add("down")
    def _down(event: KeyPressEvent) -> None:
        picker.move(1)

    @keys.add("enter")
    def _pick(event: KeyPressEvent) -> None:
        item = picker.chosen()
        if item is not None:
            picked.append(item.value)
            event.app.exit()

    @keys.add("escape")
    @keys.add("c-c")
    def _cancel(event: KeyPressEvent) -> None:
        event.app.exit()

    def rows() -> StyleAndTextTuples:
        out: StyleAndTextTuples = []
        for n, (line, chosen) in enumerate(picker.lines(width)):
            out += [("reverse" if chosen else "bold" if n == 0 else "", line), ("", "\n")]
        return out[:-1]

    def prompt(line: int, wrap: int) -> StyleAndTextTuples:
        return [("bold", "search: ")]

    layout = Layout(
        HSplit(
            [
                Window(BufferControl(search), height=1, get_line_prefix=prompt),
                Window(FormattedTextControl(rows), dont_extend_height=True),
            ]
        ),
        focused_element=search,
    )
    app: Application[None] = Application(layout=layout, key_bindings=keys, full_screen=False, erase_when_done=True)
    app.ttimeoutlen = 0.1  # Esc alone cancels at once
    app.run()
    return picked[0] if picked else None


def _ask_by_number(rows: list[ListedSession]) -> Path | None:
    from sagent.repl.commands import session_row

    print("Sessions in this directory (newest first):")
    for number, row in enumerate(rows, 1):
        print(session_row(number, row))
    while True:
        try:
            answer = input(f"Resume which? [1-{len(rows)}, Enter for 1, q to cancel] ").strip()
        except EOFError:
            return None
        if answer.lower() in ("q", "quit"):
            return None
        if not answer:
            return rows[0].info.path
        if answer.isdigit() and 1 <= int(answer) <= len(rows):
            return rows[int(answer) - 1].info.path
        print(f"type a number from 1 to {len(rows)}")
