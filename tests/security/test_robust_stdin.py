"""The copy of a large piped input: written 0600 with secrets redacted (before the input is cut, so the
model and the session log get no part of a key either), and gone when the run ends, whether it ends
normally, on an error or on SIGTERM; a copy a killed run left is removed by the next piped run. `sagent -p`
runs in a subprocess against the fake Anthropic server, with its own temporary directory."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic, Fault, text_response, tool_use_response
from tests.security.test_robust_secrets import KEY, leaked

# Larger than half the window of a model the catalog does not know (128,000 tokens at four characters
# each): the input is cut, and its whole is copied to the temporary directory.
LINE = f"some log line that mentions the key {KEY} in passing\n"
BIG = LINE * (700_000 // len(LINE))
MODEL = "claude-unknown-test-model"


@pytest.fixture
def tmpdir_(tmp_path: Path) -> Path:
    folder = tmp_path / "tmp"
    folder.mkdir()
    return folder


def _env(fake: FakeAnthropic, tmp_path: Path, tmpdir_: Path) -> dict[str, str]:
    return {
        **os.environ,
        "ANTHROPIC_API_KEY": KEY,
        "ANTHROPIC_BASE_URL": fake.url,
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "TMPDIR": str(tmpdir_),
    }


def _sagent(*args: str) -> list[str]:
    return [sys.executable, "-m", "sagent.cli.main", "--provider", "anthropic", "--model", MODEL, *args]


def _copies(tmpdir_: Path) -> list[Path]:
    return sorted(tmpdir_.glob("sagent-stdin-*"))


LOOK = 'cp "$TMPDIR"/sagent-stdin-*.txt seen.txt && stat -c %a "$TMPDIR"/sagent-stdin-*.txt > mode.txt'


def test_the_copy_is_private_redacted_and_gone_after_the_run(tmp_path: Path, tmpdir_: Path) -> None:
    steps = [tool_use_response([("Bash", {"command": LOOK})]), text_response("read it")]
    with FakeAnthropic(steps) as fake:
        done = subprocess.run(
            _sagent("-p", "summarise", "--cwd", str(tmp_path)),
            input=BIG,
            capture_output=True,
            text=True,
            env=_env(fake, tmp_path, tmpdir_),
            timeout=120,
        )
        sent = json.dumps(fake.requests[0]["body"])
    assert done.returncode == 0, done.stderr
    assert "the whole input is in" in done.stderr
    seen = (tmp_path / "seen.txt").read_text()
    assert seen.count("\n") == BIG.count("\n") and "[redacted]" in seen and not leaked(seen)
    assert (tmp_path / "mode.txt").read_text().strip() == "600"
    assert not leaked(sent)  # the cut went through the redacted text
    assert _copies(tmpdir_) == []
    for log in (tmp_path / "data").rglob("*.jsonl"):
        assert not leaked(log.read_text())


def test_the_copy_is_gone_after_a_failed_run(tmp_path: Path, tmpdir_: Path) -> None:
    with FakeAnthropic([Fault(400, "invalid_request_error", "no such thing")]) as fake:
        done = subprocess.run(
            _sagent("-p", "summarise", "--cwd", str(tmp_path)),
            input=BIG,
            capture_output=True,
            text=True,
            env=_env(fake, tmp_path, tmpdir_),
            timeout=120,
        )
    assert done.returncode != 0 and "the whole input is in" in done.stderr
    assert _copies(tmpdir_) == []


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_the_copy_is_gone_after_a_signal(tmp_path: Path, tmpdir_: Path, sig: signal.Signals) -> None:
    marker = tmp_path / "started"
    with FakeAnthropic([tool_use_response([("Bash", {"command": f"touch {marker}; sleep 60"})])]) as fake:
        proc = subprocess.Popen(
            _sagent("-p", "summarise", "--cwd", str(tmp_path)),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=_env(fake, tmp_path, tmpdir_),
        )
        assert proc.stdin is not None
        proc.stdin.write(BIG.encode())
        proc.stdin.close()
        deadline = time.monotonic() + 60
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marker.exists(), "the tool never started"
        assert len(_copies(tmpdir_)) == 1  # it lives while the run does
        proc.send_signal(sig)
        proc.wait(timeout=30)
    assert proc.returncode != 0
    assert _copies(tmpdir_) == []


def test_a_copy_left_by_a_killed_run_is_removed_by_the_next_one(tmp_path: Path, tmpdir_: Path) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    left = tmpdir_ / f"sagent-stdin-{dead.pid}-12345-abcd1234.txt"  # its process is gone
    left.write_text("old input")
    reused = tmpdir_ / f"sagent-stdin-{os.getpid()}-1-abcd1234.txt"  # the pid now names another process
    reused.write_text("old input")
    living = subprocess.Popen(["sleep", "60"])
    try:
        from sagent.tools.processes import start_time

        live = tmpdir_ / f"sagent-stdin-{living.pid}-{start_time(living.pid)}-abcd1234.txt"
        live.write_text("a run still going")
        unrelated = tmpdir_ / "sagent-stdin-notes.md"
        unrelated.write_text("not ours")
        with FakeAnthropic([text_response("ok")]) as fake:
            done = subprocess.run(
                _sagent("-p", "hi", "--cwd", str(tmp_path)),
                stdin=subprocess.DEVNULL,  # any headless run cleans up, piped or not
                capture_output=True,
                text=True,
                env=_env(fake, tmp_path, tmpdir_),
                timeout=120,
            )
        assert done.returncode == 0, done.stderr
        assert _copies(tmpdir_) == sorted([live, unrelated])
    finally:
        living.kill()
        living.wait()
