"""A session log you can trust, from the library: checked on open, one writer, whole writes, no secrets."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sagent.agent.agent import Agent
from sagent.agent.session import (
    SessionBusy,
    SessionCorrupt,
    SessionError,
    SessionLog,
    SessionWriteError,
    peek_state,
    verify,
)
from sagent.events import MessageAdded, Result, ToolFinished
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.redaction import remember_secret
from sagent.tools.base import ToolContext, tool
from sagent.types import ToolResult, UserMessage


@pytest.fixture(autouse=True)
def data_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return tmp_path / "data"


@tool
def note(text: str) -> str:
    """Note something.

    Args:
        text: the note
    """
    return f"noted {text}"


async def a_session(tmp_path: Path) -> Path:
    """A closed log: a prompt, a tool round (`note` answering "noted original"), an answer."""
    log = SessionLog.create(tmp_path, {"provider": "scripted", "model": "scripted"})
    model = ScriptedModel([tool_turn(("note", {"text": "original"})), text_turn("done")])
    agent = Agent(model, tools=[note], session=log, cwd=tmp_path)
    async for _ in agent.run("remember"):
        pass
    await agent.aclose()
    assert log.path is not None
    return log.path


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")[:-1]


def write_lines(path: Path, lines: list[bytes]) -> None:
    path.write_bytes(b"\n".join(lines) + b"\n")


def index_of(lines: list[bytes], event_type: str) -> int:
    return next(i for i, line in enumerate(lines) if f'"type":"{event_type}"'.encode() in line)


async def test_an_edited_tool_result_is_refused_and_never_sent(tmp_path) -> None:
    path = await a_session(tmp_path)
    lines = lines_of(path)
    i = index_of(lines, "tool_finished")
    lines[i] = lines[i].replace(b"noted original", b"noted forged")
    write_lines(path, lines)
    model = ScriptedModel([text_turn("never")])
    with pytest.raises(SessionCorrupt) as caught:
        Agent.resume(path, model)
    assert caught.value.line == i + 1 and caught.value.good == i
    assert str(path) in str(caught.value) and "--fork-damaged" in str(caught.value)
    assert model.requests == []
    with pytest.raises(SessionCorrupt):
        peek_state(path)


async def test_an_edit_to_the_last_record_is_found_too(tmp_path) -> None:
    log = SessionLog.create(tmp_path, {})
    log.record(ToolFinished(ToolResult("c1", "note", ()), 1.0))
    log.record(MessageAdded(UserMessage.of("the last words")))
    log.close()
    assert log.path is not None
    write_lines(log.path, [*lines_of(log.path)[:-1], lines_of(log.path)[-1].replace(b"last", b"lost")])
    report = verify(log.path)
    assert not report.ok and report.damage is not None and report.damage.line == 3


async def test_the_header_must_come_first(tmp_path) -> None:
    path = await a_session(tmp_path)
    write_lines(path, lines_of(path)[1:])
    with pytest.raises(SessionCorrupt) as caught:
        SessionLog.open(path)
    assert caught.value.line == 1 and caught.value.good == 0
    assert "start a new session" in str(caught.value)
    with pytest.raises(SessionCorrupt):  # nothing to fork from
        SessionLog.fork_damaged(path)


def test_an_empty_file_is_refused(tmp_path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    with pytest.raises(SessionCorrupt, match="header is missing"):
        SessionLog.open(path)


async def test_logs_written_before_records_had_their_own_hash_still_open(tmp_path) -> None:
    path = await a_session(tmp_path)
    old: list[bytes] = []
    for line in lines_of(path):  # the format before: no `hash` field, `prev` chaining the lines
        record = json.loads(line)
        del record["hash"]
        record["prev"] = hashlib.sha256(old[-1]).hexdigest() if old else None
        old.append(json.dumps(record, separators=(",", ":")).encode())
    write_lines(path, old)
    log, state = SessionLog.open(path)
    assert [m.text for m in state.history][-1] == "done"
    log.record(MessageAdded(UserMessage.of("appended in the new format")))
    log.close()
    assert verify(path).ok
    # An edit there is found by the next record's prev, and neither of the two lines is trusted.
    lines = lines_of(path)
    i = index_of(lines, "tool_finished")
    lines[i] = lines[i].replace(b"noted original", b"noted forged")
    write_lines(path, lines)
    report = verify(path)
    assert report.damage is not None and report.damage.line == i + 2 and report.damage.good == i


async def test_a_torn_last_line_is_not_damage(tmp_path) -> None:
    path = await a_session(tmp_path)
    whole = path.read_bytes()
    with open(path, "ab") as f:
        f.write(b'{"seq":8,"prev":"12')
    log, state = SessionLog.open(path)
    log.close()
    assert path.read_bytes() == whole and state.history[-1].text == "done"


async def test_fork_damaged_keeps_the_good_prefix_and_leaves_the_file(tmp_path) -> None:
    path = await a_session(tmp_path)
    lines = lines_of(path)
    i = index_of(lines, "tool_finished")
    lines[i] = b"\xff garbage"
    write_lines(path, lines)
    damaged = path.read_bytes()
    forked = SessionLog.fork_damaged(path)
    assert forked is not None
    new, damage = forked
    assert damage.line == i + 1 and "UTF-8" in damage.reason
    assert path.read_bytes() == damaged
    header = json.loads(lines_of(new)[0])
    assert header["forked_from"] == path.stem and header["forked_at_line"] == i + 1
    resumed = Agent.resume(new, ScriptedModel([text_turn("ok")]), tools=[note])
    # The tool call whose result was lost is answered as interrupted; nothing after the damage is kept.
    assert resumed.history[-1].is_error and "interrupted" in resumed.history[-1].text  # type: ignore[union-attr]
    await resumed.aclose()
    assert verify(new).ok
    assert SessionLog.fork_damaged(new) is None  # a whole log is not forked


# ------------------------------------------------------------------------------------------------ lock

HOLD = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from sagent.agent.session import SessionLog
    log, _ = SessionLog.open(Path(sys.argv[1]))
    print("held", flush=True)
    sys.stdin.readline()
    log.close()
    print("released", flush=True)
    sys.stdin.readline()
    """
)


async def test_one_writer_at_a_time_across_processes(tmp_path) -> None:
    path = await a_session(tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdin is not None
        assert holder.stdout.readline() == "held\n"
        with pytest.raises(SessionBusy) as caught:
            SessionLog.open(path)
        assert caught.value.holder["pid"] == holder.pid
        assert f"pid {holder.pid}" in str(caught.value) and "since" in str(caught.value)
        before = path.read_bytes()
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert holder.stdout.readline() == "released\n"
        log, _ = SessionLog.open(path)  # the holder closed it: free again
        log.close()
        assert path.read_bytes() == before
    finally:
        holder.kill()
        holder.wait()


async def test_a_second_log_object_in_the_same_process_is_refused(tmp_path) -> None:
    path = await a_session(tmp_path)
    log, _ = SessionLog.open(path)
    with pytest.raises(SessionBusy, match="this process"):
        Agent.resume(path, ScriptedModel([]))
    log.close()
    log, _ = SessionLog.open(path)
    log.close()


async def test_a_command_started_by_the_writer_does_not_keep_the_lock(tmp_path) -> None:
    path = await a_session(tmp_path)
    log, _ = SessionLog.open(path)
    child = subprocess.Popen(["sleep", "60"])  # as a Bash call's daemon would outlive the session
    try:
        log.close()
        again, _ = SessionLog.open(path)
        again.close()
    finally:
        child.kill()
        child.wait()


# ---------------------------------------------------------------------------------------- failed writes


async def test_a_log_that_cannot_be_written_ends_the_run_before_anything_is_asked(tmp_path) -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("needs /dev/full")
    full = tmp_path / "full.jsonl"
    full.symlink_to("/dev/full")
    log = SessionLog("full-disk", full)  # every write: ENOSPC
    model = ScriptedModel([tool_turn(("note", {"text": "x"})), text_turn("never")])
    agent = Agent(model, tools=[note], session=log, cwd=tmp_path)
    events = [e async for e in agent.run("go")]
    (result,) = [e for e in events if isinstance(e, Result)]
    assert result.is_error and str(full) in result.text and "No space left on device" in result.text
    assert model.requests == []
    with pytest.raises(SessionWriteError):  # and the log stays stopped: nothing is written after a hole
        log.record(MessageAdded(UserMessage.of("later")))
    log.close()


# --------------------------------------------------------------------------------------------- secrets


def test_a_remembered_key_is_redacted_however_it_is_written(tmp_path) -> None:
    secret = 'key-with-"quote"-and-\\-0123456789'
    remember_secret(secret)
    log = SessionLog.create(tmp_path, {})
    log.record(MessageAdded(UserMessage.of(f"the key {secret} and again {secret}")))
    log.close()
    assert log.path is not None
    text = log.path.read_text()
    assert "0123456789" not in text and text.count("[redacted]") == 2
    assert verify(log.path).ok


def test_spill_files_are_private_and_redacted(tmp_path) -> None:
    secret = "spill-secret-9876543210"
    remember_secret(secret)
    ctx = ToolContext(cwd=tmp_path, session_dir=tmp_path / "session")
    existing = ctx.spill_dir() / "bash-1.txt"
    existing.write_text("old")
    existing.chmod(0o644)
    for name in ("bash-1.txt", "bash-2.txt"):
        path = ctx.save_output(name, f"output with {secret}\n" * 3)
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert secret not in path.read_text() and "[redacted]" in path.read_text()


def test_a_lone_surrogate_keeps_the_log_valid(tmp_path) -> None:
    log = SessionLog.create(tmp_path, {})
    log.record(MessageAdded(UserMessage.of("bad \udc80 byte")))
    log.close()
    assert log.path is not None
    log.path.read_bytes().decode("utf-8")  # valid UTF-8 throughout
    assert "\\udc80" in log.path.read_text()  # the log keeps what was said, exactly (escaped)
    reopened, state = SessionLog.open(log.path)
    reopened.close()
    assert state.history[0].text == "bad \ufffd byte"  # read back encodable: the session can go on


async def test_a_log_that_cannot_be_opened_for_writing_is_a_session_error(tmp_path) -> None:
    folder = tmp_path / "folder.jsonl"
    folder.mkdir()
    with pytest.raises(SessionError, match="cannot be opened for writing"):
        SessionLog.open(folder)
    if os.geteuid() != 0:  # root may write any file
        path = await a_session(tmp_path)
        path.chmod(0o400)
        with pytest.raises(SessionError, match="cannot be opened for writing"):
            SessionLog.open(path)


@pytest.mark.parametrize(
    "forged",
    [b'{"type":"tool_finished","n":' + b"7" * 5000 + b"}", b'{"type":"tool_finished","n":' + b"[" * 100_000],
    ids=["too-many-digits", "too-deep"],
)
async def test_a_record_json_cannot_read_is_damage_not_a_crash(tmp_path, forged: bytes) -> None:
    # json.loads raises a plain ValueError for an integer past Python's digit limit and RecursionError
    # for deep nesting: neither has the position a JSONDecodeError carries.
    path = await a_session(tmp_path)
    lines = lines_of(path)
    i = index_of(lines, "tool_finished")
    lines[i] = forged
    write_lines(path, lines)
    report = verify(path)
    assert not report.ok and report.damage is not None and report.damage.line == i + 1
    assert "not a JSON record" in str(report.damage)
    with pytest.raises(SessionCorrupt) as caught:
        Agent.resume(path, ScriptedModel([text_turn("never")]))
    assert caught.value.line == i + 1 and caught.value.good == i
