"""What a sub-agent costs: 100 one-shot children spawned at once by one response, on a zero-latency
scripted model, each writing its own session log. Overhead per child is the run's wall time over that of
the same run with no children, divided by the number of children; memory is the tracemalloc peak."""

from __future__ import annotations

import asyncio
import gc
import statistics
import time
import tracemalloc
from pathlib import Path

from sagent.agent.agent import Agent
from sagent.agent.session import SessionLog
from sagent.providers.scripted import ScriptedModel, agent_label, text_turn, tool_turn
from sagent.tools import AgentSend, AgentSpawn
from sagent.types import ModelRequest, ToolResult

CHILDREN = 100


def fleet_model(children: int) -> ScriptedModel:
    def respond(request: ModelRequest):
        if agent_label(request) != "main":
            return text_turn("child done")
        if any(isinstance(m, ToolResult) for m in request.messages) or children == 0:
            return text_turn("all children answered")
        return tool_turn(*[("AgentSpawn", {"prompt": f"task {n}", "label": f"c{n}"}) for n in range(children)])

    return ScriptedModel([respond] * (children + 2))


async def one_run(folder: Path, children: int) -> float:
    log = SessionLog.create(folder, {"model": "scripted"})
    agent = Agent(
        fleet_model(children), tools=[AgentSpawn(), AgentSend()], session=log, cwd=folder, max_budget_usd=None
    )
    agent.fleet.max_agents = children + 1
    start = time.perf_counter()
    async for _ in agent.run("spawn them"):
        pass
    elapsed = time.perf_counter() - start
    await agent.aclose()
    return elapsed


def fleet_costs(folder: Path, repeats: int = 5) -> tuple[float, float, float]:
    """(ms of overhead per child, KiB of peak memory per child, ms for the whole run)."""
    asyncio.run(one_run(folder, CHILDREN))  # warm imports and caches
    base = statistics.median(asyncio.run(one_run(folder, 0)) for _ in range(repeats))
    full = statistics.median(asyncio.run(one_run(folder, CHILDREN)) for _ in range(repeats))
    gc.collect()
    tracemalloc.start()
    asyncio.run(one_run(folder, 0))
    _, base_peak = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    asyncio.run(one_run(folder, CHILDREN))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return (full - base) * 1000 / CHILDREN, (peak - base_peak) / 1024 / CHILDREN, full * 1000
