"""A response on its way when the budget stop lands is counted: the provider bills the prompt it read and
what it wrote before the stop cut it off, so the tree's spend (and `total_cost_usd`) includes it rather than
leaving it out."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from sagent.agent.agent import Agent
from sagent.events import ModelEvent, Result, TextDelta
from sagent.providers.catalog import cost_of
from sagent.providers.scripted import RoutedModel, ScriptedModel, text_turn, tool_turn
from sagent.tools import AgentSpawn
from sagent.tools.base import tool
from sagent.types import ModelRequest, Usage

PRICED = "claude-sonnet-4-6"


class HalfwayModel(ScriptedModel):
    """Starts its response, then is still writing it when the stop lands."""

    def __init__(self, started: asyncio.Event) -> None:
        super().__init__([], name=PRICED, provider="anthropic")
        self.started = started

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        self.requests.append(request)
        yield TextDelta("x" * 400)  # 100 tokens written before the stop
        self.started.set()
        await asyncio.Event().wait()  # the rest never comes: the stop cancels it
        yield TextDelta("never")


def test_a_response_cut_off_by_the_budget_stop_is_counted_in_the_trees_spend() -> None:
    async def main() -> None:
        started = asyncio.Event()

        @tool
        async def wait_for_slow() -> str:
            """Wait until the slow sub-agent's response is on its way."""
            await started.wait()
            return "it streams"

        expensive = Usage(input_tokens=1_000_000)  # $3 on claude-sonnet-4-6, over the $1 cap
        slow = HalfwayModel(started)
        model = RoutedModel(
            {
                "main": [
                    tool_turn(
                        ("AgentSpawn", {"prompt": "think slowly", "label": "slow"}),
                        ("AgentSpawn", {"prompt": "think hard", "label": "spender"}),
                    ),
                    text_turn("never reached"),
                ],
                "slow": slow,
                "spender": [tool_turn(("wait_for_slow", {})), text_turn("an expensive thought", usage=expensive)],
            },
            name=PRICED,
            provider="anthropic",
        )
        root = Agent(model, tools=[AgentSpawn(), wait_for_slow], max_budget_usd=1.0)
        events = [e async for e in root.run("go")]
        result = events[-1]
        assert isinstance(result, Result) and result.subtype == "error_max_budget_usd"
        child = root.children["slow"].agent
        await asyncio.wait_for(_until(lambda: PRICED in child.cost.own_by_model), 30)
        counted = child.cost.own_by_model[PRICED]
        assert counted.responses == 1
        assert counted.usage.output_tokens == 100 and counted.usage.input_tokens > 0
        assert counted.cost.usd_total > 0
        # The root's total holds it: every complete response plus the one cut off.
        assert root.cost.spent == sum(
            (s.cost.usd_total for s in root.cost.by_model.values()), start=0 * root.cost.spent
        )
        assert root.cost.by_model[PRICED].responses >= 4  # main's, the spender's two, and the cut-off one
        await root.aclose()

    asyncio.run(main())


def test_a_cut_off_response_is_counted_as_its_prompt_and_what_was_streamed() -> None:
    from sagent.agent.gate import cut_off_usage

    assert cut_off_usage(1_000, 0) == Usage(input_tokens=1_000, output_tokens=1)
    assert cut_off_usage(1_000, 401) == Usage(input_tokens=1_000, output_tokens=101)
    assert cost_of(PRICED, cut_off_usage(1_000_000, 0)).usd_total >= 3


async def _until(check) -> None:  # type: ignore[no-untyped-def]
    while not check():
        await asyncio.sleep(0.01)
