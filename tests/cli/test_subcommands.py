"""Every subcommand explains itself: `sagent X --help` (and `-h`, and each verb's) prints its help and exits
0, `sagent --help` lists them all, one line each, and run flags before a subcommand never turn its name
into a task sent to a model. The subcommands come from the table `main` dispatches from, so a new one is
checked here without a change to this file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sagent.cli.main import main
from sagent.cli.subcommands import SUBCOMMANDS
from tests.fakes.anthropic_server import FakeAnthropic, text_response

COMMAND_LINES = [[sub.name] for sub in SUBCOMMANDS] + [[sub.name, verb] for sub in SUBCOMMANDS for verb in sub.verbs]


def run_main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as done:  # argparse's help exits
        code = done.code if isinstance(done.code, int) else 0 if done.code is None else 1
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(autouse=True)
def quiet_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)


def test_the_table_holds_the_commands_the_issue_names() -> None:
    names = {sub.name for sub in SUBCOMMANDS}
    assert {"models", "providers", "sessions", "config", "trust", "mcp", "compare", "trace", "replay"} <= names
    assert len(COMMAND_LINES) > len(SUBCOMMANDS)  # verbs too


@pytest.mark.parametrize("words", COMMAND_LINES, ids=" ".join)
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_every_subcommand_prints_its_help_and_exits_0(
    words: list[str], flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_main([*words, flag], capsys)
    assert code == 0, err
    assert "usage" in out.lower()
    assert "error" not in err.lower() and "required" not in err.lower()


@pytest.mark.parametrize("words", [["compare", "a", "--help"], ["replay", "SESSION", "-h"], ["trace", "x", "--help"]])
def test_help_among_other_arguments_is_still_help(words: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_main(words, capsys)
    assert code == 0 and out.startswith("usage: sagent " + words[0])


def test_sagent_help_lists_every_subcommand_on_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_main(["--help"], capsys)
    assert code == 0
    lines = out.splitlines()
    for sub in SUBCOMMANDS:
        listed = [line for line in lines if line.strip().startswith(f"sagent {sub.name} ")]
        listed += [line for line in lines if line.strip() == f"sagent {sub.name}"]
        assert listed, f"sagent --help does not list {sub.name}"
        assert sub.summary in listed[0]
    for form in ("sagent sessions search", "sagent sessions verify", "sagent mcp", "sagent replay", "sagent trace"):
        assert any(line.strip().startswith(form) for line in lines), form


@pytest.mark.parametrize(
    "argv, shown",
    [
        (["--model", "gpt-5.4", "config"], "gpt-5.4"),
        (["--model=gpt-5.4", "config"], "gpt-5.4"),
        (["--provider", "openai", "--max-tool-rounds", "3", "config", "--json"], '"openai"'),
        (["--no-memory", "--model", "claude-sonnet-4-6", "config"], "claude-sonnet-4-6"),
        (["--mod", "gpt-5.4", "config"], "gpt-5.4"),  # an abbreviation, as argparse takes one
    ],
)
def test_run_flags_before_config_apply_to_it(argv: list[str], shown: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_main(argv, capsys)
    assert code == 0, err
    assert shown in out


@pytest.mark.parametrize(
    "argv",
    [
        ["--provider", "anthropic", "sessions"],
        ["--model", "m", "models"],
        ["--cwd", ".", "providers"],
        ["--model", "m", "compare", "a", "b"],
        ["--max-budget-usd", "1", "trust", "--list"],
    ],
)
def test_run_flags_before_another_subcommand_are_a_clear_error(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_main(argv, capsys)
    assert code == 2
    assert err.startswith("sagent: error: ") and "--help" in err
    assert out == ""


def run_sagent(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sagent.cli.main", *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["--model", "claude-sonnet-4-6", "config"],
        ["--provider", "anthropic", "sessions"],
        ["--model", "claude-sonnet-4-6", "--output-format", "json", "models"],
        ["--max-tool-rounds", "2", "mcp", "list"],
    ],
)
def test_no_subcommand_name_is_ever_sent_to_the_model(argv: list[str], tmp_path: Path) -> None:
    with FakeAnthropic([text_response("paid answer")] * 2) as fake:
        env = {
            **os.environ,
            "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests-0001",
            "ANTHROPIC_BASE_URL": fake.url,
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "XDG_DATA_HOME": str(tmp_path / "data"),
        }
        done = run_sagent(argv, env, tmp_path)
        assert fake.requests == []
    assert "paid answer" not in done.stdout
    assert done.returncode in (0, 2), done.stderr


def test_a_task_given_with_p_is_still_a_task(tmp_path: Path) -> None:
    """`-p config` is a task named config: the flag takes the word, as argparse reads it."""
    with FakeAnthropic([text_response("an answer")]) as fake:
        env = {
            **os.environ,
            "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests-0001",
            "ANTHROPIC_BASE_URL": fake.url,
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "XDG_DATA_HOME": str(tmp_path / "data"),
        }
        done = run_sagent(["--model", "claude-sonnet-4-6", "-p", "config"], env, tmp_path)
        assert len(fake.requests) == 1
    assert done.returncode == 0 and "an answer" in done.stdout


def test_every_subcommand_and_verb_is_in_docs_cli() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text()
    for sub in SUBCOMMANDS:
        assert f"`sagent {sub.name}" in text, sub.name
        for verb in sub.verbs:
            assert f"sagent {sub.name} {verb}" in text or f"{verb}" in text.split(f"`sagent {sub.name}", 1)[1][:400], (
                sub.name,
                verb,
            )
