"""Tool lines that fit the terminal, hidden output labelled and expandable, edit diffs with context."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sagent.agent.agent import Agent
from sagent.events import ToolFinished, ToolStarted
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.repl import tool_view
from sagent.repl.render import Renderer, Settings
from sagent.tools import builtin_tools
from sagent.types import ToolCall, ToolResult

ANSI = re.compile(r"\x1b\[[0-9;]*m")
LONG_COMMAND = "cd /srv/projects/inventory && ./scripts/rebuild-everything.sh --with-tests --verbose --no-cache"
LONG_OUTPUT = "Compiling inventory-service v0.3.1 (/srv/projects/inventory/service) with profile release\n" + "\n".join(
    f"line {n}" for n in range(7)
)


@pytest.mark.parametrize("width", [40, 80, 120])
def test_a_long_tool_line_fits_the_width_cut_with_an_ellipsis(width: int) -> None:
    call = ToolCall("c1", "Bash", {"command": LONG_COMMAND})
    renderer = Renderer(Settings(width=width, color=True))
    renderer.feed(ToolStarted(call))
    assert tool_view.cells(ANSI.sub("", renderer.live())) <= width - 1  # the running line too
    (line,) = renderer.feed(ToolFinished(ToolResult.of(call, LONG_OUTPUT), 2300.0))
    plain = ANSI.sub("", line)
    assert "\n" not in plain and tool_view.cells(plain) <= width - 1
    assert plain.startswith("✓ Bash(cd ") and " 2.3s" in plain
    assert plain.endswith("+7 lines hidden (ctrl+o)" if width > 40 else "+7 lines hidden")  # kept whole
    assert "…" in plain


def test_a_short_line_is_left_whole_and_single_line_output_hides_nothing() -> None:
    fitted = tool_view.fit_tool_line("Read", "notes.txt", "3ms", "3 lines", "", 80)
    assert fitted.plain() == "✓ Read(notes.txt) 3ms · 3 lines"


def test_wide_characters_count_twice() -> None:
    assert tool_view.cells("日本") == 4
    clipped = tool_view.clip("日本語のテキストです", 9)
    assert clipped.endswith("…") and tool_view.cells(clipped) <= 9
    fitted = tool_view.fit_tool_line("Read", "資料/説明書/とても長いファイルの名前.md", "1ms", "内容" * 30, "", 40)
    assert tool_view.cells(fitted.plain()) <= 39


def test_the_hidden_label_reads_as_hidden_output() -> None:
    assert tool_view.hidden_label(1) == "+1 line hidden (ctrl+o)"
    assert tool_view.hidden_label(7) == "+7 lines hidden (ctrl+o)"


def test_ctrl_o_shows_the_hidden_output_of_recent_calls_then_everything_in_full() -> None:
    renderer = Renderer(Settings(width=80, color=False))
    call = ToolCall("c1", "Bash", {"command": "seq 1 5"})
    renderer.feed(ToolStarted(call))
    renderer.feed(ToolFinished(ToolResult.of(call, "1\n2\n3\n4\n5"), 5.0))
    quiet = ToolCall("c2", "Bash", {"command": "true"})
    renderer.feed(ToolStarted(quiet))
    renderer.feed(ToolFinished(ToolResult.of(quiet, "ok"), 5.0))
    shown = renderer.outputs.toggle()
    assert [o.head for o in shown] == ["✓ Bash(seq 1 5)"]  # the call with hidden lines, not the other
    assert tool_view.output_lines(shown[0]) == ["  1", "  2", "  3", "  4", "  5"]
    assert renderer.outputs.toggle() == [] and not renderer.outputs.expanded
    assert renderer.outputs.toggle() == []  # shown already: not printed twice
    renderer.settings.expand_tools = True
    renderer.feed(ToolStarted(call))
    (block,) = renderer.feed(ToolFinished(ToolResult.of(call, "1\n2\n3"), 5.0))
    assert block.splitlines() == ["✓ Bash(seq 1 5) 5ms · 1", "  1", "  2", "  3"]


def test_expanded_output_is_capped_with_a_note() -> None:
    output = tool_view.ToolOutput("✓ Read(big)", "\n".join(str(n) for n in range(500)), False)
    lines = tool_view.output_lines(output, limit=10)
    assert len(lines) == 11 and lines[-1] == "  … 490 more lines (/output pages all of it)"


async def test_an_edit_shows_the_files_lines_around_the_change_with_their_numbers(tmp_path: Path) -> None:
    source = "\n".join(f"line {n}" for n in range(1, 21)) + "\n"
    (tmp_path / "f.txt").write_text(source)
    steps = [
        tool_turn(("Read", {"path": "f.txt"})),
        tool_turn(("Edit", {"path": "f.txt", "old_string": "line 10\n", "new_string": "line ten\n"})),
        text_turn("done"),
    ]
    agent = Agent(ScriptedModel(steps), tools=builtin_tools(), cwd=tmp_path)
    renderer = Renderer(Settings(width=80, color=False))
    out = [block for event in [e async for e in agent.run("go")] for block in renderer.feed(event)]
    edit = next(block for block in out if block.startswith("✓ Edit(f.txt)"))
    head, *diff = edit.splitlines()
    assert "hidden" not in head  # the diff is the output: nothing is hidden
    assert diff == [
        "   8  line 8",
        "   9  line 9",
        "  10 -line 10",
        "  10 +line ten",
        "  11  line 11",
        "  12  line 12",
    ]


def test_separate_hunks_are_marked_and_long_diff_lines_are_cut() -> None:
    text = (
        "edited f (1 replacement)\n--- f\n+++ f\n@@ -1,2 +1,2 @@\n-a\n+b\n c\n@@ -40,1 +40,1 @@\n-" + "x" * 200 + "\n+y"
    )
    rows = tool_view.diff_rows(text)
    assert [r.kind for r in rows] == ["-", "+", " ", "…", "-", "+"]
    assert rows[4].number == 40
    long = tool_view.diff_text(rows[4], 2, 80)
    assert long.endswith("…") and tool_view.cells(long) <= 79


def test_a_diff_of_two_snippets_has_context_but_no_line_numbers() -> None:
    renderer = Renderer(Settings(width=80, color=False))
    old = "a\nb\nc\nd\ne\nf\n"
    new = "a\nb\nc\nD\ne\nf\n"
    assert renderer.diff(old, new).splitlines() == ["   b", "   c", "  -d", "  +D", "   e", "   f"]


def test_an_edit_asking_for_approval_previews_the_files_lines_with_their_numbers(tmp_path: Path) -> None:
    from sagent.repl.approval import describe

    (tmp_path / "f.txt").write_text("".join(f"line {n}\n" for n in range(1, 21)))
    renderer = Renderer(Settings(width=80, color=False))
    edit = ToolCall("c1", "Edit", {"path": "f.txt", "old_string": "line 10\n", "new_string": "line ten\n"})
    head, *diff = describe(edit, str(tmp_path), renderer.diff).splitlines()
    assert head.endswith("f.txt") and diff[2:4] == ["  10 -line 10", "  10 +line ten"]
    assert diff[0] == "   8  line 8" and diff[-1] == "  12  line 12"
    missing = ToolCall("c2", "Edit", {"path": "f.txt", "old_string": "no such line", "new_string": "x"})
    assert describe(missing, str(tmp_path), renderer.diff).splitlines()[1:] == ["  -no such line", "  +x"]
    write = ToolCall("c3", "Write", {"path": "new.txt", "content": "a\nb\n"})
    assert describe(write, str(tmp_path), renderer.diff).splitlines()[1:] == ["  1 +a", "  2 +b"]


def test_an_indentation_only_change_keeps_its_indentation_in_the_diff(tmp_path: Path) -> None:
    from sagent.repl.approval import describe

    (tmp_path / "f.py").write_text("def f():\n  return 1\n")
    renderer = Renderer(Settings(width=80, color=False))
    edit = ToolCall("c1", "Edit", {"path": "f.py", "old_string": "  return 1", "new_string": "    return 1"})
    _, *diff = describe(edit, str(tmp_path), renderer.diff).splitlines()
    assert diff == ["  1  def f():", "  2 -  return 1", "  2 +    return 1"]
    result = ToolResult("c1", "Edit", ())
    shown = renderer.edit_diff(edit, result).splitlines()
    assert shown == ["  -  return 1", "  +    return 1"]


def test_a_change_of_tabs_or_trailing_spaces_alone_shows_the_whitespace() -> None:
    renderer = Renderer(Settings(width=80, color=False))
    tabs = renderer.diff("if x:\n\tgo()\n", "if x:\n    go()\n").splitlines()
    assert tabs == ["   if x:", "  -→   go()", "  +    go()"]
    trailing = renderer.diff("a = 1  \nb = 2\n", "a = 1\nb = 2\n").splitlines()
    assert trailing == ["  -a = 1··", "  +a = 1", "   b = 2"]
    # A line whose change is more than whitespace keeps its tabs as spaces: nothing to point out.
    words = renderer.diff("\tgo()\n", "\tstop()\n").splitlines()
    assert words == ["  -    go()", "  +    stop()"]
