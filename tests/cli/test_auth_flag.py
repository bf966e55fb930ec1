"""`--auth credentials|api-key` for the CLI-backed providers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sagent.cli.auth_flag import resolve_auth
from sagent.cli.flags import build_parser


def _args(*argv: str):  # type: ignore[no-untyped-def]
    return build_parser().parse_args(list(argv))


def test_api_key_bills_sagents_variable_first_then_the_vendors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "vendor")
    args = _args("--provider", "AnthropicCLI", "--auth", "api-key")
    assert resolve_auth(args) is None and args.api_key_env == "ANTHROPIC_API_KEY"
    monkeypatch.setenv("SAGENT_CLAUDE_API_KEY", "own")
    args = _args("--provider", "claude-cli", "--auth", "api-key")
    assert resolve_auth(args) is None and args.api_key_env == "SAGENT_CLAUDE_API_KEY"
    monkeypatch.setenv("GEMINI_API_KEY", "g")
    args = _args("--provider", "GoogleCLI", "--auth", "api-key")
    assert resolve_auth(args) is None and args.api_key_env == "GEMINI_API_KEY"


def test_credentials_ignore_a_key_set_for_other_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SAGENT_CODEX_API_KEY", "set for another run")
    args = _args("--provider", "OpenAISubscription", "--auth", "credentials")
    assert resolve_auth(args) is None
    assert "SAGENT_CODEX_API_KEY" not in os.environ and args.api_key_env is None


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--auth", "api-key"], "give --provider with one of AnthropicCLI"),
        (["--provider", "anthropic", "--auth", "credentials"], "give --provider with one of"),
        (["--provider", "AnthropicCLI", "--auth", "api-key"], "set SAGENT_CLAUDE_API_KEY or ANTHROPIC_API_KEY"),
        (["--provider", "AnthropicCLI", "--auth", "token"], "invalid choice"),
    ],
)
def test_a_wrong_use_exits_2_and_says_why(tmp_path: Path, argv: list[str], said: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    done = subprocess.run(
        [sys.executable, "-m", "sagent", *argv, "-p", "hi"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert said in done.stderr
