"""`/bg LABEL` moves one running call (a sub-agent's, by its label) to the background while the round
waits on the others; a name that picks nothing says what runs."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from sagent.agent.agent import Agent
from sagent.providers.scripted import RoutedModel, text_turn, tool_turn
from sagent.repl.app import Repl
from sagent.repl.commands import run_command
from sagent.repl.render import Settings
from sagent.tools import AgentSend, AgentSpawn, Jobs
from sagent.tools.base import tool

gates: dict[str, asyncio.Event] = {}  # made inside the test's event loop


@tool
async def wait_for(gate: str) -> str:
    """Wait until the test opens the gate.

    Args:
        gate: its name
    """
    await gates.setdefault(gate, asyncio.Event()).wait()
    return f"{gate} opened"


def test_bg_label_detaches_one_child_and_names_what_runs_when_nothing_matches(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async def main() -> None:
        gates.clear()
        model = RoutedModel(
            {
                "main": [
                    tool_turn(
                        ("AgentSpawn", {"prompt": "a", "label": "lint"}),
                        ("AgentSpawn", {"prompt": "b", "label": "tests"}),
                    ),
                    text_turn("tests passed; lint goes on"),
                    text_turn("lint reported"),
                ],
                "lint": [tool_turn(("wait_for", {"gate": "lint"})), text_turn("lint done")],
                "tests": [tool_turn(("wait_for", {"gate": "tests"})), text_turn("tests done")],
            }
        )
        agent = Agent(model, tools=[wait_for, AgentSpawn(), AgentSend(), Jobs()], cwd=tmp_path)
        repl = Repl(agent, new_agent=lambda path=None: agent, settings=Settings(width=100, color=False))
        repl.submit("go")
        await asyncio.wait_for(_until(lambda: {"lint", "tests"} <= set(gates)), 30)
        capsys.readouterr()
        await run_command(repl, "/bg nobody")
        assert "no running tool call is called 'nobody'; running: lint, tests" in capsys.readouterr().out
        assert not agent.jobs.all()
        await run_command(repl, "/bg lint")
        assert "moving AgentSpawn(lint) to the background" in capsys.readouterr().out
        await asyncio.wait_for(_until(lambda: bool(agent.jobs.all())), 30)
        [job] = agent.jobs.all()
        assert job.call.arguments["label"] == "lint" and job.state == "running"
        assert repl.busy  # the round still waits for the tests child
        gates["tests"].set()
        gates["lint"].set()
        assert repl.task is not None
        await asyncio.wait_for(repl.task, 30)
        await agent.aclose()

    asyncio.run(main())


async def _until(check) -> None:  # type: ignore[no-untyped-def]
    while not check():
        await asyncio.sleep(0.01)
