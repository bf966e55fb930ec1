"""The REPL's searchable list: every word typed narrows it, the selection stays in range and wraps."""

from __future__ import annotations

from sagent.repl.picker import Choice, Picker


def test_typing_filters_by_every_word_and_the_selection_follows() -> None:
    picked: list[str] = []
    choices = [Choice(n, f"{n} session", search=f"{n} 2026-11-2{i}") for i, n in enumerate(["alpha", "beta", "gamma"])]
    picker = Picker("Resume which?", choices, lambda value: picked.append(value) or None)
    assert [c.value for c in picker.filter("")] == ["alpha", "beta", "gamma"]
    picker.move(-1)
    assert picker.shown[picker.selected].value == "gamma"  # wraps round
    assert [c.value for c in picker.filter("2026 A")] == ["alpha", "beta", "gamma"]
    assert picker.selected == 0  # a new query starts from the top
    assert [c.value for c in picker.filter("gam 11-22")] == ["gamma"]
    assert picker.filter("nothing like it") == [] and picker.selected == 0
    lines = [text for _, text in picker.lines(40)]
    assert lines[0] == "Resume which?  (0 of 3, filtered)" and "nothing matches" in lines[1]


def test_long_lists_show_the_rows_around_the_selection_cut_to_the_width() -> None:
    choices = [Choice(n, f"row {n} " + "x" * 100) for n in range(30)]
    picker = Picker("Pick", choices, lambda value: None)
    picker.filter("")
    for _ in range(20):
        picker.move(1)
    rows = [text for style, text in picker.lines(50)[1:-1]]
    assert len(rows) == 10 and any(r.startswith("❯ row 20 ") for r in rows)
    assert all(len(r) <= 49 for r in rows)
