"""AgentSnapshot: one frozen value of what an agent and its sub-agents are doing, and AgentSelf status
written from it."""

from __future__ import annotations

import dataclasses

import pytest

from sagent.agent.agent import Agent
from sagent.providers.scripted import RoutedModel, ScriptedModel, text_turn, tool_turn
from sagent.snapshot import AgentSnapshot
from sagent.tools import AgentSelf, AgentSpawn, Jobs
from sagent.types import ToolResult

PRICED = "claude-sonnet-4-6"  # in the catalog, so responses have a cost


async def test_a_snapshot_holds_the_tree_its_spend_and_its_state() -> None:
    model = RoutedModel(
        {
            "main": [tool_turn(("AgentSpawn", {"prompt": "go", "label": "w", "persistent": True})), text_turn("ok")],
            "w": [text_turn("working on it")],
        },
        name=PRICED,
    )
    main = Agent(model, tools=[AgentSpawn(), Jobs()], max_budget_usd=10.0, effort="low")
    idle = main.snapshot()
    assert (idle.label, idle.status, idle.depth, idle.children, idle.messages) == ("main", "idle", 0, (), 0)
    assert (idle.provider, idle.model, idle.effort, idle.budget_usd) == ("scripted", PRICED, "low", 10.0)
    main.send("first")
    main.send("second")
    assert main.snapshot().queued == 2
    [e async for e in main.run()]
    await main.children["w"].wait()
    now = main.snapshot()
    assert now.queued == 0 and now.messages == len(main.history) and now.status == "idle"
    [child] = now.children
    assert (child.label, child.depth, child.persistent, child.status) == ("w", 1, True, "idle")
    assert child.own_usd > 0 and now.total_usd == pytest.approx(now.own_usd + child.total_usd)
    assert now.usage.input_tokens > child.usage.input_tokens > 0
    assert now.budget_spent_usd == pytest.approx(now.total_usd)
    assert (now.context_tokens == main.context_tokens and now.context_window == 200_000) or now.context_window
    assert [s.label for s in now.walk()] == ["main", "w"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        now.label = "x"  # type: ignore[misc]
    await main.aclose()
    assert main.snapshot().status == "stopped"


async def test_agent_self_status_reads_the_snapshot() -> None:
    model = ScriptedModel([tool_turn(("AgentSelf", {"action": "status"})), text_turn("seen")])
    agent = Agent(model, tools=[AgentSelf()], label="solo", max_budget_usd=3.0)
    [e async for e in agent.run("who am I?")]
    status = next(m for m in agent.history if isinstance(m, ToolResult)).text
    snap = agent.snapshot()
    assert isinstance(snap, AgentSnapshot)
    assert "label: solo (depth 0; sub-agents may go to depth 3)" in status
    assert f"model: {snap.provider}/{snap.model}" in status
    assert "budget: $0.0000 of $3.0000 spent" in status
