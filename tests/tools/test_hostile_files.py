"""The file tools on what an attacker, or an unlucky path, hands them: devices that never end, pipes that
never open, sockets, sparse and huge files, trees with unreadable parts, the whole disk. Each must answer
at once with a clear error or a bounded result, in bounded memory, without ever stalling the event loop.

Reads that would hang or eat the machine on a regression run in a child process with a timeout and an
address-space limit, so a regression fails the test instead of hanging it."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import tracemalloc
from pathlib import Path

import pytest

from sagent.tools import Edit, Glob, Grep, List, Read, Write
from sagent.tools import files as files_module
from sagent.tools import search as search_module
from sagent.tools.base import ToolContext, ToolError
from sagent.tools.fdglob import fd_command
from tests.fakes.anthropic_server import FakeAnthropic, Reply, text_response, tool_use_response

ROOT = Path(__file__).resolve().parents[2]

CHILD = """
import asyncio, json, resource, sys
from pathlib import Path
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))  # a runaway read fails here, not the machine
from sagent.tools import Read
from sagent.tools.base import ToolContext, ToolError
try:
    out = asyncio.run(Read().run({"path": sys.argv[1]}, ToolContext(cwd=Path.cwd())))
    print(json.dumps({"output": str(out)[:2000]}))
except ToolError as error:
    print(json.dumps({"error": str(error)}))
"""


def read_in_child(path: Path | str, cwd: Path) -> dict[str, str]:
    """What Read gives for `path`, run in a fresh process that is killed after 60 s and may not grow past
    1 GB: a read that blocks or never ends fails the test rather than hanging it."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(path)],
            cwd=cwd,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
            timeout=60,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"Read of {path} did not return: it blocked")
    assert done.returncode == 0, f"Read of {path} crashed: {done.stderr[-2000:]}"
    return json.loads(done.stdout)


def test_read_refuses_a_device_that_never_ends(tmp_path: Path) -> None:
    result = read_in_child("/dev/zero", tmp_path)
    assert "error" in result, result
    assert "/dev/zero is a character device, not a regular file" in result["error"]
    assert "head -c" in result["error"]  # it says how to sample it instead


def test_read_of_a_fifo_without_a_writer_returns_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    result = read_in_child(fifo, tmp_path)
    assert "error" in result and "is a named pipe (FIFO), not a regular file" in result["error"], result


def test_read_refuses_a_socket(tmp_path: Path) -> None:
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(tmp_path / "s.sock"))
        result = read_in_child(tmp_path / "s.sock", tmp_path)
    finally:
        server.close()
    assert "error" in result and "is a socket, not a regular file" in result["error"], result


def test_a_link_to_a_device_is_refused_as_the_device(tmp_path: Path) -> None:
    (tmp_path / "innocent.txt").symlink_to("/dev/zero")
    result = read_in_child("innocent.txt", tmp_path)
    assert "error" in result and "innocent.txt is a character device" in result["error"], result


async def test_a_sparse_gigabyte_is_called_binary_from_its_first_bytes(tmp_path: Path) -> None:
    sparse = tmp_path / "disk.img"
    with open(sparse, "wb") as f:
        f.truncate(2**30)
    tracemalloc.start()
    try:
        with pytest.raises(ToolError, match=r"binary file \(1,073,741,824 bytes\)"):
            await Read().run({"path": "disk.img"}, ToolContext(cwd=tmp_path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * 2**20, f"{peak:,} bytes allocated to sniff a sparse file"


def big_text(path: Path, lines: int) -> int:
    """A text file of `lines` numbered lines, written in large blocks; its size in bytes."""
    with open(path, "w") as f:
        for start in range(1, lines + 1, 100_000):
            f.write("".join(f"line {n:08d} {'x' * 24}\n" for n in range(start, min(start + 100_000, lines + 1))))
    return path.stat().st_size


async def test_a_large_text_file_is_paged_without_loading_it(tmp_path: Path) -> None:
    size = big_text(tmp_path / "big.log", 1_000_000)
    ctx = ToolContext(cwd=tmp_path)
    tracemalloc.start()
    try:
        first = await Read().run({"path": "big.log"}, ctx)
        deep = await Read().run({"path": "big.log", "offset": 900_001, "limit": 3}, ctx)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < size // 10, f"{peak:,} bytes allocated to page a {size:,}-byte file"
    lines = first.splitlines()
    shown = len(lines) - 1  # a page of about 30,000 characters
    assert lines[0] == f"     1\tline 00000001 {'x' * 24}" and lines[-2].startswith(f"{shown:>6}\tline {shown:08d}")
    assert lines[-1] == f"[{1_000_000 - shown} more lines: Read with offset={shown + 1} to go on]"  # as for any file
    assert deep.splitlines() == [
        f"900001\tline 00900001 {'x' * 24}",
        f"900002\tline 00900002 {'x' * 24}",
        f"900003\tline 00900003 {'x' * 24}",
        "[99997 more lines: Read with offset=900004 to go on]",
    ]
    with pytest.raises(ToolError, match=r"offset 2000000 is past the end: .* has 1000000 lines"):
        await Read().run({"path": "big.log", "offset": 2_000_000}, ctx)
    assert ctx.read_files[tmp_path / "big.log"].size == size  # it counts as read, for Edit and Write


async def test_past_its_scan_limit_read_says_more_follows_without_counting(tmp_path: Path, monkeypatch) -> None:
    big_text(tmp_path / "huge.log", 200_000)
    monkeypatch.setattr(files_module, "COUNT_SCAN", 2**20)  # stands for a file of many gigabytes
    out = await Read().run({"path": "huge.log", "limit": 5}, ToolContext(cwd=tmp_path))
    assert out.splitlines()[-1] == "[more lines follow line 5: Read with offset=6 to go on]"


async def test_one_enormous_line_costs_no_more_than_its_shown_part(tmp_path: Path) -> None:
    with open(tmp_path / "min.js", "w") as f:
        for _ in range(64):
            f.write("a" * 2**20)
        f.write("\nend\n")
    tracemalloc.start()
    try:
        out = await Read().run({"path": "min.js"}, ToolContext(cwd=tmp_path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * 2**20, f"{peak:,} bytes allocated for one 64 MB line"
    first, second = out.splitlines()
    assert first == "     1\t" + "a" * 2000 + f" [… {64 * 2**20 - 2000} more characters]"
    assert second == "     2\tend"


async def test_write_and_edit_refuse_pipes_and_devices(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "null").symlink_to("/dev/null")
    ctx = ToolContext(cwd=tmp_path)
    for name, kind in (("pipe", r"a named pipe \(FIFO\)"), ("null", "a character device")):
        with pytest.raises(ToolError, match=rf"is {kind}, not a regular file; Write works on regular files only"):
            await Write().run({"path": name, "content": "x"}, ctx)
        with pytest.raises(ToolError, match=rf"is {kind}, not a regular file; Edit works on regular files only"):
            await Edit().run({"path": name, "old_string": "a", "new_string": "b"}, ctx)


def slow_disk(monkeypatch: pytest.MonkeyPatch, slow: Path, release: threading.Event) -> None:
    """Opening `slow` waits for `release` (at most 20 s), as on a hung network mount; other paths are
    untouched. Both os.open and io.open are held, whichever a tool uses, and an open of its name relative
    to an open folder (`dir_fd`), as the file tools open a checked real path."""
    real_os_open, real_io_open = os.open, io.open

    def held(path: object, relative: bool = False) -> None:
        if isinstance(path, str | os.PathLike) and os.fspath(path) in ((slow.name,) if relative else (str(slow),)):
            release.wait(20)

    def os_open(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        held(path, kwargs.get("dir_fd") is not None)
        return real_os_open(path, *args, **kwargs)

    def io_open(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        held(path)
        return real_io_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", os_open)
    monkeypatch.setattr(io, "open", io_open)


@pytest.mark.parametrize("tool", ["Read", "Write"])
async def test_a_slow_disk_never_stalls_the_event_loop(tmp_path: Path, monkeypatch, tool: str) -> None:
    slow = tmp_path / "on-a-hung-mount.txt"
    slow.write_text("hello\n")
    ctx = ToolContext(cwd=tmp_path)
    if tool == "Write":
        await Read().run({"path": slow.name}, ctx)
    release = threading.Event()
    slow_disk(monkeypatch, slow, release)
    ticks_while_held = 0

    async def other_work() -> None:  # another agent, a signal handler, a stream: anything on the loop
        nonlocal ticks_while_held
        while not release.is_set():
            ticks_while_held += 1
            if ticks_while_held == 5:
                release.set()  # the disk answers only once the loop has shown it is alive
            await asyncio.sleep(0.01)

    ticker = asyncio.create_task(other_work())
    if tool == "Read":
        out = await Read().run({"path": slow.name}, ctx)
        assert out == "     1\thello"
    else:
        await Write().run({"path": slow.name, "content": "bye\n"}, ctx)
        assert slow.read_text() == "bye\n"
    release.set()
    await ticker
    assert ticks_while_held >= 5, "the event loop stood still while the tool waited on the disk"


def deep_tree(root: Path, depth: int = 24) -> None:
    """Folders nested past PATH_MAX (4096 bytes), with a file at the bottom: made through directory
    descriptors, as no path can name the bottom. Nothing can list it by path, root included."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("d" * 200, dir_fd=fd)
            child = os.open("d" * 200, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        os.close(os.open("bottom.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
    finally:
        os.close(fd)


@pytest.fixture
def damaged_tree(tmp_path: Path) -> tuple[Path, int]:
    """A project with parts that cannot be read, and how many: a link loop, a link to nothing, folders
    nested too deep to name, and (when not root, which reads anything) a folder without permissions."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("print('TODO')\n")
    (tmp_path / "src" / "loop.py").symlink_to("loop.py")
    (tmp_path / "src" / "gone.py").symlink_to("nowhere.py")
    deep_tree(tmp_path / "src")
    unreadable = 3
    if os.geteuid() != 0:
        (tmp_path / "locked").mkdir()
        (tmp_path / "locked" / "secret.py").write_text("TODO\n")
        (tmp_path / "locked").chmod(0)
        unreadable += 1
    yield tmp_path, unreadable
    if (tmp_path / "locked").exists():
        (tmp_path / "locked").chmod(0o755)


@pytest.mark.parametrize("backend", ["python", "fd"])
async def test_glob_skips_what_it_cannot_read_and_says_how_many(
    damaged_tree: tuple[Path, int], monkeypatch, backend: str
) -> None:
    root, unreadable = damaged_tree
    if backend == "python":
        monkeypatch.setattr(search_module.shutil, "which", lambda name: None)
    else:
        monkeypatch.setenv("SAGENT_FD", "on")
        if fd_command() is None:
            pytest.skip("fd is not installed (Debian's fd-find)")
    out = await Glob().run({"pattern": "**/*.py"}, ToolContext(cwd=root))
    lines = out.splitlines()
    assert lines[0] == "src/app.py"
    note = "could not be read and were skipped (no permission, gone, or a broken or looping link)"
    assert lines[1] == f"[{unreadable} entries {note}]"
    assert len(lines) == 2


@pytest.mark.parametrize("backend", ["python", "ripgrep"])
async def test_grep_and_list_skip_what_they_cannot_read(
    damaged_tree: tuple[Path, int], monkeypatch, backend: str
) -> None:
    root, _ = damaged_tree
    ctx = ToolContext(cwd=root)
    listing = await List().run({"path": "src"}, ctx)
    assert listing.splitlines()[:2] == [f"{'d' * 200}/", "app.py  (14 bytes)"]
    assert listing.splitlines()[-1].startswith("[2 entries could not be read")  # the two bad links
    if backend == "python":
        monkeypatch.setattr(search_module.shutil, "which", lambda name: None)
    elif shutil.which("rg") is None:
        pytest.skip("ripgrep is not installed")
    found = await Grep().run({"pattern": "TODO"}, ctx)
    assert found.splitlines()[0] == "src/app.py" and "could not be read" in found.splitlines()[-1]


async def test_grep_passes_over_pipes_and_binary_giants(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(search_module.shutil, "which", lambda name: None)  # the Python search
    os.mkfifo(tmp_path / "pipe")
    with open(tmp_path / "disk.img", "wb") as f:
        f.truncate(2**30)
    (tmp_path / "notes.txt").write_text("a TODO here\n")
    tracemalloc.start()
    try:
        out = await asyncio.wait_for(Grep().run({"pattern": "TODO"}, ToolContext(cwd=tmp_path)), 60)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        with contextlib.suppress(OSError):  # were a search stuck opening the pipe, this lets it go
            os.close(os.open(tmp_path / "pipe", os.O_WRONLY | os.O_NONBLOCK))
    assert out == "notes.txt" and peak < 4 * 2**20


async def test_glob_of_the_whole_disk_returns_what_it_can(tmp_path: Path) -> None:
    ctx = ToolContext(cwd=tmp_path)
    out = await Glob().run({"pattern": "*/*/*", "path": "/"}, ctx)
    shown = [line for line in out.splitlines() if not line.startswith("[")]
    assert shown and all(Path("/", line).is_file() for line in shown)
    absolute = await Glob().run({"pattern": "/etc/pass*"}, ctx)
    assert "/etc/passwd" in absolute.splitlines()


def test_the_cli_survives_a_model_that_reads_a_fifo(tmp_path: Path) -> None:
    """A model asks to Read a FIFO nobody writes to: the run goes on, and Ctrl+C still stops it."""
    project = tmp_path / "project"
    project.mkdir()
    os.mkfifo(project / "pipe")
    slow_answer = Reply([{"type": "text", "text": "still thinking " * 20}], delay=0.5)
    with FakeAnthropic([tool_use_response([("Read", {"path": "pipe"})]), slow_answer, text_response("x")]) as fake:
        env = {
            **os.environ,
            "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests-0001",
            "ANTHROPIC_BASE_URL": fake.url,
            "XDG_DATA_HOME": str(tmp_path / "data"),
        }
        proc = subprocess.Popen(
            [sys.executable, "-m", "sagent.cli.main", "-p", "read the pipe", "--output-format", "stream-json"],
            cwd=project,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            deadline = time.monotonic() + 60
            while len(fake.requests) < 2 and time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.05)
            assert len(fake.requests) == 2, "the Read of the FIFO never came back: sagent is stuck"
            proc.send_signal(signal.SIGINT)  # while the next answer streams: the loop must be alive
            out, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        second = fake.requests[1]["body"]["messages"][-1]["content"][0]
    assert second["type"] == "tool_result" and second["is_error"]
    assert "is a named pipe (FIFO), not a regular file" in json.dumps(second["content"])
    records = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert records[-1]["type"] == "result", err  # the interrupted run still ends with its result
    assert "Traceback" not in err
