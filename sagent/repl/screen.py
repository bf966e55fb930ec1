"""The prompt_toolkit widgets and keys of the REPL's live area; the logic they call is the `ReplHost`'s
(the `Repl` in app.py, which builds this screen: this module never imports app.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from prompt_toolkit.application import Application
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.completion import CompleteEvent, Completer, Completion, merge_completers
from prompt_toolkit.data_structures import Size
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition, has_completions
from prompt_toolkit.formatted_text import ANSI, StyleAndTextTuples
from prompt_toolkit.history import FileHistory, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import ConditionalContainer, Float, FloatContainer, HSplit, Layout, Window
from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
from prompt_toolkit.layout.dimension import Dimension
from prompt_toolkit.layout.menus import CompletionsMenu
from prompt_toolkit.styles import Style

from sagent.repl import approval, escape, mentions, picker, shell_mode, stopping, task_view, tool_output
from sagent.repl.commands import COMMANDS, argument_choices, custom_commands
from sagent.repl.liveness import spinner_line
from sagent.repl.resize import ReplApplication

if TYPE_CHECKING:
    from sagent.repl.host import ReplHost

STYLE = Style.from_dict(
    {
        "status": "reverse",
        "rule": "fg:ansibrightblack",
        "prompt": "bold",
        "note": "fg:ansiyellow",
        "queued": "fg:ansicyan",
        "agents": "fg:ansimagenta",
        "spinner": "fg:ansicyan",
        "picker.title": "bold",
        "picker.chosen": "reverse",
    }
)


class SlashCompleter(Completer):
    """Completes command names after `/`, and the arguments of the commands that take known names."""

    def __init__(self, repl: ReplHost) -> None:
        self.repl = repl

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        text = document.text_before_cursor
        if not text.startswith("/") or "\n" in text:
            return
        if " " not in text:
            for name, command in COMMANDS.items():
                if name.startswith(text[1:]):
                    yield Completion("/" + name, start_position=-len(text), display_meta=command.summary)
            custom, _ = custom_commands(self.repl)
            for name, found in custom.items():
                if name.startswith(text[1:]) and name not in COMMANDS:
                    yield Completion("/" + name, start_position=-len(text), display_meta=found.summary())
            return
        name, _, arg = text[1:].partition(" ")
        for choice in argument_choices(self.repl, name):
            if choice.startswith(arg):
                yield Completion(choice, start_position=-len(arg))


def build_application(repl: ReplHost) -> tuple[Application[None], Buffer]:
    history = FileHistory(str(repl.history_file)) if repl.history_file else InMemoryHistory()
    buffer = Buffer(
        multiline=True,
        history=history,
        completer=merge_completers([SlashCompleter(repl), mentions.mention_completer(repl)]),
        complete_while_typing=True,
        enable_history_search=False,
    )
    busy = Condition(lambda: repl.busy)
    empty = Condition(lambda: not buffer.text)
    keys = KeyBindings()

    @keys.add("enter", filter=~has_completions)
    def _send(event: KeyPressEvent) -> None:
        _submit(repl, buffer, defer=False)

    @keys.add("enter", filter=has_completions)
    def _accept_completion(event: KeyPressEvent) -> None:
        state = buffer.complete_state
        if state and state.current_completion:
            buffer.apply_completion(state.current_completion)
        else:
            buffer.cancel_completion()
            _submit(repl, buffer, defer=False)

    @keys.add("tab", filter=busy & ~has_completions & Condition(lambda: not buffer.text.startswith("/")))
    def _defer(event: KeyPressEvent) -> None:
        _submit(repl, buffer, defer=True)

    @keys.add("escape", "enter")
    def _newline(event: KeyPressEvent) -> None:
        buffer.insert_text("\n")

    @keys.add("escape", filter=busy)
    def _interrupt(event: KeyPressEvent) -> None:
        stopping.stop_work(repl, buffer)

    @keys.add("c-c")
    def _ctrl_c(event: KeyPressEvent) -> None:
        stopping.ctrl_c(repl, buffer)

    @keys.add("c-d", filter=empty)
    def _eof(event: KeyPressEvent) -> None:
        repl.quit()

    @keys.add("up", filter=empty & Condition(lambda: bool(repl.state.queued)))
    def _pull_back(event: KeyPressEvent) -> None:
        text = repl.pull_back()
        if text is not None:
            buffer.text = text
            buffer.cursor_position = len(text)
        repl.refresh()

    @keys.add("c-b", filter=busy)
    def _to_background(event: KeyPressEvent) -> None:
        repl.agent.background()
        repl.state.note = "running tool calls moved to the background; /jobs lists them"

    @keys.add("c-x", "c-e")
    def _editor(event: KeyPressEvent) -> None:
        buffer.open_in_editor(validate_and_handle=False)

    approval.add_keys(keys, repl, buffer)
    tool_output.add_keys(keys, repl)
    task_view.add_keys(keys, repl)  # Ctrl+T hides or shows the task list
    mentions.add_keys(keys, repl, buffer)  # a pasted path becomes an @mention
    shell_mode.add_keys(keys, repl)  # Esc cancels a running !command
    picker.add_keys(keys, repl, buffer)  # its keys win while a list is open
    escape.add_keys(keys, repl, buffer)  # after every Esc key: Esc acts at once, keys typed after it arrive whole

    def prompt_prefix(line: int, wrap: int) -> StyleAndTextTuples:
        if line == 0 and wrap == 0:
            return [("class:prompt", "⋯ " if repl.busy else "› ")]
        return [("", "  ")]

    def live() -> ANSI:
        size = _size(repl)
        repl.settings.width = size.columns  # a resize reflows what is committed from now on
        return ANSI(repl.live_text(size.rows))

    def note() -> StyleAndTextTuples:
        return [("class:note", " " + repl.state.note)] if repl.state.note else []

    body = HSplit(
        [
            Window(FormattedTextControl(live), wrap_lines=True, dont_extend_height=True),
            ConditionalContainer(
                Window(FormattedTextControl(lambda: [("class:agents", repl.agents_text())]), dont_extend_height=True),
                filter=Condition(lambda: bool(repl.agents_text())),
            ),
            ConditionalContainer(
                Window(FormattedTextControl(lambda: [("class:queued", repl.queued_text())]), dont_extend_height=True),
                filter=Condition(lambda: bool(repl.state.queued)),
            ),
            approval.question_window(repl),
            ConditionalContainer(
                Window(FormattedTextControl(lambda: [("class:spinner", spinner_line(repl))]), height=1),
                filter=busy,
            ),
            task_view.task_window(repl, lambda: _size(repl)),
            shell_mode.status_window(repl),
            picker.picker_window(repl, lambda: repl.settings.width),
            Window(height=1, char="─", style="class:rule"),
            Window(
                BufferControl(buffer=buffer),
                height=lambda: _input_height(buffer),
                dont_extend_height=True,
                wrap_lines=True,
                get_line_prefix=prompt_prefix,
            ),
            ConditionalContainer(
                Window(FormattedTextControl(note), height=1), filter=Condition(lambda: bool(repl.state.note))
            ),
            Window(FormattedTextControl(lambda: [("class:status", status_line(repl))]), height=1),
        ]
    )
    menu = CompletionsMenu(max_height=MENU_ROWS)
    root = FloatContainer(body, floats=[Float(xcursor=True, ycursor=True, content=menu)])
    app: Application[None] = ReplApplication(  # a resize leaves no stale copy of the live area behind
        layout=Layout(root, focused_element=buffer),
        key_bindings=keys,
        style=STYLE,
        full_screen=False,
        mouse_support=False,
        min_redraw_interval=0.016,
        erase_when_done=False,
    )
    app.ttimeoutlen = 0.1  # how long Esc waits to be sure it is not Alt+key
    buffer.on_text_changed += lambda _: _clear_note(repl)
    return app, buffer


def _submit(repl: ReplHost, buffer: Buffer, defer: bool) -> None:
    text = buffer.text
    if text.strip():
        buffer.append_to_history()
    buffer.reset()
    repl.state.note = ""
    repl.submit(text, defer=defer)


MENU_ROWS = 8
"""The completion menu's height; the input box reserves that room under the cursor while the menu is open."""


def _input_height(buffer: Buffer) -> Dimension:
    """The input box's height: its lines (up to 12), and while completions are offered, room under the
    cursor for the menu, so it keeps its rows when the screen is full instead of shrinking to fit the
    lines left below the input."""
    state = buffer.complete_state
    if state is None or not state.completions:
        return Dimension(min=1, max=12)
    row = buffer.document.cursor_position_row
    room = row + 1 + min(len(state.completions), MENU_ROWS)
    return Dimension(min=min(room, 12 + MENU_ROWS), max=max(12, room))


def _clear_note(repl: ReplHost) -> None:
    if repl.state.note:
        repl.state.note = ""


def status_line(repl: ReplHost) -> str:
    """The status line, padded, fitted to the terminal's width now (a resize refits it at once)."""
    return " " + repl.status_text(_size(repl).columns) + " "


def _size(repl: ReplHost) -> Size:
    if repl.app is None:
        return Size(rows=24, columns=repl.settings.width)
    try:
        return repl.app.output.get_size()
    except Exception:  # no terminal to ask (tests, a closed pty)
        return Size(rows=24, columns=repl.settings.width)
