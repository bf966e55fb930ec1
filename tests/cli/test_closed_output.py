"""A reader that closes sagent's output early (`sagent models | head`): sagent ends quietly with 141, the
status a shell reports for a process SIGPIPE ended, never with a traceback; a run stops asking the model.

Each command writes into a real pipe whose reading end is already closed, so its first write fails, as it
does when `head` has exited; the same commands are also run through `| head -1` in a shell."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response

EXIT_CLOSED_PIPE = 141


def run_into_closed_pipe(args: list[str], env: dict[str, str], cwd: Path) -> tuple[int, str]:
    """Run sagent with stdout a pipe nobody reads any more; its exit status and its stderr."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "sagent.cli.main", *args],
            stdin=subprocess.DEVNULL,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=cwd,
            timeout=120,
        )
    finally:
        os.close(write_end)
    return done.returncode, done.stderr


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")},
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
    }


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "notes.txt").write_text("hello\n")
    return root


PRINTING_COMMANDS = [
    ["--version"],
    ["--help"],
    ["models"],
    ["models", "anthropic"],
    ["providers"],
    ["sessions"],
    ["sessions", "--help"],
    ["config"],
    ["config", "--json"],
    ["--model", "gpt-5.4", "config"],
    ["trust", "--help"],
    ["mcp", "list"],
    ["mcp", "--help"],
    ["compare", "--help"],
    ["fleet", "--help"],
]


@pytest.mark.parametrize("args", PRINTING_COMMANDS, ids=" ".join)
def test_a_command_whose_reader_left_ends_quietly(args: list[str], env: dict[str, str], project: Path) -> None:
    code, stderr = run_into_closed_pipe(args, env, project)
    assert "Traceback" not in stderr and "Exception ignored" not in stderr, stderr
    assert "Broken pipe" not in stderr
    if "--help" in args:
        assert code in (0, EXIT_CLOSED_PIPE)  # argparse's help drops a failed write itself and exits 0
    else:
        assert code == EXIT_CLOSED_PIPE


@pytest.mark.parametrize("fmt", ["text", "json", "stream-json"])
def test_a_task_whose_reader_left_ends_quietly(fmt: str, env: dict[str, str], project: Path) -> None:
    with FakeAnthropic([text_response("The project holds notes.txt.")]) as fake:
        env = {**env, "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests-0001", "ANTHROPIC_BASE_URL": fake.url}
        code, stderr = run_into_closed_pipe(["-p", "what is here?", "--output-format", fmt], env, project)
    assert "Traceback" not in stderr and "Exception ignored" not in stderr, stderr
    assert "Broken pipe" not in stderr
    assert code == EXIT_CLOSED_PIPE


def test_a_stream_whose_reader_left_stops_the_run(env: dict[str, str], project: Path) -> None:
    """The consumer of the JSON records went away: the agent does not go on calling the model and tools for
    nobody (the first record, the session's start, already fails)."""
    steps = [tool_use_response([("Read", {"path": "notes.txt"})]) for _ in range(5)]
    with FakeAnthropic([*steps, text_response("done")]) as fake:
        env = {**env, "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests-0001", "ANTHROPIC_BASE_URL": fake.url}
        code, stderr = run_into_closed_pipe(["-p", "read it", "--output-format", "stream-json"], env, project)
        asked = len(fake.requests)
    assert code == EXIT_CLOSED_PIPE, stderr
    assert asked <= 1


@pytest.mark.parametrize("command", ["models", "providers", "config", "--help", "sessions --help"])
def test_piped_into_head(command: str, env: dict[str, str], project: Path) -> None:
    """As a user types it: `sagent models | head -1` shows one line and nothing else."""
    script = f'"{sys.executable}" -m sagent.cli.main {command} | head -1; exit "${{PIPESTATUS[0]}}"'
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, cwd=project, timeout=120)
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr
    assert len(done.stdout.splitlines()) == 1
    assert done.returncode in (0, EXIT_CLOSED_PIPE)  # 0 when all was written before head left


def test_the_session_commands_whose_reader_left_end_quietly(env: dict[str, str], project: Path) -> None:
    """With real sessions to print: sessions, sessions verify, sessions search, trace and compare."""
    with FakeAnthropic([text_response("The project holds notes.txt."), text_response("It holds notes.")]) as fake:
        run_env = {**env, "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests-0001", "ANTHROPIC_BASE_URL": fake.url}
        for _ in range(2):
            done = subprocess.run(
                [sys.executable, "-m", "sagent.cli.main", "-p", "what is here?"],
                capture_output=True,
                text=True,
                env=run_env,
                cwd=project,
                stdin=subprocess.DEVNULL,
                timeout=120,
            )
            assert done.returncode == 0, done.stderr
    logs = sorted((Path(env["XDG_DATA_HOME"]) / "sagent" / "sessions").glob("*/*.jsonl"))
    assert len(logs) == 2
    a, b = (str(p) for p in logs)
    for args in (
        ["sessions"],
        ["sessions", "verify", a],
        ["sessions", "search", "notes"],
        ["trace", a],
        ["compare", a, b],
        ["compare", a, b, "--json"],
        ["compare", a, b, "--html", str(project / "c.html")],
        ["trace", a, "--html", str(project / "t.html")],
    ):
        code, stderr = run_into_closed_pipe(args, env, project)
        assert "Traceback" not in stderr and "Exception ignored" not in stderr, (args, stderr)
        assert code == EXIT_CLOSED_PIPE, (args, stderr)
