"""Nothing a sandboxed Bash call starts outlives it: not on completion, timeout or cancel, and not when
sagent itself is killed with SIGKILL mid-call. Each escape runs `sleep <marker>`; the processes are looked
for from outside, in /proc, by that marker."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sagent.tools.base import ToolContext, ToolError
from sagent.tools.shell import Bash
from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response
from tests.security.sandbox_support import kill_marked, marker, needs_sandbox, none_left, with_marker

pytestmark = needs_sandbox

# Ways a process tries to outlive the call that started it; {m} is the marker.
ESCAPES = {
    "background": "sleep {m} &",
    "nohup": "nohup sleep {m} > /dev/null 2>&1 &",
    "setsid": "setsid sleep {m} &",
    "setsid -f": "setsid -f sleep {m}",
    "double fork": "( (sleep {m} &) & )",
    "disown": "sleep {m} & disown",
    "env -i, same group": "env -i sleep {m} &",
    "env -i and setsid": "env -i setsid sleep {m} &",
    "setsid, env -i, double fork": "setsid env -i sh -c '(sleep {m} &) &' &",
    "ignores SIGTERM and SIGHUP": "(trap '' TERM HUP; exec sleep {m}) &",
    "a daemon in Python": (
        f"{sys.executable} -c 'import os,time\nif os.fork()==0:\n os.setsid()\n if os.fork()==0:\n"
        '  os.execvp("sleep", ["sleep", "{m}"])\' &'
    ),
    "a user namespace of its own": "unshare -r sleep {m} &",
}


def started(m: str) -> str:
    """Waits, inside the sandbox, until the marked process runs, and says so."""
    wait = f"for i in $(seq 200); do pgrep -f {m} > /dev/null && break; sleep 0.02; done"
    return f"\n{wait}\npgrep -f {m} > /dev/null && echo started\n"


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


@pytest.mark.parametrize("form", ESCAPES)
async def test_every_process_ends_with_the_call(ctx: ToolContext, form: str) -> None:
    m = marker()
    try:
        out = await Bash().run({"command": ESCAPES[form].format(m=m) + started(m), "timeout": 30}, ctx)
        assert out == "started\n", out
        assert none_left(m), f"{form}: {with_marker(m)} outlived the call"
    finally:
        kill_marked(m)


async def test_a_timeout_ends_every_process_even_one_that_ignores_sigterm(ctx: ToolContext) -> None:
    m = marker()
    command = "\n".join(ESCAPES[f].format(m=m) for f in ("setsid", "env -i and setsid", "ignores SIGTERM and SIGHUP"))
    try:
        with pytest.raises(ToolError, match="timed out after 2 s") as raised:
            await Bash().run({"command": command + started(m) + "sleep 300", "timeout": 2}, ctx)
        assert str(raised.value).endswith("until then:\nstarted\n"), raised.value
        assert none_left(m), with_marker(m)
    finally:
        kill_marked(m)


async def test_cancelling_the_call_ends_every_process(ctx: ToolContext, tmp_path: Path) -> None:
    m = marker()
    command = "\n".join(ESCAPES[f].format(m=m) for f in ("nohup", "setsid, env -i, double fork"))
    command += started(m) + "touch ready; sleep 300"
    try:
        task = asyncio.create_task(Bash().run({"command": command, "timeout": 60}, ctx))
        while not (tmp_path / "ready").exists():
            assert not task.done()
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert none_left(m), with_marker(m)
    finally:
        kill_marked(m)


async def test_an_interrupt_while_the_calls_record_is_written_still_ends_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # In the sandbox the record is written while the command starts; a slow disk keeps that write going.
    import sagent.tools.shell as shell

    ctx = ToolContext(cwd=tmp_path, session_dir=tmp_path / "session")
    assert await Bash().run({"command": "true"}, ctx) == "(no output)"  # the session's first call: records swept
    note = shell._note_call

    def slow_note(*args: object) -> Path | None:
        time.sleep(1.0)
        return note(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(shell, "_note_call", slow_note)
    m = marker()
    try:
        task = asyncio.create_task(Bash().run({"command": f"sleep {m} &" + started(m) + "touch ready; sleep 300"}, ctx))
        while not (tmp_path / "ready").exists():
            assert not task.done()
            await asyncio.sleep(0.02)
        task.cancel()  # the record is still being written
        with pytest.raises(asyncio.CancelledError):
            await task
        assert none_left(m), with_marker(m)
        await asyncio.sleep(1.2)  # the write finishes, and its record goes
        assert not list((tmp_path / "session" / shell.RECORDS).glob("*.json"))
    finally:
        kill_marked(m)


async def test_the_working_directory_and_exit_code_carry_over_as_without_the_sandbox(ctx: ToolContext) -> None:
    out = await Bash().run({"command": "mkdir -p a/b && cd a/b && echo $SAGENT_SANDBOX; exit 3"}, ctx)
    assert out == "workspace-write\nexit code 3"
    assert ctx.cwd == (ctx.roots[0] / "a" / "b")


def test_sigkill_of_sagent_ends_everything_its_running_call_started(tmp_path: Path) -> None:
    m = marker()
    forms = ("setsid", "nohup", "env -i, same group", "setsid, env -i, double fork", "ignores SIGTERM and SIGHUP")
    command = "\n".join(ESCAPES[f].format(m=m) for f in forms) + started(m).rstrip() + f" > ready\nsleep {m}"
    env = {
        **os.environ,
        "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests-0001",
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    try:
        with FakeAnthropic([tool_use_response([("Bash", {"command": command})]), text_response("done")]) as fake:
            env["ANTHROPIC_BASE_URL"] = fake.url
            proc = subprocess.Popen(
                [sys.executable, "-m", "sagent.cli.main", "-p", "start it", "--cwd", str(tmp_path)],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            deadline = time.monotonic() + 60
            while not (tmp_path / "ready").exists() and time.monotonic() < deadline:
                assert proc.poll() is None, proc.communicate()
                time.sleep(0.05)
            assert (tmp_path / "ready").read_text().strip() == "started"
            assert len(with_marker(m)) >= len(forms)  # they run, seen from outside the sandbox
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=10)
            assert none_left(m), f"{with_marker(m)} outlived sagent"
    finally:
        kill_marked(m)


def test_what_a_killed_sagent_left_in_tmp_is_removed_by_the_next(monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    from sagent.sandbox import live

    left = Path(tempfile.mkdtemp(prefix=live.PREFIX))
    (left / "owner").write_text("999999999 12345")  # no such process
    (left / "tmp").mkdir()
    (left / "tmp" / "big").write_bytes(b"x" * 1000)
    ours = Path(tempfile.mkdtemp(prefix=live.PREFIX))
    (ours / "owner").write_text(live._owner_line(os.getpid()))
    try:
        monkeypatch.setattr(live, "_orphans_removed", False)
        live._remove_orphans()
        assert not left.exists() and ours.exists()
    finally:
        import shutil

        shutil.rmtree(left, ignore_errors=True)
        shutil.rmtree(ours, ignore_errors=True)
