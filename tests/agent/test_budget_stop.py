"""When a tree's budget is spent, every agent of the tree stops as `error_max_budget_usd`: one busy with a
long tool call is stopped, not waited for, and none ends as "interrupted by the user"."""

from __future__ import annotations

import asyncio

from sagent.agent.agent import Agent
from sagent.agent.hooks import Hook
from sagent.events import Event, Result, ToolFinished
from sagent.providers.scripted import RoutedModel, text_turn, tool_turn
from sagent.tools import AgentSend, AgentSpawn
from sagent.tools.base import tool
from sagent.types import Usage

PRICED = "claude-sonnet-4-6"  # in the catalog, so every response has a real cost
never = asyncio.Event  # made inside the test's loop


async def run_to_end(agent: Agent, prompt: str) -> tuple[list[object], Result]:
    events = [event async for event in agent.run(prompt)]
    assert isinstance(events[-1], Result)
    return events, events[-1]


def test_the_budget_spent_by_one_child_stops_a_sibling_stuck_in_a_long_call_and_the_root() -> None:
    async def main() -> None:
        gate = never()  # never set: the stuck child's tool would run for good
        building = never()

        @tool
        async def build() -> str:
            """Build for a long time."""
            building.set()
            await gate.wait()
            return "built"

        @tool
        async def watch_build() -> str:
            """Wait until the build runs."""
            await building.wait()
            return "it runs"

        expensive = Usage(input_tokens=1_000_000)  # $3 on claude-sonnet-4-6, over the $1 cap
        model = RoutedModel(
            {
                "main": [
                    tool_turn(
                        ("AgentSpawn", {"prompt": "build it", "label": "stuck"}),
                        ("AgentSpawn", {"prompt": "think hard", "label": "spender"}),
                    ),
                    text_turn("never reached"),
                ],
                "stuck": [tool_turn(("build", {})), text_turn("never reached")],
                "spender": [tool_turn(("watch_build", {})), text_turn("an expensive thought", usage=expensive)],
            },
            name=PRICED,
            provider="anthropic",
        )
        results: dict[str, Result] = {}
        finished: list[ToolFinished] = []

        class Watch(Hook):  # sub-agents run their parent's hooks
            def on_event(self, agent: Agent, event: Event) -> None:
                if isinstance(event, Result):
                    results[agent.label] = event
                if isinstance(event, ToolFinished):
                    finished.append(event)

        root = Agent(model, tools=[AgentSpawn(), AgentSend(), build, watch_build], max_budget_usd=1.0, hooks=[Watch()])
        _, result = await asyncio.wait_for(run_to_end(root, "go"), 30)
        assert result.subtype == "error_max_budget_usd"
        assert "reaches the budget" in result.text
        await asyncio.wait_for(_until(lambda: "stuck" in results), 30)
        assert results["stuck"].subtype == "error_max_budget_usd", results["stuck"]
        assert "interrupted by the user" not in results["stuck"].text
        stopped = [e.result.text for e in finished if e.result.name == "build"]
        assert stopped == ["stopped: the budget (max_budget_usd) was reached before this tool call finished"]
        assert not gate.is_set()
        await root.aclose()

    asyncio.run(main())


async def _until(check) -> None:  # type: ignore[no-untyped-def]
    while not check():
        await asyncio.sleep(0.01)
