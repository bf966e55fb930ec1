"""A hook is ended at its timeout whatever it does: floods stdout or stderr, leaves a `setsid` or `nohup`
child holding its pipes, ignores SIGTERM, forks a daemon. The whole process group and every process that
carries the hook's tag is killed, its pipes are read without blocking and only a capped amount kept, and
the call returns promptly. Real processes; each hook is told apart by a variable of its own, so a survivor
is found in /proc."""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from pathlib import Path

import pytest

from sagent.userhooks.runner import MAX_OUTPUT, run_command

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds survivors in /proc")

HOSTILE = {
    "yes to stderr": "yes >&2",
    "zeros to stderr": "cat /dev/zero >&2",
    "yes to stdout": "yes",
    "zeros to stdout": "cat /dev/zero",
    "both at once": "yes & yes >&2",
    "setsid child holds the pipe": "setsid sleep 300 & echo started; sleep 300",
    "setsid child floods": "setsid sh -c 'yes >&2' & sleep 300",
    "nohup child holds the pipe": "nohup sleep 300 & echo started; sleep 300",
    "double fork": "(sh -c 'sleep 300 &' &) ; sleep 300",
    "ignores SIGTERM": "trap '' TERM; sleep 300",
    "closes its pipes and lingers": "exec >&- 2>&-; sleep 300",
    "setsid daemon that ignores SIGTERM": "setsid sh -c \"trap '' TERM; sleep 300\" & sleep 300",
    "never reads its input": "sleep 300",
}
TIMEOUT = 1.0
HANG_GUARD = 60.0  # a hook that is not ended hangs the test this long, and fails it


def _survivors(mark: str) -> list[int]:
    needle = f"HOOK_MARK={mark}".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            environ = Path(f"/proc/{name}/environ").read_bytes()
            state = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in environ.split(b"\0") and state not in ("Z", "X"):
            found.append(int(name))
    return found


@pytest.mark.parametrize("command", list(HOSTILE.values()), ids=list(HOSTILE))
async def test_a_hostile_hook_is_ended_at_its_timeout(tmp_path: Path, command: str) -> None:
    mark = uuid.uuid4().hex
    env = {**os.environ, "HOOK_MARK": mark}
    payload = b"x" * (4 << 20)  # more than a pipe holds: a hook that never reads it must not block the feed
    started = time.monotonic()
    try:
        finished = await asyncio.wait_for(
            run_command(command, payload, cwd=tmp_path, env=env, timeout=TIMEOUT), HANG_GUARD
        )
    finally:
        leftover = _survivors(mark)
        for pid in leftover:  # never leave them behind, even when the test fails
            os.kill(pid, 9)
    took = time.monotonic() - started
    assert finished.code is None and "timed out" in finished.failure
    assert leftover == [], f"hook processes survived: {leftover}"
    assert len(finished.stdout) <= MAX_OUTPUT and len(finished.stderr) <= MAX_OUTPUT
    print(f"{command!r}: returned after {took:.2f} s")


async def test_what_a_hook_wrote_before_its_timeout_is_kept(tmp_path: Path) -> None:
    finished = await run_command(
        "echo partial; echo why >&2; sleep 300", b"{}", cwd=tmp_path, env=dict(os.environ), timeout=TIMEOUT
    )
    assert finished.code is None and "timed out" in finished.failure


async def test_a_quick_hook_still_answers(tmp_path: Path) -> None:
    finished = await run_command("cat; echo done >&2", b'{"a": 1}', cwd=tmp_path, env=dict(os.environ), timeout=10)
    assert (finished.code, finished.stdout, finished.stderr) == (0, '{"a": 1}', "done\n")


async def test_a_hook_leaving_a_background_child_returns_when_it_exits(tmp_path: Path) -> None:
    """A hook that exits at once is done then, even with a child still holding its pipe: the child is ended."""
    mark = uuid.uuid4().hex
    env = {**os.environ, "HOOK_MARK": mark}
    finished = await asyncio.wait_for(
        run_command("setsid sleep 300 & echo ok", b"{}", cwd=tmp_path, env=env, timeout=30), HANG_GUARD
    )
    leftover = _survivors(mark)
    for pid in leftover:
        os.kill(pid, 9)
    assert finished.code == 0 and finished.stdout == "ok\n"
    assert leftover == []


@pytest.mark.parametrize("command", ["echo a\0b", "/no/such/program"], ids=["NUL byte", "missing program"])
async def test_a_hook_that_cannot_start_is_a_failure_not_a_crash(tmp_path: Path, command: str) -> None:
    finished = await run_command(command, b"{}", cwd=tmp_path, env=dict(os.environ), timeout=10)
    assert finished.code != 0 and (finished.failure.startswith("could not start") or finished.code == 127)
