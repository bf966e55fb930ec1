"""Every process a Bash call starts ends with it, however it tried to leave (setsid, nohup, a double fork),
on completion, timeout, cancel, SIGHUP and SIGTERM of sagent, and after sagent itself was SIGKILLed
(`--continue` ends what the dead run left). A flood of output costs constant memory and goes whole to a
0600 file with secrets redacted. Real processes, real signals."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sagent.agent.calls import execute
from sagent.sandbox import OFF
from sagent.tools.base import MAX_OUTPUT, ToolContext, ToolError
from sagent.tools.shell import Bash
from sagent.types import ToolCall
from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response
from tests.repl.tmux import HAVE_TMUX, Tmux

pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")

# A daemon that leaves the call's session and process group, writes its pid, and lives on.
SETSID = "setsid sh -c 'echo $$ > setsid.pid; exec sleep 300' &"
NOHUP = "nohup sh -c 'echo $$ > nohup.pid; exec sleep 300' > /dev/null 2>&1 &"
# Classic double fork: the middle shell exits at once, the grandchild is orphaned.
DOUBLE_FORK = "( (echo $BASHPID > fork.pid; sleep 2; touch late) & ) &"
SETSID_FORK = "setsid sh -c '(echo $$ > sfork.pid; sleep 2; touch late2) &' > /dev/null 2>&1 &"


def wait_for(*names: str) -> str:
    """A shell loop that waits until each pid file is written, so the call does not end before them."""
    return "".join(f"while [ ! -s {n} ]; do sleep 0.02; done; " for n in names)


def alive(pid: int) -> bool:
    """True while `pid` runs (a zombie has exited: only its parent has not collected it yet)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


def gone(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


def pid_in(path: Path) -> int:
    return int(path.read_text().split()[0])


# These tests read, from outside, the pids a command wrote. In the OS sandbox those are pids of the call's
# own PID namespace, and the kernel ends every process of it with the call, so they test the ending sagent
# does itself where there is no sandbox (`danger-full-access`, or no bubblewrap). The same escapes in the
# sandbox: tests/security/test_sandbox_processes.py.
OUTSIDE = ("--sandbox", "danger-full-access")


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path, session_dir=tmp_path / "session", sandbox=OFF)


@pytest.fixture(autouse=True)
def _no_leftovers(tmp_path: Path):
    """Whatever a failing test left running is killed, so a failure does not leak processes."""
    yield
    for f in tmp_path.rglob("*.pid"):
        try:
            pid = pid_in(f)
            if alive(pid) and b"sleep" in Path(f"/proc/{pid}/cmdline").read_bytes():  # not a reused pid
                os.kill(pid, signal.SIGKILL)
        except (ValueError, OSError):
            pass


async def test_setsid_nohup_and_double_forks_all_end_with_the_call(tmp_path: Path, ctx: ToolContext) -> None:
    command = f"{SETSID} {NOHUP} {DOUBLE_FORK} {SETSID_FORK} " + wait_for(
        "setsid.pid", "nohup.pid", "fork.pid", "sfork.pid"
    )
    out = await Bash().run({"command": command + "echo started", "timeout": 20}, ctx)
    assert out == "started\n"
    for name in ("setsid.pid", "nohup.pid", "fork.pid", "sfork.pid"):
        assert gone(pid_in(tmp_path / name)), f"the {name.removesuffix('.pid')} process outlived the call"
    await asyncio.sleep(2.5)  # past the moment the orphans would have written their files
    assert not (tmp_path / "late").exists() and not (tmp_path / "late2").exists()


async def test_a_daemon_holding_stdout_does_not_hold_the_call(tmp_path: Path, ctx: ToolContext) -> None:
    # The daemon keeps the output pipe open: the call still ends when bash does, not at the timeout.
    command = "setsid sh -c 'echo $$ > held.pid; exec sleep 300' & " + wait_for("held.pid") + "echo done"
    out = await Bash().run({"command": command, "timeout": 15}, ctx)
    assert out == "done\n"
    assert gone(pid_in(tmp_path / "held.pid"))


async def test_a_timeout_kills_every_process_the_command_started(tmp_path: Path, ctx: ToolContext) -> None:
    command = f"{SETSID} {DOUBLE_FORK} " + wait_for("setsid.pid", "fork.pid") + "echo waiting; sleep 300"
    with pytest.raises(ToolError, match="timed out after 2 s") as raised:
        await Bash().run({"command": command, "timeout": 2}, ctx)
    assert "waiting" in str(raised.value)  # the output so far is kept
    assert gone(pid_in(tmp_path / "setsid.pid")) and gone(pid_in(tmp_path / "fork.pid"))


async def test_cancelling_the_call_kills_every_process_it_started(tmp_path: Path, ctx: ToolContext) -> None:
    command = f"{SETSID} {NOHUP} " + wait_for("setsid.pid", "nohup.pid") + "touch ready; sleep 300"
    task = asyncio.create_task(Bash().run({"command": command, "timeout": 60}, ctx))
    while not (tmp_path / "ready").exists():
        assert not task.done(), task
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert gone(pid_in(tmp_path / "setsid.pid")) and gone(pid_in(tmp_path / "nohup.pid"))
    assert not list((tmp_path / "session").rglob("processes/*.json"))  # the call's record is removed


FLOOD = 200_000_000  # bytes of `yes`: a few seconds of it, all of which must reach the file


async def test_a_flood_of_output_keeps_head_and_tail_and_streams_all_of_it_to_one_file(
    tmp_path: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-flood-secret-0123456789"
    monkeypatch.setenv("FLOOD_API_KEY", secret)
    command = f'seq 1 5000; echo "key=$FLOOD_API_KEY"; yes | head -c {FLOOD}; echo the end'
    result = await execute({"Bash": Bash()}, ToolCall("c1", "Bash", {"command": command}), ctx)
    out = result.text
    assert not result.is_error and len(out) <= MAX_OUTPUT
    assert out.startswith("1\n2\n3\n") and out.endswith("y\ny\nthe end\n")
    assert "characters cut; the whole output is in " in out
    spills = list((tmp_path / "session" / "outputs").iterdir())
    assert len(spills) == 1, "the output was spilled twice"  # once by Bash, not again by the agent
    spill = spills[0]
    assert str(spill) in out
    assert stat.S_IMODE(spill.stat().st_mode) == 0o600
    seq = sum(len(f"{i}\n") for i in range(1, 5001))
    assert spill.stat().st_size == seq + len("key=[redacted]\n") + FLOOD + len("the end\n")
    with spill.open("rb") as f:
        start = f.read(200_000).decode()
        f.seek(-100, os.SEEK_END)
        end = f.read().decode()
    assert start.startswith("1\n2\n") and "key=[redacted]" in start and secret not in start
    assert end.endswith("y\nthe end\n")


async def test_the_output_file_stops_at_its_cap_and_says_so(
    tmp_path: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sagent.tools.shell.MAX_SPILL_BYTES", 1_000_000)
    out = await Bash().run({"command": "yes | head -c 5000000; echo the end"}, ctx)
    assert len(out) <= MAX_OUTPUT and out.endswith("y\nthe end\n")
    assert "the first 1,000,000 bytes of the output are in " in out
    (spill,) = (tmp_path / "session" / "outputs").iterdir()
    assert spill.stat().st_size == 1_000_000


async def test_a_flood_without_a_session_folder_still_spills_to_a_private_file(tmp_path: Path) -> None:
    ctx = ToolContext(cwd=tmp_path)  # an ephemeral session
    out = await Bash().run({"command": "seq 1 200000"}, ctx)
    assert len(out) <= MAX_OUTPUT and out.startswith("1\n2\n") and out.endswith("200000\n")
    spill = Path(out.split("the whole output is in ")[1].split(": Read it")[0])
    assert stat.S_IMODE(spill.stat().st_mode) == 0o600
    assert spill.read_text().splitlines() == [str(i) for i in range(1, 200001)]


def test_a_secret_cut_between_two_reads_is_still_redacted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sagent.tools.shell import Capture

    secret = "sk-split-secret-abcdefgh"
    monkeypatch.setenv("SPLIT_TOKEN", secret)
    path = tmp_path / "out.txt"
    capture = Capture(lambda: path)
    data = ("x" * MAX_OUTPUT + f" {secret} " + "é" * 100 + f"{secret}").encode()
    for i in range(0, len(data), 7):  # 7-byte reads cut the secret and the two-byte é's
        capture.feed(data[i : i + 7])
    capture.close()
    text = path.read_text()
    assert secret not in text and text.count("[redacted]") == 2 and "é" * 100 in text
    assert len(text) == len(data.decode()) - 2 * len(secret) + 2 * len("[redacted]")


# ------------------------------------------------------------------------------ sagent, killed or hung up


def _env(fake: FakeAnthropic, tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests-0001",
        "ANTHROPIC_BASE_URL": fake.url,
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }


def _start(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "sagent.cli.main", *args, "--cwd", str(cwd), *OUTSIDE],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_file(path: Path, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while not path.exists() and time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    assert path.exists(), "the tool never started"


BUSY_DAEMON = f"{SETSID} " + wait_for("setsid.pid") + "echo $$ > bash.pid; sleep 300"


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGHUP, 129), (signal.SIGTERM, 130)])
def test_sighup_or_sigterm_ends_the_run_with_a_result_and_no_process_left(
    tmp_path: Path, sig: signal.Signals, code: int
) -> None:
    with FakeAnthropic([tool_use_response([("Bash", {"command": BUSY_DAEMON})])]) as fake:
        proc = _start(["-p", "start it", "--output-format", "stream-json"], _env(fake, tmp_path), tmp_path)
        _wait_for_file(tmp_path / "bash.pid", proc)
        daemon = pid_in(tmp_path / "setsid.pid")
        assert alive(daemon)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    last = json.loads(out.splitlines()[-1])
    assert last["type"] == "result" and last["subtype"] == "interrupted"
    assert gone(daemon) and gone(pid_in(tmp_path / "bash.pid"))
    (log,) = (tmp_path / "data" / "sagent" / "sessions").rglob("*.jsonl")
    events = [json.loads(line).get("event", {}) for line in log.read_text().splitlines()]
    assert events[-1]["type"] == "result" and events[-1]["subtype"] == "interrupted"


def test_continue_after_sagent_was_killed_ends_what_the_dead_run_left(tmp_path: Path) -> None:
    with FakeAnthropic([tool_use_response([("Bash", {"command": BUSY_DAEMON})])]) as fake:
        env = _env(fake, tmp_path)
        proc = _start(["-p", "start it"], env, tmp_path)
        _wait_for_file(tmp_path / "bash.pid", proc)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        daemon, shell = pid_in(tmp_path / "setsid.pid"), pid_in(tmp_path / "bash.pid")
        assert alive(daemon) and alive(shell)  # nothing could end them: sagent died at once
        fake.add(text_response("cleaned up"))
        resumed = subprocess.run(
            [sys.executable, "-m", "sagent.cli.main", "-c", "-p", "what happened?", "--cwd", str(tmp_path), *OUTSIDE],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        body = fake.requests[1]["body"]
    assert resumed.returncode == 0, resumed.stderr
    assert gone(daemon) and gone(shell)
    answer = body["messages"][2]["content"][0]
    assert answer["type"] == "tool_result" and answer["is_error"]
    text = json.dumps(answer["content"])
    assert "interrupted" in text and "killed when the session resumed" in text
    assert str(daemon) in text and str(shell) in text
    assert not list((tmp_path / "data").rglob("processes/*.json"))  # the dead run's record is gone too


@pytest.mark.skipif(not HAVE_TMUX, reason="tmux is not installed")
def test_closing_the_repl_terminal_ends_the_running_call_and_its_daemon(tmp_path: Path) -> None:
    with FakeAnthropic([tool_use_response([("Bash", {"command": BUSY_DAEMON})])]) as fake:
        env = {**_env(fake, tmp_path), "TERM": "xterm-256color"}
        with Tmux(["--allowedTools", "Bash", "--sandbox", "danger-full-access"], env, tmp_path) as term:
            term.wait_for("Esc interrupts")
            term.type("start it")
            term.press("Enter")
            deadline = time.monotonic() + 60
            while not (tmp_path / "bash.pid").exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            daemon, shell = pid_in(tmp_path / "setsid.pid"), pid_in(tmp_path / "bash.pid")
            assert alive(daemon) and alive(shell)
        # The terminal is gone (its tmux server killed): sagent gets SIGHUP.
    assert gone(daemon) and gone(shell)


async def test_the_next_call_ends_what_a_dead_run_left_outside_any_interrupted_call(
    tmp_path: Path, ctx: ToolContext
) -> None:
    # A background call of a run that was SIGKILLed: its record stays, its daemon runs, no call is dangling.
    from sagent.tools.processes import new_token, tagged_environment, write_record

    token = new_token()
    daemon = subprocess.Popen(["sleep", "300"], env=tagged_environment(token), start_new_session=True)
    assert ctx.session_dir is not None
    record = write_record(ctx.session_dir / "processes", token, "sleep 300 &")
    assert record is not None
    record.write_text(json.dumps({**json.loads(record.read_text()), "owner": 1, "owner_started": 0}))
    try:
        assert await Bash().run({"command": "echo next"}, ctx) == "next\n"
        assert gone(daemon.pid) and not record.exists()
    finally:
        daemon.kill()
        daemon.wait()
