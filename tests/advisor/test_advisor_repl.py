"""`/advisor` shows the advisor and its consultations; `/cost` lists its spend apart."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from sagent.advisor import Advisor, AdvisorPolicy
from sagent.agent.agent import Agent
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.repl.app import Repl
from sagent.repl.commands import run_command
from sagent.repl.render import Settings
from sagent.types import Usage


def test_advisor_and_cost_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    strong = ScriptedModel([text_turn("look at x", Usage(500, 50))], name="claude-opus-4-7")
    executor = ScriptedModel([tool_turn(("Advisor", {"question": "?"})), text_turn("ok")], name="claude-haiku-4-5")
    agent = Agent(executor, cwd=tmp_path, advisor=Advisor(strong, AdvisorPolicy(stagnation=None)))
    bare = Agent(ScriptedModel([]), cwd=tmp_path)
    repl = Repl(agent, new_agent=lambda path=None: agent, settings=Settings(width=120, color=False))
    asyncio.run(agent.ask("go"))
    asyncio.run(run_command(repl, "/advisor"))
    out = capsys.readouterr().out
    assert "advisor scripted/claude-opus-4-7: 1 of 3 consultations" in out and "stagnation off" in out
    assert "trigger: tool" in out
    assert "marker [NEED_ADVICE] [[ASK_ADVISOR]]," in out and "answers structured" in out
    asyncio.run(run_command(repl, "/cost"))
    cost = capsys.readouterr().out
    assert "advisor/claude-opus-4-7" in cost and "claude-haiku-4-5" in cost
    repl.agent = bare
    asyncio.run(run_command(repl, "/advisor"))
    assert "no advisor" in capsys.readouterr().out
    asyncio.run(agent.aclose())
    asyncio.run(bare.aclose())
