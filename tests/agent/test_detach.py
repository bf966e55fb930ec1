"""Detaching one call by name: `agent.background("a")` moves only the call that spawned sub-agent `a` (or
calls of a tool, or one call by its id) to the background; the round goes on waiting for the others. The
model does the same with AgentSelf `detach`, called alongside the long call."""

from __future__ import annotations

import asyncio
from pathlib import Path

from sagent import Agent
from sagent.events import ToolFinished
from sagent.providers.scripted import RoutedModel, ScriptedModel, text_turn, tool_turn
from sagent.tools import AgentSelf, AgentSend, AgentSpawn, Bash, Jobs
from sagent.tools.base import tool
from sagent.types import PeerMessage, UserMessage

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


def test_agentself_detach_moves_a_long_bash_of_its_round_to_the_background(tmp_path: Path) -> None:
    # AgentSelf runs alongside the long call of the same response: the round ends without waiting for the
    # Bash, and the Bash's result arrives later as a job's result, nothing killed.
    gate = tmp_path / "go"
    build = f"while [ ! -f {gate} ]; do sleep 0.05; done; echo built $((6*7))"

    async def main() -> None:
        model = ScriptedModel(
            [
                tool_turn(("Bash", {"command": build}), ("AgentSelf", {"action": "detach", "name": "Bash"})),
                text_turn("the build goes on by itself"),
                text_turn("the build is done"),
            ]
        )
        agent = Agent(model, tools=[Bash(), AgentSelf(), Jobs()], cwd=tmp_path)
        results: dict[str, str] = {}
        async for event in agent.run("build it, and do not wait for it"):
            if isinstance(event, ToolFinished):
                results[event.result.name] = event.result.text
        assert not gate.exists()  # the round ended while the build could not have finished
        assert "moving Bash to the background" in results["AgentSelf"]
        assert "moved to the background as job-1" in results["Bash"]
        [job] = agent.jobs.running()
        gate.touch()
        assert await asyncio.wait_for(agent.wait_for_input(), 30)
        assert job.result is not None and "built 42" in job.result.text
        async for _ in agent.run():
            pass
        heard = [m.text for m in agent.history if isinstance(m, UserMessage | PeerMessage)]
        assert any("built 42" in text for text in heard)
        await agent.aclose()

    asyncio.run(main())


def test_agentself_detach_of_a_name_that_runs_nothing_lists_what_runs(tmp_path: Path) -> None:
    gate = tmp_path / "go"
    wait = f"while [ ! -f {gate} ]; do sleep 0.05; done; echo waited"

    async def main() -> None:
        model = RoutedModel(
            {
                "main": [
                    tool_turn(
                        ("AgentSpawn", {"prompt": "wait", "label": "waiter"}),
                        ("AgentSelf", {"action": "detach", "name": "nobody"}),
                        ("AgentSelf", {"action": "detach", "name": "AgentSelf"}),
                    ),
                    text_turn("noted"),
                ],
                "waiter": [tool_turn(("Bash", {"command": wait})), text_turn("the wait is over")],
            }
        )
        agent = Agent(model, tools=[Bash(), AgentSpawn(), AgentSelf(), Jobs()], cwd=tmp_path)
        errors = []
        run = asyncio.create_task(_collect(agent, errors))
        await asyncio.wait_for(_until(lambda: len(errors) == 2), 30)
        gate.touch()
        await asyncio.wait_for(run, 30)
        assert errors == [
            "no running tool call is called 'nobody'; running: waiter",
            "no running tool call is called 'AgentSelf'; running: waiter",
        ]
        await agent.aclose()

    asyncio.run(main())


async def _collect(agent: Agent, errors: list[str]) -> None:
    async for event in agent.run("go"):
        if isinstance(event, ToolFinished) and event.result.name == "AgentSelf" and event.result.is_error:
            errors.append(event.result.text)


def test_agentself_detach_of_a_call_already_in_the_background_names_its_job(tmp_path: Path) -> None:
    gate = tmp_path / "go"
    build = f"while [ ! -f {gate} ]; do sleep 0.05; done; echo built"

    async def main() -> None:
        model = ScriptedModel(
            [
                tool_turn(
                    ("Bash", {"command": build, "background": True}),
                    ("AgentSelf", {"action": "detach", "name": "Bash"}),
                ),
                text_turn("noted"),
            ]
        )
        agent = Agent(model, tools=[Bash(), AgentSelf(), Jobs()], cwd=tmp_path)
        answers = [e.result.text async for e in agent.run("go") if isinstance(e, ToolFinished)]
        assert "Bash already runs in the background as job-1; Jobs manages it" in answers
        gate.touch()
        await agent.aclose()

    asyncio.run(main())
