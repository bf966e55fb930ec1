"""Read, Write, Edit and Bash through an editor that lends its buffers and terminals (an ACP client): what
the editor holds, unsaved edits included, is what the tools see and change; the disk is the fallback."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, cast

import pytest

from sagent.sandbox.policy import SandboxPolicy
from sagent.tools import Bash, Edit, Read, Write
from sagent.tools.base import ToolContext, ToolError
from sagent.tools.editor import TerminalRun


class Buffers:
    """An editor with files open in memory, some never saved, and a terminal that runs bash itself."""

    def __init__(self, files: dict[Path, str], terminal: bool = False) -> None:
        self.files = dict(files)
        self.reads_files = True
        self.writes_files = True
        self.runs_commands = terminal
        self.commands: list[tuple[str, Path]] = []

    async def read_text(self, path: Path) -> str | None:
        return self.files.get(path)

    async def write_text(self, path: Path, content: str) -> None:
        self.files[path] = content

    async def run_command(self, command: str, cwd: Path, env: dict[str, str], timeout: float) -> TerminalRun:
        self.commands.append((command, cwd))
        proc = await asyncio.create_subprocess_exec(
            "bash", "-c", command, cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
        )
        out, _ = await proc.communicate()
        return TerminalRun(out.decode(), proc.returncode)


class Runtime:
    def __init__(self, editor: Buffers) -> None:
        self._editor = editor

    def editor(self) -> Buffers:
        return self._editor

    def accepts_images(self) -> bool:
        return False


def context(tmp_path: Path, editor: Buffers, sandbox: SandboxPolicy | None = None) -> ToolContext:
    ctx = ToolContext(cwd=tmp_path, runtime=cast(Any, Runtime(editor)))
    if sandbox is not None:
        ctx.sandbox = sandbox
    return ctx


async def test_read_sees_the_unsaved_buffer_not_the_disk(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("print('saved')\n")
    editor = Buffers({tmp_path / "app.py": "print('unsaved')\n", tmp_path / "new.py": "never saved\n"})
    ctx = context(tmp_path, editor)
    assert await Read().run({"path": "app.py"}, ctx) == "     1\tprint('unsaved')"
    assert await Read().run({"path": "new.py"}, ctx) == "     1\tnever saved"


async def test_edit_and_write_change_the_buffer_and_see_it_changed_since_read(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("x = 1\n")
    editor = Buffers({tmp_path / "app.py": "x = 2\n"})
    ctx = context(tmp_path, editor)
    with pytest.raises(ToolError, match="Read before you edit"):
        await Edit().run({"path": "app.py", "old_string": "x = 2", "new_string": "x = 3"}, ctx)
    await Read().run({"path": "app.py"}, ctx)
    out = await Edit().run({"path": "app.py", "old_string": "x = 2", "new_string": "x = 3"}, ctx)
    assert "-x = 2" in out and "+x = 3" in out
    assert editor.files[tmp_path / "app.py"] == "x = 3\n"
    assert (tmp_path / "app.py").read_text() == "x = 1\n"  # the editor saves when it will; sagent wrote no file
    editor.files[tmp_path / "app.py"] = "x = 4\n"  # the user typed in the buffer
    with pytest.raises(ToolError, match="changed in the editor since you read it"):
        await Write().run({"path": "app.py", "content": "y\n"}, ctx)
    created = await Write().run({"path": "fresh.py", "content": "a\n"}, ctx)
    assert created.startswith("created") and editor.files[tmp_path / "fresh.py"] == "a\n"
    assert not (tmp_path / "fresh.py").exists()


async def test_files_the_editor_does_not_have_come_from_the_disk(tmp_path: Path) -> None:
    (tmp_path / "disk.txt").write_text("on disk\n")
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01" * 10)
    ctx = context(tmp_path, Buffers({}))
    assert await Read().run({"path": "disk.txt"}, ctx) == "     1\ton disk"
    with pytest.raises(ToolError, match="binary file"):
        await Read().run({"path": "blob.bin"}, ctx)


async def test_bash_runs_in_the_editors_terminal_only_outside_the_sandbox(tmp_path: Path) -> None:
    editor = Buffers({}, terminal=True)
    ctx = context(tmp_path, editor, SandboxPolicy(mode="danger-full-access"))
    out = await Bash().run({"command": "mkdir -p sub && cd sub && echo hi && exit 3"}, ctx)
    assert out == "hi\nexit code 3"
    assert len(editor.commands) == 1 and "echo hi" in editor.commands[0][0]
    assert ctx.cwd == (tmp_path / "sub").resolve()  # a `cd` carries over, as at home
