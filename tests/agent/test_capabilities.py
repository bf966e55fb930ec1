"""Tools declare what the loop must know of them (may run in the background, spawns agents, manages jobs);
the loop asks the tool instead of knowing tool names, so a tool of the user's gets the same treatment as a
built-in one that declares the same."""

from __future__ import annotations

import asyncio
from typing import Any

from sagent.agent.agent import Agent
from sagent.agent.fleet import Fleet
from sagent.events import ToolFinished
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.tools import AgentSend, AgentSpawn, Jobs
from sagent.tools.base import AnyOrder, ToolContext


class Waiter(Jobs):
    """The job tool under another name."""

    name = "Waiter"


class Delegate(AgentSpawn):
    """A spawning tool under another name."""

    name = "Delegate"


class Poll(AnyOrder):
    """A user's tool that waits on something outside: it declares it is not work for the background."""

    name = "Poll"
    description = "wait for the queue to drain"
    input_schema: dict[str, Any] = {"type": "object", "properties": {}}
    may_background = False

    def __init__(self) -> None:
        self.gate = asyncio.Event()

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        await asyncio.wait_for(self.gate.wait(), 5)
        return "drained"


class Build(AnyOrder):
    """A plain user tool that declares nothing: it has the defaults."""

    name = "Build"
    description = "build"
    input_schema: dict[str, Any] = {"type": "object", "properties": {}}

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        return "built"


def schemas(agent: Agent) -> dict[str, dict[str, Any]]:
    return {t.name: t.input_schema["properties"] for t in agent.request().tools}


def test_the_tools_say_which_take_background_not_their_names() -> None:
    agent = Agent(ScriptedModel([]), tools=[Build(), Poll(), Waiter(), AgentSend()])
    offered = {name for name, properties in schemas(agent).items() if "background" in properties}
    assert offered == {"Build"}
    without = Agent(ScriptedModel([]), tools=[Build(), Poll()])
    assert all("background" not in p for p in schemas(without).values())  # nothing manages jobs


async def test_a_call_that_may_not_background_stays_when_the_others_move() -> None:
    poll = Poll()
    model = ScriptedModel([tool_turn(("Poll", {})), text_turn("done")])
    agent = Agent(model, tools=[poll, Waiter()], background_after=0.05)
    loop = asyncio.get_running_loop()
    loop.call_later(0.3, poll.gate.set)  # past the time limit: a backgroundable call would have moved
    events = [e async for e in agent.run("drain it")]
    texts = [e.result.text for e in events if isinstance(e, ToolFinished)]
    assert texts == ["drained"]
    await agent.aclose()


async def test_a_tool_that_spawns_agents_is_withheld_at_the_depth_limit() -> None:
    fleet = Fleet(max_depth=1, models=lambda provider, name: ScriptedModel([text_turn("hi")]))
    main = Agent(ScriptedModel([]), tools=[Delegate(), AgentSend(), Build()], fleet=fleet)
    worker = main.spawn("wait for work", label="worker", persistent=True)
    assert sorted(worker.agent.tools) == ["AgentSend", "Build"]
    await main.aclose()
