"""The faults as a user meets them: `sagent -p` in a subprocess, pointed with --base-url at a fake server of
each provider (or at a closed port), with the provider's key variable set to a fake key."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

from tests.fakes.sse_server import Faulty
from tests.providers.dialects import DIALECTS, Dialect
from tests.providers.test_faults import ANSWER, INTRO, wire_events

KEYS = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai": "OPENAI_API_KEY",
    "openai-compat": "SAGENT_TEST_COMPAT_KEY",
    "google": "GEMINI_API_KEY",
}


def command(d: Dialect, url: str, tmp_path: Path) -> tuple[list[str], dict[str, str]]:
    tmp_path.mkdir()
    args = ["-p", "Say hello.", "--provider", d.name, "--base-url", url, "--cwd", str(tmp_path), "--tools", "none"]
    if d.name == "openai-compat":
        args += ["--model", "m", "--api-key-env", KEYS[d.name]]
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
    env |= {KEYS[d.name]: "sk-fake-key-for-tests-0001", "XDG_DATA_HOME": str(tmp_path / "data")}
    return [sys.executable, "-m", "sagent.cli.main", *args], env


def run_all(commands: list[tuple[list[str], dict[str, str]]]) -> list[tuple[int, str, str]]:
    """Run the commands at once (each waits out its own retries) and collect (exit code, stdout, stderr)."""
    procs = [
        subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for argv, env in commands
    ]
    out = []
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=120)
        out.append((proc.returncode, stdout.decode(), stderr.decode()))
    return out


def test_a_stream_cut_mid_way_is_sent_again_and_the_run_succeeds(tmp_path: Path) -> None:
    fakes = [d.server([]) for d in DIALECTS]
    commands = []
    for d, fake in zip(DIALECTS, fakes, strict=True):
        fake.__enter__()
        reply = d.text(INTRO + " " + ANSWER)
        half = len(wire_events(fake, d, reply)) // 2  # some of the text sent, the rest cut off
        fake.add(Faulty(reply, cut_after=half, chunked=True), reply)
        commands.append(command(d, fake.url, tmp_path / d.name))
    try:
        results = run_all(commands)
        requests = [len(f.requests) for f in fakes]
    finally:
        for fake in fakes:
            fake.__exit__(None, None, None)
    for d, (code, stdout, stderr) in zip(DIALECTS, results, strict=True):
        assert code == 0, f"{d.name}: {stderr}"
        assert stdout == f"{INTRO} {ANSWER}\n", d.name  # the answer once: the cut attempt's text dropped
        assert "Traceback" not in stderr
    assert requests == [2] * len(DIALECTS)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_base_url_nothing_listens_on_is_named_in_a_one_line_error(tmp_path: Path) -> None:
    urls = [f"http://127.0.0.1:{closed_port()}" + ("/v1" if d.name.startswith("openai") else "") for d in DIALECTS]
    results = run_all([command(d, url, tmp_path / d.name) for d, url in zip(DIALECTS, urls, strict=True)])
    for d, url, (code, stdout, stderr) in zip(DIALECTS, urls, results, strict=True):
        assert code == 1, f"{d.name}: {stderr}"
        assert stdout == ""
        errors = [line for line in stderr.splitlines() if line.startswith("sagent:")]
        assert errors and all(f"cannot reach {url}: connection refused" in line for line in errors), stderr
        assert "Traceback" not in stderr
