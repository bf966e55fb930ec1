"""The task list block above the prompt, as text: one line an item, fitted to the width (wide characters
count two), a long list cut around the item in progress with a line saying what is left out."""

from __future__ import annotations

from sagent.repl.task_view import block
from sagent.repl.tool_view import cells
from sagent.tasks import TaskList, TodoItem


def lines(tasks: TaskList, width: int, rows: int = 10) -> list[str]:
    return "".join(text for _, text, *_ in block(tasks, width, rows)).split("\n")


def test_a_long_list_shows_the_item_in_progress_and_says_what_is_left_out() -> None:
    items = [TodoItem(f"step {n}", "completed" if n < 15 else "pending", f"doing {n}") for n in range(30)]
    items[15] = TodoItem("step 15", "in_progress", "doing 15")
    shown = lines(TaskList(tuple(items)), 80, rows=6)
    assert shown == [
        "  ☒ step 14",
        "  ◼ doing 15",
        "  ☐ step 16",
        "  ☐ step 17",
        "  ☐ step 18",
        "  … 14 done · 11 to do not shown",
    ]


def test_every_line_fits_a_narrow_terminal_wide_characters_too() -> None:
    tasks = TaskList(
        (
            TodoItem(
                "符号を直す",
                "in_progress",
                "修正中: 計算モジュールの足し算の符号を直してテストを走らせる",
            ),
            TodoItem("Run the whole test suite with coverage and report", "pending", "Running"),
        )
    )
    for width in (20, 33, 50):
        for line in lines(tasks, width):
            assert cells(line) <= width - 1 and line.endswith("…"), (width, line)


def test_a_short_list_is_shown_whole_with_no_trailing_line() -> None:
    tasks = TaskList((TodoItem("Fix it", "pending", "Fixing it"),))
    assert lines(tasks, 80) == ["  ☐ Fix it"]
