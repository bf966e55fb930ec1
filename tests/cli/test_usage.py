"""The command line as a user meets it: help, version, bad usage, the listing subcommands."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from sagent import __version__


def sagent(*args: str, stdin: str | None = None, env: dict | None = None, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "sagent.cli.main", *args],
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=cwd,
        timeout=60,
    )


def test_version_and_help() -> None:
    out = sagent("--version")
    assert out.returncode == 0 and out.stdout.strip() == f"sagent {__version__}"
    help_text = sagent("--help").stdout
    for flag in (
        "--output-format",
        "--input-format",
        "--provider",
        "--model",
        "--system",
        "--tools",
        "--max-tool-rounds",
        "--max-budget-usd",
        "--cwd",
        "--continue",
        "--session",
        "--ephemeral",
    ):
        assert flag in help_text
    assert "exit codes" in help_text


def test_version_imports_nothing_heavy() -> None:
    code = (
        "import sys; from sagent.cli.main import main; "
        "rc = main(['models']); "
        "heavy = [m for m in ('anthropic', 'openai', 'httpx', 'asyncio', 'sagent.agent.agent') if m in sys.modules]; "
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-p", "x", "--output-format", "yaml"], "invalid choice"),
        (["-p", "x", "--cwd", "/definitely/not/here"], "not a directory"),
        (["-p", "x", "--continue", "--session", "abc"], "cannot be used together"),
        (["-p", "x", "--max-tool-rounds", "0"], "at least 1"),
        (["-p", "x", "--max-budget-usd", "-1"], "more than 0"),
        (["-p", "x", "--include-partial-messages"], "needs --output-format stream-json"),
        (["-p", "x", "--tools", "Read,Teleport"], "Teleport"),
        (["-p", "x", "--provider", "nosuch"], "unknown provider"),
        (["-p", "x", "--model", "mystery-model-7"], "--provider"),
        (["-p", "x", "--session", "no-such-session"], "no session"),
        # A task as an argument is given once: as -p TASK or as the words after the flags.
        (["-p", "x", "fix the test"], "give the task once"),
    ],
)
def test_bad_usage_exits_2_with_a_message(args, message, tmp_path) -> None:
    out = sagent(*args, env={"XDG_DATA_HOME": str(tmp_path)})
    assert out.returncode == 2, out.stderr
    assert message in out.stderr
    assert out.stdout == ""


def test_empty_task_is_bad_usage(tmp_path) -> None:
    out = sagent(stdin="   \n", env={"XDG_DATA_HOME": str(tmp_path)})
    assert out.returncode == 2 and "empty" in out.stderr


def test_models_lists_the_catalog_with_prices() -> None:
    out = sagent("models")
    assert out.returncode == 0
    line = next(row for row in out.stdout.splitlines() if row.startswith("claude-sonnet-4-5 "))
    assert "3.00" in line and "15.00" in line


def test_sessions_lists_nothing_for_a_new_directory(tmp_path) -> None:
    out = sagent("sessions", str(tmp_path), env={"XDG_DATA_HOME": str(tmp_path / "data")})
    assert out.returncode == 0 and "no sessions" in out.stdout
