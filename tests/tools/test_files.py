"""Read, Write and Edit on real files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sagent.tools import Edit, Read, Write
from sagent.tools.base import ToolContext, ToolError


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


async def test_read_numbers_lines_windows_and_cuts_long_lines(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("\n".join(f"line {i}" for i in range(1, 11)) + "\n" + "x" * 2500 + "\n")
    out = await Read().run({"path": "a.txt", "offset": 3, "limit": 2}, ctx)
    assert out.splitlines()[:2] == ["     3\tline 3", "     4\tline 4"]
    assert "Read with offset=5" in out
    tail = await Read().run({"path": "a.txt", "offset": 11}, ctx)
    assert "[… 500 more characters]" in tail and "more lines" not in tail


async def test_read_pages_a_file_too_big_for_the_context(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "wide.txt").write_text("\n".join(f"{i} " + "y" * 1500 for i in range(1, 101)) + "\n")
    first = await Read().run({"path": "wide.txt"}, ctx)
    lines = first.splitlines()
    assert len(first) < 30_000 and lines[-1].startswith("[") and "more lines: Read with offset=" in lines[-1]
    go_on = int(lines[-1].split("offset=")[1].split()[0])
    assert lines[-2].startswith(f"{go_on - 1:>6}\t")  # it stops at a whole line, and says where it stopped
    second = await Read().run({"path": "wide.txt", "offset": go_on}, ctx)
    assert second.startswith(f"{go_on:>6}\t{go_on} y")


async def test_read_errors_say_what_to_do(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "main.py").write_text("x\n")
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01" * 100)
    (tmp_path / "sub").mkdir()
    with pytest.raises(ToolError, match=r"did you mean: main\.py"):
        await Read().run({"path": "mian.py"}, ctx)
    with pytest.raises(ToolError, match="directory; use List"):
        await Read().run({"path": "sub"}, ctx)
    with pytest.raises(ToolError, match="binary file"):
        await Read().run({"path": "blob.bin"}, ctx)


async def test_write_creates_but_overwrites_only_what_was_read_and_unchanged(ctx: ToolContext, tmp_path: Path) -> None:
    out = await Write().run({"path": "new/dir/f.py", "content": "a\nb\n"}, ctx)
    assert out.startswith("created") and (tmp_path / "new/dir/f.py").read_text() == "a\nb\n"
    (tmp_path / "old.py").write_text("old\n")
    with pytest.raises(ToolError, match="Read before you overwrite"):
        await Write().run({"path": "old.py", "content": "new"}, ctx)
    await Read().run({"path": "old.py"}, ctx)
    (tmp_path / "old.py").write_text("changed by someone else\n")
    os.utime(tmp_path / "old.py", ns=(1, 1))
    with pytest.raises(ToolError, match="changed on disk"):
        await Write().run({"path": "old.py", "content": "new"}, ctx)
    await Read().run({"path": "old.py"}, ctx)
    await Write().run({"path": "old.py", "content": "mine\n"}, ctx)
    assert (tmp_path / "old.py").read_text() == "mine\n"


async def test_edit_replaces_a_unique_match_and_shows_a_diff(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "calc.py"
    f.write_text("def add(a, b):\n    return a - b\n\ndef sub(a, b):\n    return a - b\n")
    await Read().run({"path": "calc.py"}, ctx)
    with pytest.raises(ToolError, match="occurs 2 times"):
        await Edit().run({"path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"}, ctx)
    out = await Edit().run(
        {"path": "calc.py", "old_string": "add(a, b):\n    return a - b", "new_string": "add(a, b):\n    return a + b"},
        ctx,
    )
    assert "-    return a - b" in out and "+    return a + b" in out
    assert f.read_text().count("a + b") == 1
    # A second edit works without reading again: the tool's own write updated the stamp.
    await Edit().run({"path": "calc.py", "old_string": "a - b", "new_string": "b - a", "replace_all": True}, ctx)
    assert "b - a" in f.read_text()


async def test_edit_without_a_match_names_the_closest_lines(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("import os\n\ndef main():\n    print('hello world')\n")
    await Read().run({"path": "m.py"}, ctx)
    with pytest.raises(ToolError) as info:
        await Edit().run({"path": "m.py", "old_string": "print('hello wrld')", "new_string": "x"}, ctx)
    assert "closest lines" in str(info.value) and "4\t    print('hello world')" in str(info.value)
    (tmp_path / "other.py").write_text("a\n")
    with pytest.raises(ToolError, match="Read before you edit"):
        await Edit().run({"path": "other.py", "old_string": "a", "new_string": "b"}, ToolContext(cwd=tmp_path))


def test_file_tools_name_their_resource(ctx: ToolContext, tmp_path: Path) -> None:
    assert Read().resource({"path": "./a/../b.py"}, ctx) == str((tmp_path / "b.py").resolve())
    assert Edit().resource({"path": str(tmp_path / "b.py")}, ctx) == str((tmp_path / "b.py").resolve())
