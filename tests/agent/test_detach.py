"""Detaching one call by name: `agent.background("a")` moves only the call that spawned sub-agent `a` (or
calls of a tool, or one call by its id) to the background; the round goes on waiting for the others."""

from __future__ import annotations

import asyncio

from sagent import Agent
from sagent.events import ToolFinished
from sagent.providers.scripted import RoutedModel, text_turn, tool_turn
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


def test_background_by_label_moves_only_that_childs_call_and_the_round_waits_for_the_rest() -> None:
    async def main() -> None:
        gates.clear()
        model = RoutedModel(
            {
                "main": [
                    tool_turn(
                        ("AgentSpawn", {"prompt": "a", "label": "a"}),
                        ("AgentSpawn", {"prompt": "b", "label": "b"}),
                    ),
                    text_turn("b answered; a goes on"),
                    text_turn("a reported"),
                ],
                "a": [tool_turn(("wait_for", {"gate": "a"})), text_turn("a done")],
                "b": [tool_turn(("wait_for", {"gate": "b"})), text_turn("b done")],
            }
        )
        agent = Agent(model, tools=[wait_for, AgentSpawn(), AgentSend(), Jobs()])
        finished: dict[str, str] = {}
        spawns: dict[str, str] = {}

        async def drive() -> None:
            async for event in agent.run("go"):
                if isinstance(event, ToolFinished):
                    finished[event.result.call_id] = event.result.text

        run = asyncio.create_task(drive())
        await asyncio.wait_for(_until(lambda: {"a", "b"} <= set(agent.children)), 30)
        for message in agent.history:
            for call in getattr(message, "tool_calls", ()):
                spawns[call.arguments["label"]] = call.id
        await asyncio.wait_for(_until(lambda: "a" in gates and "b" in gates), 30)  # both children wait
        agent.background("a")
        await asyncio.wait_for(_until(lambda: spawns["a"] in finished), 30)
        assert "moved to the background as job-1" in finished[spawns["a"]]
        assert spawns["b"] not in finished  # still waited for
        [job] = agent.jobs.running()
        assert job.call.id == spawns["a"]
        gates["b"].set()
        await asyncio.wait_for(_until(lambda: spawns["b"] in finished), 30)
        assert "b done" in finished[spawns["b"]]
        gates["a"].set()
        await asyncio.wait_for(run, 30)
        if not job.done.is_set():  # the run ended first: its result arrives as input for the next one
            assert await asyncio.wait_for(agent.wait_for_input(), 30)
        assert job.result is not None and "a done" in job.result.text
        await agent.aclose()

    asyncio.run(main())


async def _until(check) -> None:  # type: ignore[no-untyped-def]
    while not check():
        await asyncio.sleep(0.01)
