"""A refused spawn says why: a child at the depth limit that calls AgentSpawn anyway (it is not offered
the tool) is told it is at the limit, not that the tool is unknown."""

from __future__ import annotations

from sagent import Agent, Fleet
from sagent.providers.scripted import RoutedModel, text_turn, tool_turn
from sagent.tools import AgentSend, AgentSpawn
from sagent.types import ToolResult


async def test_a_child_at_the_depth_limit_is_told_why_it_cannot_spawn() -> None:
    model = RoutedModel(
        {
            "main": [tool_turn(("AgentSpawn", {"prompt": "work", "label": "w"})), text_turn("done")],
            "w": [tool_turn(("AgentSpawn", {"prompt": "deeper"})), text_turn("did it myself")],
        }
    )
    main = Agent(model, tools=[AgentSpawn(), AgentSend()], fleet=Fleet(max_depth=1), max_budget_usd=None)
    await main.ask("go")
    child_requests = model.requests("w")
    results = [m for m in child_requests[-1].messages if isinstance(m, ToolResult)]
    assert results and results[0].is_error
    assert "cannot spawn" in results[0].text and "depth limit" in results[0].text
    assert "unknown tool" not in results[0].text
    await main.aclose()
