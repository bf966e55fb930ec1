"""The REPL's searchable list: every word typed narrows it, the chosen row stays in range, long lists
scroll and every line fits the width."""

from __future__ import annotations

from sagent.repl.picker import Picker, PickItem


def test_typing_filters_by_every_word_and_the_chosen_row_follows() -> None:
    items = [PickItem(f"{n} session", f"{n} 2026-11-2{i}", n) for i, n in enumerate(["alpha", "beta", "gamma"])]
    picker = Picker("Resume which?", items, lambda value: None)
    assert [i.value for i in picker.matches()] == ["alpha", "beta", "gamma"]
    picker.move(5)
    assert picker.chosen() == items[2]  # it stops at the end
    picker.search("2026 A")
    assert [i.value for i in picker.matches()] == ["alpha", "beta", "gamma"] and picker.index == 0
    picker.search("gam 11-22")
    assert [i.value for i in picker.matches()] == ["gamma"]
    picker.search("nothing like it")
    assert picker.matches() == [] and picker.chosen() is None
    assert "nothing matches" in picker.text(40)


def test_long_lists_show_the_rows_around_the_chosen_one_cut_to_the_width() -> None:
    picker = Picker("Pick", [PickItem(f"row {n} " + "x" * 100, str(n), n) for n in range(30)], lambda value: None)
    picker.move(20)
    lines = picker.lines(50)
    rows = [line for line, _ in lines if line.startswith(("› row", "  row"))]
    assert len(rows) == 10 and next(line for line, chosen in lines if chosen).startswith("› row 20 ")
    assert all(len(line) <= 49 for line, _ in lines)
