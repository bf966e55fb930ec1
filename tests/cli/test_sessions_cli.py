"""Session logs as a user (or an attacker, or a full disk) meets them from the command line: damaged logs
refused or forked, `sagent sessions verify`, one writer per session, writes that fail, no secret on disk."""

from __future__ import annotations

import hashlib
import json
import os
import resource
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response

ORIGINAL = "ORIGINAL-TOOL-OUTPUT"
EDITED = "EDITED-BY-SOMEONE-ELSE"


def sagent(args: list[str], env: dict[str, str], cwd: Path, **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sagent.cli.main", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
        stdin=subprocess.DEVNULL,
        **kwargs,
    )


def env_for(fake: FakeAnthropic, data: Path, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests-0001",
        "ANTHROPIC_BASE_URL": fake.url,
        "XDG_DATA_HOME": str(data),
        **extra,
    }


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


def session_files(data: Path) -> list[Path]:
    return sorted((data / "sagent" / "sessions").glob("*/*.jsonl"))


def first_session(project: Path, data: Path) -> Path:
    """A session of `project` with one tool round: the model ran `echo ORIGINAL` and answered."""
    steps = [tool_use_response([("Bash", {"command": f"echo {ORIGINAL}"})]), text_response("first answer")]
    with FakeAnthropic(steps) as fake:
        out = sagent(["-p", "first task"], env_for(fake, data), project)
    assert out.returncode == 0, out.stderr
    (path,) = session_files(data)
    return path


def rechained(lines: list[bytes]) -> list[bytes]:
    """`lines` with every `seq`, `prev` and `hash` recomputed as docs/sessions.md describes them, as a
    careful forger would: only the fields of the records are then wrong."""
    out: list[bytes] = []
    for seq, line in enumerate(lines):
        record = json.loads(line)
        record.pop("hash", None)
        record["seq"], record["prev"] = seq, hashlib.sha256(out[-1]).hexdigest() if out else None
        body = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode()
        out.append(body[:-1] + b',"hash":"' + hashlib.sha256(body).hexdigest().encode() + b'"}')
    return out


def _index(lines: list[bytes], event_type: str) -> int:
    return next(i for i, line in enumerate(lines) if f'"type":"{event_type}"'.encode() in line)


def edit_tool_result(lines: list[bytes]) -> list[bytes]:
    i = _index(lines, "tool_finished")
    return [*lines[:i], lines[i].replace(ORIGINAL.encode(), EDITED.encode()), *lines[i + 1 :]]


def flip_prev(lines: list[bytes]) -> list[bytes]:
    i = _index(lines, "tool_finished")
    record = json.loads(lines[i])
    flipped = record["prev"][:-1] + ("0" if record["prev"][-1] != "0" else "1")
    return [*lines[:i], lines[i].replace(record["prev"].encode(), flipped.encode()), *lines[i + 1 :]]


def delete_record(lines: list[bytes]) -> list[bytes]:
    i = _index(lines, "tool_started")
    return lines[:i] + lines[i + 1 :]


def duplicate_record(lines: list[bytes]) -> list[bytes]:
    i = _index(lines, "tool_finished")
    return [*lines[: i + 1], lines[i], *lines[i + 1 :]]


def remove_header(lines: list[bytes]) -> list[bytes]:
    return lines[1:]


def garbage_line(lines: list[bytes]) -> list[bytes]:
    return [*lines[:3], b"this is not json {", *lines[3:]]


def invalid_utf8(lines: list[bytes]) -> list[bytes]:
    i = _index(lines, "tool_finished")
    return [*lines[:i], lines[i].replace(ORIGINAL.encode(), b"\xff\xfe\x80"), *lines[i + 1 :]]


def missing_fields(lines: list[bytes]) -> list[bytes]:
    i = _index(lines, "tool_finished")
    record = json.loads(lines[i])
    del record["event"]["result"]
    changed = [*lines[:i], json.dumps(record).encode(), *lines[i + 1 :]]
    return rechained(changed)  # chain and hashes whole: only the record's fields are wrong


def message_not_an_object(lines: list[bytes]) -> list[bytes]:
    i = _index(lines, "message_added")
    record = json.loads(lines[i])
    record["event"]["message"] = ["not", "a", "message"]
    return rechained([*lines[:i], json.dumps(record).encode(), *lines[i + 1 :]])


DAMAGE = [
    edit_tool_result,
    flip_prev,
    delete_record,
    duplicate_record,
    remove_header,
    garbage_line,
    invalid_utf8,
    missing_fields,
    message_not_an_object,
]


def damage(path: Path, how) -> bytes:
    lines = path.read_bytes().split(b"\n")[:-1]
    data = b"\n".join(how(lines)) + b"\n"
    path.write_bytes(data)
    return data


@pytest.mark.parametrize("how", DAMAGE, ids=lambda f: f.__name__)
def test_a_damaged_log_is_refused_with_one_line_and_no_new_session(how, project: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    path = first_session(project, data)
    damaged = damage(path, how)
    with FakeAnthropic([text_response("should never be asked")]) as fake:
        cont = sagent(["-c", "-p", "and now?"], env_for(fake, data), project)
        by_id = sagent(
            ["--session", path.stem, "-p", "and now?", "--model", "claude-sonnet-4-6"], env_for(fake, data), project
        )
        asked = len(fake.requests)
    for out in (cont, by_id):
        assert out.returncode == 2, out.stderr
        assert "Traceback" not in out.stderr
        (line,) = out.stderr.splitlines()
        assert str(path) in line and "damaged at line" in line
    assert asked == 0  # the edited text never reached a model
    assert session_files(data) == [path]  # no new session
    assert path.read_bytes() == damaged  # and the file was not touched

    verify = sagent(["sessions", "verify", str(path)], os.environ | {"XDG_DATA_HOME": str(data)}, project)
    assert verify.returncode == 1 and "damaged at line" in verify.stdout, verify.stdout + verify.stderr
    listing = sagent(["sessions"], os.environ | {"XDG_DATA_HOME": str(data)}, project)
    assert listing.returncode == 0 and path.stem in listing.stdout and "Traceback" not in listing.stderr


def test_the_first_bad_line_is_named(project: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    path = first_session(project, data)
    line = _index(path.read_bytes().split(b"\n"), "tool_finished") + 1
    damage(path, edit_tool_result)
    env = os.environ | {"XDG_DATA_HOME": str(data)}
    verify = sagent(["sessions", "verify", path.stem], env, project)
    assert verify.returncode == 1
    assert f"damaged at line {line}: its content does not match its hash" in verify.stdout
    assert f"lines 1-{line - 1} can be trusted" in verify.stdout


def test_sessions_verify_reports_a_whole_log(project: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    path = first_session(project, data)
    count = len(path.read_bytes().splitlines())
    with open(path, "ab") as f:
        f.write(b'{"seq": 99, "prev": "cut sho')  # a crash mid-write is not damage
    env = os.environ | {"XDG_DATA_HOME": str(data)}
    out = sagent(["sessions", "verify", path.stem], env, project)
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"{count} records, last seq {count - 1}, chain ok" in out.stdout and "torn last line" in out.stdout
    missing = sagent(["sessions", "verify", "no-such-session"], env, project)
    assert missing.returncode == 2 and "no session" in missing.stderr and "Traceback" not in missing.stderr


def test_fork_damaged_continues_from_the_last_good_record(project: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    path = first_session(project, data)
    damaged = damage(path, edit_tool_result)
    with FakeAnthropic([text_response("went on")]) as fake:
        out = sagent(["-c", "--fork-damaged", "-p", "go on"], env_for(fake, data), project)
        sent = fake.requests[0]["body"]["messages"]
    assert out.returncode == 0, out.stderr
    assert out.stdout == "went on\n"
    assert f"session {path.stem} is damaged at line" in out.stderr and "as a new session" in out.stderr
    assert path.read_bytes() == damaged  # the original is kept as it is
    (fork,) = [p for p in session_files(data) if p != path]
    assert fork.stem in out.stderr
    text = json.dumps(sent)
    assert EDITED not in text and "first task" in text and "go on" in text
    # The tool call whose (edited) result was cut is answered as interrupted, so the history stays valid.
    assert "interrupted" in text
    env = os.environ | {"XDG_DATA_HOME": str(data)}
    assert sagent(["sessions", "verify", str(fork)], env, project).returncode == 0
    # --fork-damaged on a whole log continues it as it is.
    with FakeAnthropic([text_response("same session")]) as fake:
        again = sagent(["--session", fork.stem, "--fork-damaged", "-p", "more"], env_for(fake, data), project)
    assert again.returncode == 0 and again.stderr == "" and len(session_files(data)) == 2


def test_fork_damaged_needs_a_session_to_continue(project: Path, tmp_path: Path) -> None:
    out = sagent(["-p", "x", "--fork-damaged"], os.environ | {"XDG_DATA_HOME": str(tmp_path)}, project)
    assert out.returncode == 2 and "--fork-damaged needs --continue" in out.stderr


def test_three_continues_at_once_one_runs_the_others_are_refused(project: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    path = first_session(project, data)
    gate = threading.Event()

    def held(request: dict) -> object:
        gate.wait(90)  # the holder's model call lasts until the test has seen the others refused
        return text_response("the one that ran")

    with FakeAnthropic([held, held, held]) as fake:
        env = env_for(fake, data)
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "sagent.cli.main", "-c", "-p", f"prompt number {n}"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
                text=True,
                env=env,
                cwd=project,
            )
            for n in range(3)
        ]
        deadline = time.monotonic() + 90
        while sum(p.poll() is not None for p in procs) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        gate.set()
        outs = [(p.wait(timeout=120), *p.communicate()) for p in procs]
        asked = [r["body"]["messages"][-1] for r in fake.requests]
    codes = sorted(code for code, _, _ in outs)
    assert codes == [0, 2, 2], outs
    for code, stdout, stderr in outs:
        if code == 2:
            (line,) = stderr.splitlines()
            assert f"session {path.stem} is in use by another sagent (pid " in line and "since" in line
        else:
            assert stdout == "the one that ran\n"
    assert len(asked) == 1  # the refused ones never reached the model
    env = os.environ | {"XDG_DATA_HOME": str(data)}
    assert sagent(["sessions", "verify", str(path)], env, project).returncode == 0
    records = [json.loads(line) for line in path.read_bytes().splitlines()]
    prompts = [
        r["event"]["message"]["content"][0]["text"]
        for r in records
        if r.get("event", {}).get("type") == "message_added"
    ]
    assert len(prompts) == 2 and prompts[0] == "first task" and prompts[1].startswith("prompt number")
    assert not path.with_suffix(".lock").exists()  # the holder's note went with its lock


BIG = "x" * 20_000  # makes the records that carry the tool call large, so a size limit lands inside one


def _limited(limit: int):
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


@pytest.mark.parametrize("record", ["turn_finished", "tool_started"])
def test_a_log_write_that_fails_stops_the_run_before_the_tool_runs(record: str, project: Path, tmp_path: Path) -> None:
    command = f"touch marker # {BIG}"
    steps = [tool_use_response([("Bash", {"command": command})]), text_response("done")]
    data = tmp_path / "data"
    # A run without a limit shows where the record to cut starts in the file and how long it is.
    with FakeAnthropic(list(steps)) as fake:
        assert sagent(["-p", "make a marker"], env_for(fake, data), project).returncode == 0
    (dry,) = session_files(data)
    lines = dry.read_bytes().split(b"\n")
    i = _index(lines, record)
    limit = sum(len(line) + 1 for line in lines[:i]) + len(lines[i]) // 2
    (project / "marker").unlink()
    dry.unlink()

    with FakeAnthropic(list(steps)) as fake:
        out = sagent(["-p", "make a marker"], env_for(fake, data), project, preexec_fn=_limited(limit))
    assert not (project / "marker").exists()  # the tool never ran
    assert out.returncode == 1, out.stderr
    assert "Traceback" not in out.stderr
    (line,) = out.stderr.splitlines()
    (path,) = session_files(data)
    assert str(path) in line and "File too large" in line
    # The partial record was taken back: the log is whole and goes on.
    env = os.environ | {"XDG_DATA_HOME": str(data)}
    assert sagent(["sessions", "verify", str(path)], env, project).returncode == 0
    assert path.stat().st_size < limit
    with FakeAnthropic([text_response("resumed fine")]) as fake:
        again = sagent(["-c", "-p", "again"], env_for(fake, data), project)
    assert again.returncode == 0 and again.stdout == "resumed fine\n", again.stderr
    assert not (project / "marker").exists()


def test_a_key_from_any_variable_is_in_neither_the_log_nor_a_spill_file(project: Path, tmp_path: Path) -> None:
    key = "sk-custom-0123456789abcdef-do-not-leak"
    data = tmp_path / "data"
    command = f"yes 'the key is {key}' | head -n 2000"  # 60 kB of output: too long, so it is spilled
    steps = [tool_use_response([("Bash", {"command": command})]), text_response(f"your key is {key}")]
    with FakeAnthropic(steps) as fake:
        env = env_for(fake, data, SOMEVAR=key)
        env.pop("ANTHROPIC_API_KEY")
        args = ["-p", f"my key is {key}; print it 2000 times", "--provider", "anthropic", "--api-key-env", "SOMEVAR"]
        out = sagent(args, env, project)
        headers = " ".join(fake.requests[0]["headers"].values())
    assert out.returncode == 0, out.stderr
    assert key in headers  # the key really was the one in use
    (path,) = session_files(data)
    spills = list(path.with_suffix("").glob("outputs/*"))
    assert spills, "the long output was not spilled"
    for file in [path, *spills]:
        text = file.read_text()
        assert key not in text and "[redacted]" in text, file
        assert stat.S_IMODE(file.stat().st_mode) == 0o600, file
