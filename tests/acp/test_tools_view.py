"""How sagent's tool calls look to an editor: kinds, titles, locations, diffs and plans (no process)."""

from __future__ import annotations

from pathlib import Path

from sagent.acp.tools_view import diff_of, kind_of, locations_of, plan_entries, title_of
from sagent.types import ToolCall


def call(name: str, **arguments: object) -> ToolCall:
    return ToolCall(id="c1", name=name, arguments=dict(arguments))


def test_every_built_in_tool_has_the_kind_an_editor_shows() -> None:
    kinds = {
        name: kind_of(name)
        for name in ("Read", "List", "Glob", "Grep", "Edit", "Write", "Bash", "WebFetch", "WebSearch", "AgentSpawn")
    }
    assert kinds == {
        "Read": "read",
        "List": "read",
        "Glob": "search",
        "Grep": "search",
        "Edit": "edit",
        "Write": "edit",
        "Bash": "execute",
        "WebFetch": "fetch",
        "WebSearch": "fetch",
        "AgentSpawn": "think",
    }
    assert kind_of("ExitPlanMode") == "switch_mode"
    assert kind_of("mcp__github__create_issue") == "other" and kind_of("AgentSend") == "other"


def test_titles_say_what_and_to_what(tmp_path: Path) -> None:
    cwd = str(tmp_path)
    assert title_of(call("Read", path="src/app.py"), cwd) == "Read src/app.py"
    assert title_of(call("Read", path="/etc/hosts"), cwd) == "Read /etc/hosts"
    assert title_of(call("Bash", command="pytest -q  tests"), cwd) == "`pytest -q tests`"
    assert title_of(call("Bash", command="make", description="Build the docs"), cwd) == "Build the docs"
    assert title_of(call("Grep", pattern="TODO", path="src"), cwd) == "Grep TODO in src"
    assert title_of(call("WebFetch", url="https://example.org/a"), cwd) == "Fetch https://example.org/a"
    assert title_of(call("mcp__github__create_issue", title="x"), cwd) == "create_issue (github)"


def test_locations_are_absolute_with_the_line_a_read_starts_at(tmp_path: Path) -> None:
    cwd = str(tmp_path)
    [read] = locations_of(call("Read", path="a.py", offset=40), cwd)
    assert (read.path, read.line) == (str(tmp_path / "a.py"), 40)
    [edit] = locations_of(call("Edit", path="../b.py", old_string="x", new_string="y"), cwd)
    assert (edit.path, edit.line) == (str(tmp_path.parent / "b.py"), None)
    assert locations_of(call("Bash", command="ls"), cwd) == []


async def test_diffs_show_the_whole_file_before_and_after(tmp_path: Path) -> None:
    files = {tmp_path / "a.py": "one\ntwo\nthree\n"}

    async def read(path: Path) -> str | None:
        return files.get(path)

    cwd = str(tmp_path)
    [edit] = await diff_of(call("Edit", path="a.py", old_string="two", new_string="2"), cwd, read)
    assert (edit.path, edit.old_text, edit.new_text) == (str(tmp_path / "a.py"), "one\ntwo\nthree\n", "one\n2\nthree\n")
    [new] = await diff_of(call("Write", path="b.py", content="fresh\n"), cwd, read)
    assert (new.old_text, new.new_text) == (None, "fresh\n")  # a new file
    [missing] = await diff_of(call("Edit", path="a.py", old_string="four", new_string="4"), cwd, read)
    assert (missing.old_text, missing.new_text) == ("four", "4")  # it will fail: the edit's own strings
    assert await diff_of(call("Read", path="a.py"), cwd, read) == []


def test_a_plans_list_items_are_its_entries() -> None:
    plan = "# Plan\n\n1. Read the tests\n2. Fix `add`\n- [ ] Run them again\n\nNotes follow."
    entries = plan_entries(call("ExitPlanMode", plan=plan))
    assert [e.content for e in entries] == ["Read the tests", "Fix `add`", "Run them again"]
    assert {e.status for e in entries} == {"pending"}
    assert [e.content for e in plan_entries(call("ExitPlanMode", plan="Just do it"))] == ["Just do it"]
