"""The main agent's task list (TodoWrite) as a block above the REPL's prompt, Ctrl+T to hide or show it,
and `/tasks` to print it.

    ☒ Read the failing test          (done: dimmed, struck through)
    ◼ Fixing the sign in add()       (in progress: its activeForm, highlighted)
    ☐ Run the tests                  (to do)

The block reads the agent's list each time the screen is painted, so it follows every TodoWrite call as
the agent makes it (each event repaints). It shows while some item is not done, and a finished list until
the turn that finished it is over (later turns leave it hidden until the model writes a new one). Each
item keeps to one line, cut to the terminal's width; a list taller than the room it has shows the item in
progress with the items around it, and says how many are left out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.utils import get_cwidth

from sagent.repl.commands import command
from sagent.tasks import TaskList, TodoItem

if TYPE_CHECKING:
    from collections.abc import Callable

    from prompt_toolkit.data_structures import Size
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.layout import Container

    from sagent.repl.host import ReplHost

MAX_ROWS = 10
"""The most lines the block takes, however long the list: the prompt stays in sight."""

MARKS = {"completed": "☒", "in_progress": "◼", "pending": "☐"}
STYLES = {"completed": "fg:ansibrightblack strike", "in_progress": "bold fg:ansicyan", "pending": ""}


def shown(host: ReplHost) -> bool:
    """Whether the block is on the screen: there is a list, the user has not hidden it, and some item is
    not done, or the agent is still at work on the turn that finished the list."""
    tasks = host.agent.task_list
    if not tasks or host.state.tasks_hidden:
        return False
    if not tasks.finished:
        return True
    if not host.busy:
        host.state.tasks_done = tasks  # seen finished when a turn was over: a later turn does not bring it back
        return False
    return tasks is not host.state.tasks_done


def room(rows: int) -> int:
    """The most lines the block takes in a terminal of `rows` lines: a third of it, at most `MAX_ROWS`."""
    return min(MAX_ROWS, max(rows // 3, 2))


def height(host: ReplHost, rows: int) -> int:
    """The lines the block takes now in a terminal of `rows` lines (0 when it is not shown), which the
    live area above it leaves free."""
    return min(len(host.agent.task_list), room(rows)) if shown(host) else 0


def block(tasks: TaskList, width: int, rows: int = MAX_ROWS) -> StyleAndTextTuples:
    """The list as styled lines, each cut to `width` columns, at most `rows` lines."""
    items = list(tasks.items)
    rows = max(rows, 2)
    start, end = 0, len(items)
    if len(items) > rows:
        room = rows - 1  # one line says what is left out
        focus = next((n for n, i in enumerate(items) if i.status != "completed"), len(items) - 1)
        start = max(0, min(focus - 1, len(items) - room))
        end = start + room
    out: StyleAndTextTuples = []
    for item in items[start:end]:
        out += [(STYLES[item.status], _line(item, width)), ("", "\n")]
    left = [*items[:start], *items[end:]]
    if left:
        done = sum(1 for i in left if i.status == "completed")
        words = [f"{done} done" if done else "", f"{len(left) - done} to do" if len(left) > done else ""]
        out.append(("fg:ansibrightblack", _cut(f"  … {' · '.join(w for w in words if w)} not shown", width)))
    elif out:
        out.pop()  # no newline after the last line
    return out


def _line(item: TodoItem, width: int) -> str:
    text = item.active_form if item.status == "in_progress" else item.content
    return _cut(f"  {MARKS[item.status]} {text}", width)


def _cut(text: str, width: int) -> str:
    """`text` in at most `width - 1` terminal columns (wide characters count two), cut with an ellipsis."""
    width = max(width - 1, 8)  # the last column left free: a full line would wrap on some terminals
    if get_cwidth(text) <= width:
        return text
    used, kept = 1, []
    for char in text:
        used += get_cwidth(char)
        if used > width:
            break
        kept.append(char)
    return "".join(kept) + "…"


def task_window(host: ReplHost, size: Callable[[], Size]) -> Container:
    """The block, for the screen's layout; `size()` is the terminal's size now."""
    from prompt_toolkit.filters import Condition
    from prompt_toolkit.layout import ConditionalContainer, Window
    from prompt_toolkit.layout.controls import FormattedTextControl

    def text() -> StyleAndTextTuples:
        now = size()
        return block(host.agent.task_list, now.columns, room(now.rows))

    return ConditionalContainer(
        Window(FormattedTextControl(text), dont_extend_height=True, wrap_lines=False),
        filter=Condition(lambda: shown(host)),
    )


def toggle(host: ReplHost) -> None:
    """Ctrl+T: hide the block, or show it again."""
    if not host.agent.task_list:
        host.state.note = "no task list yet: the model keeps one (TodoWrite) for work of several steps"
    else:
        host.state.tasks_hidden = not host.state.tasks_hidden
        host.state.note = "task list hidden: Ctrl+T shows it, /tasks prints it" if host.state.tasks_hidden else ""
    host.refresh()


def add_keys(keys: KeyBindings, host: ReplHost) -> None:
    """Bind Ctrl+T."""

    @keys.add("c-t")
    def _toggle(event: object) -> None:
        toggle(host)


@command("tasks", "print the task list the model keeps (Ctrl+T hides or shows it above the prompt)")
def _tasks(host: ReplHost, arg: str) -> list[str]:
    tasks = host.agent.task_list
    if not tasks:
        return [host.renderer.c("dim", "no task list: the model keeps one (TodoWrite) for work of several steps")]
    lines = [host.renderer.c("bold", f"Task list: {tasks.line()}")]
    for item in tasks.items:
        line = f"  {MARKS[item.status]} {item.content}"
        lines.append(host.renderer.c("dim", line) if item.status == "completed" else line)
    return lines
