"""The status line command without a terminal: what a run returns for commands that misbehave, what the
settings accept, and that a project's command needs a trusted folder."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from sagent.cli.settings_files import SettingsError, load
from sagent.repl.status_command import MAX_LINE_CHARS, first_line, run_status_command
from sagent.repl.terminal_settings import channel_of, status_line_of


def _running(pid: int) -> bool:
    """Whether `pid` still runs: a process that was killed but not yet reaped (a zombie, which a container
    whose first process reaps nothing keeps) has stopped running."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state != "Z"


async def test_runs_that_misbehave_give_a_line_or_nothing_and_leave_no_process(tmp_path: Path) -> None:
    assert await run_status_command("yes colour | head -c 5000000", b"{}", tmp_path) == "colour"  # huge
    one_long_line = "head -c 5000000 /dev/zero | tr '\\0' x"
    assert await run_status_command(one_long_line, b"{}", tmp_path) == "x" * MAX_LINE_CHARS  # cut, not lost
    assert await run_status_command("echo oops >&2; exit 1", b"{}", tmp_path) == ""  # fails
    assert await run_status_command("true", b"{}", tmp_path) == ""  # prints nothing
    pid_file = tmp_path / "pid"
    slow = f"sleep 600 & echo $! > {pid_file}; wait"
    assert await run_status_command(slow, b"{}", tmp_path, timeout=2) == ""  # killed before a line
    child = int(pid_file.read_text())
    for _ in range(100):  # its child went with it
        if not _running(child):
            break
        await asyncio.sleep(0.05)
    assert not _running(child)
    said_then_hung = "echo early; exec sleep 600"
    assert await run_status_command(said_then_hung, b"{}", tmp_path, timeout=2) == "early"
    echo = 'python3 -c "import json,sys; print(json.load(sys.stdin)[\\"model\\"][\\"id\\"])"'
    assert await run_status_command(echo, json.dumps({"model": {"id": "m-1"}}).encode(), tmp_path) == "m-1"


async def test_a_flood_cut_at_the_limit_never_leaves_the_run_waiting(tmp_path: Path) -> None:
    """The run stops reading a flood at MAX_OUTPUT_BYTES and kills it; asyncio then waits for the output
    pipe to close as well, which it never saw once the pipe was paused for a full buffer (a run that now
    and then never ended, and the status row with it). Many runs, since it depended on timing."""
    for _ in range(200):
        flood = run_status_command("yes colour | head -c 5000000", b"{}", tmp_path)
        assert await asyncio.wait_for(flood, 5) == "colour"


def test_the_first_line_keeps_colours_and_drops_what_moves_the_cursor() -> None:
    out = b"\x1b[1;31mred\x1b[0m\tplain\x1b[2J\x1b]0;title\x07\r\nsecond"
    assert first_line(out) == "\x1b[1;31mred\x1b[0m plain"


def test_the_settings_keys_are_checked_and_a_project_s_command_needs_trust(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".sagent").mkdir(parents=True)
    settings = project / ".sagent" / "settings.json"
    settings.write_text(json.dumps({"statusLine": {"type": "command", "command": "echo hi"}, "notifications": "bell"}))
    assert status_line_of(load(project, trusted=True).values) is not None
    untrusted = load(project, trusted=False)
    assert status_line_of(untrusted.values) is None and channel_of(untrusted.values) == "auto"
    assert settings in untrusted.skipped
    settings.write_text(json.dumps({"preferredNotifChannel": "terminal_bell"}))
    assert channel_of(load(project, trusted=True).values) == "bell"
    for bad, said in (
        ({"statusLine": {"type": "static", "command": "x"}}, '"type" must be "command"'),
        ({"statusLine": {"command": ""}}, '"command" must be a non-empty string'),
        ({"statusLine": "echo hi"}, "must be an object"),
        ({"notifications": "loud"}, "must be one of auto, osc9, osc777, osc99, bell, off"),
        ({"preferredNotifChannel": "osc9"}, "must be one of auto, iterm2"),
    ):
        settings.write_text(json.dumps(bad))
        with pytest.raises(SettingsError, match=said):
            load(project, trusted=True)
