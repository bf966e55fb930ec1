"""Glob, Grep, List and Bash."""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from pathlib import Path

import pytest

from sagent.sandbox import OFF
from sagent.tools import Bash, Glob, Grep, List
from sagent.tools import search as search_module
from sagent.tools.base import ToolContext, ToolError


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / ".gitignore").write_text("build/\n*.log\n!keep.log\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("def main():\n    return 'TODO: main'\n")
    (tmp_path / "src" / "util.py").write_text("# todo later\nVALUE = 1\n")
    (tmp_path / "src" / ".gitignore").write_text("secret.py\n")
    (tmp_path / "src" / "secret.py").write_text("TODO hidden\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "out.py").write_text("TODO built\n")
    (tmp_path / "debug.log").write_text("TODO log\n")
    (tmp_path / "keep.log").write_text("TODO kept\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("TODO git\n")
    return tmp_path


async def test_glob_respects_gitignore(tree: Path) -> None:
    out = await Glob().run({"pattern": "**/*.py"}, ToolContext(cwd=tree))
    assert sorted(out.splitlines()) == ["src/app.py", "src/util.py"]
    logs = await Glob().run({"pattern": "*.log"}, ToolContext(cwd=tree))
    assert logs.splitlines() == ["keep.log"]


@pytest.mark.parametrize("backend", ["python", "ripgrep"])
async def test_grep_modes_and_ignores(tree: Path, backend: str, monkeypatch) -> None:
    if backend == "python":
        monkeypatch.setattr(search_module.shutil, "which", lambda name: None)
    elif shutil.which("rg") is None:
        pytest.skip("ripgrep is not installed")
    ctx = ToolContext(cwd=tree)
    files = await Grep().run({"pattern": "TODO"}, ctx)
    assert files.splitlines() == ["keep.log", "src/app.py"]
    content = await Grep().run({"pattern": "todo", "case_insensitive": True, "output_mode": "content"}, ctx)
    assert content.splitlines() == [
        "keep.log:1:TODO kept",
        "src/app.py:2:    return 'TODO: main'",
        "src/util.py:1:# todo later",
    ]
    count = await Grep().run({"pattern": "a", "glob": "*.py", "output_mode": "count"}, ctx)
    assert count.splitlines() == ["src/app.py:2", "src/util.py:1"]
    with pytest.raises(ToolError, match="invalid regular expression"):
        await Grep().run({"pattern": "("}, ctx)


async def test_list_shows_entries_without_ignored_ones(tree: Path) -> None:
    out = await List().run({}, ToolContext(cwd=tree))
    assert out.splitlines()[0] == "src/"
    assert "build/" not in out and "debug.log" not in out and ".git/" not in out and "keep.log" in out


async def test_bash_keeps_its_directory_and_reports_exit_codes(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    ctx = ToolContext(cwd=tmp_path)
    await Bash().run({"command": "cd sub && echo hi > f.txt"}, ctx)
    assert ctx.cwd == (tmp_path / "sub").resolve()
    out = await Bash().run({"command": "cat f.txt; echo oops >&2; exit 3"}, ctx)
    assert out.splitlines() == ["hi", "oops", "exit code 3"]
    with pytest.raises(ToolError, match="from 1 to 600"):
        await Bash().run({"command": "true", "timeout": 601}, ctx)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie has exited; only its parent has not collected it
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


async def _dies(pid: int, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while _alive(pid) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return not _alive(pid)


# The two tests below read, from outside, a pid the command wrote: in the sandbox that is a pid of the
# call's own PID namespace, so they test sagent's own process ending without it (the sandbox's is tested
# in tests/security/test_sandbox_processes.py).
async def test_bash_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    ctx = ToolContext(cwd=tmp_path, sandbox=OFF)
    with pytest.raises(ToolError, match="timed out after 1 s"):
        await Bash().run({"command": f"sleep 100 & echo $! > {pids}; sleep 100", "timeout": 1}, ctx)
    assert await _dies(int(pids.read_text()))


async def test_bash_cancellation_kills_the_group(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    task = asyncio.create_task(
        Bash().run({"command": f"sleep 100 & echo $! > {pids}; sleep 100"}, ToolContext(cwd=tmp_path, sandbox=OFF))
    )
    while not pids.exists() or not pids.read_text().strip():
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await _dies(int(pids.read_text()))


async def test_long_output_keeps_head_and_tail_and_spills_the_rest(tmp_path: Path) -> None:
    from sagent.agent.calls import execute
    from sagent.types import ToolCall

    ctx = ToolContext(cwd=tmp_path, session_dir=tmp_path / "session")
    result = await execute({"Bash": Bash()}, ToolCall("c1", "Bash", {"command": "seq 1 20000"}), ctx)
    out = result.text
    assert out.startswith("1\n2\n") and out.rstrip().endswith("20000") and len(out) < 31_000
    assert "characters cut; the whole output is in" in out
    spill = Path(out.split("the whole output is in ")[1].split(":")[0])
    assert spill.parent == tmp_path / "session" / "outputs" and spill.name.startswith("bash-")
    assert spill.read_text().splitlines() == [str(i) for i in range(1, 20001)]
