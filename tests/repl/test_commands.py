"""A slash command is one decorated function: registering it is all it takes to be run, listed by /help and
completed after `/` (CONTRIBUTING.md, "Extending sagent")."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from prompt_toolkit.document import Document

from sagent.agent.agent import Agent
from sagent.providers.scripted import ScriptedModel
from sagent.repl.app import Repl
from sagent.repl.commands import COMMANDS, CommandError, command, run_command
from sagent.repl.host import ReplHost
from sagent.repl.render import Settings
from sagent.repl.screen import SlashCompleter


@pytest.fixture
def repl(tmp_path: Path) -> Iterator[Repl]:
    agent = Agent(ScriptedModel([]), cwd=tmp_path)
    yield Repl(agent, new_agent=lambda path=None: agent, settings=Settings(width=100, color=False))
    asyncio.run(agent.aclose())


@pytest.fixture
def greet() -> Iterator[None]:
    """A new command, defined the way a contributor adds one: the decorator and nothing else."""

    @command("greet", "say hello to someone", "/greet NAME")
    def _greet(repl: ReplHost, arg: str) -> list[str]:
        if not arg:
            raise CommandError("usage: /greet NAME")
        return [f"hello, {arg}, from {repl.agent.model.name}"]

    try:
        yield
    finally:
        del COMMANDS["greet"]


def test_the_decorator_returns_the_function_so_commands_can_call_each_other() -> None:
    def handler(repl: ReplHost, arg: str) -> list[str]:
        return [arg]

    try:
        assert command("echo-test", "echo")(handler) is handler
        assert COMMANDS["echo-test"].handler is handler
    finally:
        del COMMANDS["echo-test"]


def test_a_new_command_runs_and_is_in_help_and_completion(
    greet: None, repl: Repl, capsys: pytest.CaptureFixture[str]
) -> None:
    asyncio.run(run_command(repl, "/greet Ada"))
    assert capsys.readouterr().out == "hello, Ada, from scripted\n"
    asyncio.run(run_command(repl, "/greet"))
    assert capsys.readouterr().out == "/greet: usage: /greet NAME\n"

    asyncio.run(run_command(repl, "/help"))
    out = capsys.readouterr().out.splitlines()
    listed = [line for line in out if "/greet" in line]
    assert len(listed) == 1 and listed[0].startswith("  /greet NAME ")
    # Its description starts in the column where the others' do.
    column = next(line for line in out if line.startswith("  /help ")).index("the commands and keys")
    assert listed[0].index("say hello to someone") == column

    completions = list(SlashCompleter(repl).get_completions(Document("/gr"), None))
    assert [(c.text, c.display_meta_text) for c in completions] == [("/greet", "say hello to someone")]


def test_bare_resume_in_a_directory_without_sessions_says_so(repl: Repl, capsys: pytest.CaptureFixture[str]) -> None:
    asyncio.run(run_command(repl, "/resume"))
    assert capsys.readouterr().out == "no sessions here yet\n"
