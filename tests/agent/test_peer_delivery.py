"""A property: a message sent to a busy agent is delivered at its next safe point, exactly once, in order,
whatever the moment it arrives (during a streamed response, a tool round, between them, after the run)."""

from __future__ import annotations

import asyncio
from unittest.mock import patch

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagent.agent import rounds as rounds_module
from sagent.agent.agent import Agent
from sagent.agent.fleet import Fleet
from sagent.events import Result
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.tools.base import tool
from sagent.types import ModelRequest, PeerMessage, ToolResult


def worker_model(rounds: int, parallel: int) -> ScriptedModel:
    def respond(request: ModelRequest):
        done = sum(isinstance(m, ToolResult) for m in request.messages)
        if done < rounds * parallel:
            return tool_turn(*[("work", {"steps": n + 1}) for n in range(parallel)], text="working on it")
        return text_turn("all done, and a long enough answer to stream in several chunks")

    return ScriptedModel([respond] * 100, chunk_size=7)


@tool
async def work(steps: int) -> str:
    """Do some work.

    Args:
        steps: how many times to yield to the event loop
    """
    for _ in range(steps):
        await asyncio.sleep(0)
    return f"worked {steps}"


async def scenario(rounds: int, parallel: int, sends: list[tuple[int, str]]) -> None:
    fleet = Fleet()
    model = worker_model(rounds, parallel)
    worker = Agent(model, tools=[work], label="worker", fleet=fleet)
    senders = {name: Agent(ScriptedModel([]), label=name, fleet=fleet) for name in ("boss", "peer")}
    schedule: dict[int, list[str]] = {}
    for index, sender in sends:
        schedule.setdefault(index, []).append(sender)
    sent: list[tuple[PeerMessage, int]] = []  # each message, with how many requests the model had seen then
    receipts = []

    def send_due(index: int, running: bool) -> None:
        for sender in schedule.pop(index, []):
            text = f"note {len(sent)} from {sender}"
            receipt = senders[sender].send("worker", text)
            if running:
                receipts.append(receipt)
            sent.append((PeerMessage(sender, text), len(model.requests)))

    index = 0
    async for event in worker.run("start"):
        send_due(index, running=not isinstance(event, Result))
        index += 1
    for late in sorted(schedule):  # what was due after the run ended arrives while the worker is idle
        send_due(late, running=False)
    while worker.has_pending_input:
        assert await worker.wait_for_input()
        async for _ in worker.run():
            pass

    delivered = [m for m in worker.history if isinstance(m, PeerMessage)]
    # Exactly once each, in the order sent.
    assert delivered == [m for m, _ in sent]
    for message, seen in sent:
        # Not in any request made before it was sent; in the very next one (its next safe point).
        assert all(message not in r.messages for r in model.requests[:seen])
        assert message in model.requests[seen].messages
    # The sender was told the worker was busy.
    assert all(r.was_working and r.to == "worker" for r in receipts)
    for agent in (worker, *senders.values()):
        await agent.aclose()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rounds=st.integers(0, 3),
    parallel=st.integers(1, 3),
    sends=st.lists(st.tuples(st.integers(0, 60), st.sampled_from(["boss", "peer"])), max_size=8),
)
def test_a_message_to_a_busy_agent_arrives_at_the_next_safe_point_and_is_never_lost(
    rounds: int, parallel: int, sends: list[tuple[int, str]]
) -> None:
    # The work here takes no time; on a loaded machine it must not outlast the half second after which a
    # waiting message sends it to the background (that has its own tests), adding a job's report.
    with patch.object(rounds_module, "PREEMPT_AFTER", 60.0):
        asyncio.run(scenario(rounds, parallel, sends))
