"""Persistent sub-agents on a worker stop before their tree's budget, not after: each of their requests is
held against the tree's budget in the parent's process before it is sent, and what they spend is counted
there as the hold goes. Two of them working at once on one budget never take the tree past it."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

from sagent.events import Result
from sagent.tools import builtin_tools
from tests.fakes.anthropic_server import FakeAnthropic, Reply, text_response, tool_use_response
from tests.fakes.nats_server import NatsServer
from tests.fleet_nats.helpers import EventTap, Served, fleet, sent_texts, wait_until

BUDGET = 0.06
# claude-sonnet-4-6 at $3 / $15 per million tokens: a lead's response is 100 in and 20 out; a worker's
# response is made to cost about a cent, less than the gate's estimate of sagent's request (so what the
# tree holds covers what it spends, as it does in one process).
LEAD_RESPONSE = 100 * 3 / 1e6 + 20 * 15 / 1e6
WORKER_INPUT = 3200
WORKER_RESPONSE = WORKER_INPUT * 3 / 1e6 + 20 * 15 / 1e6


def lead(request: dict[str, Any]) -> Reply:
    if sent_texts(request)[-1:] == ["start the team"]:
        persistent = {"on": "worker1", "persistent": True}
        return tool_use_response(
            [
                ("AgentSpawn", {"prompt": "task-a: keep checking", "label": "checker-a", **persistent}),
                ("AgentSpawn", {"prompt": "task-b: keep checking", "label": "checker-b", **persistent}),
            ]
        )
    return text_response("ok")


def worker(request: dict[str, Any]) -> Reply:
    """Each child checks again and again, each response about a cent, until its tree stops it."""
    return tool_use_response([("Bash", {"command": "true"})], input_tokens=WORKER_INPUT)


def test_two_persistent_children_on_a_worker_never_take_the_tree_past_its_budget(
    nats: NatsServer, tmp_path: Path
) -> None:
    tap = EventTap(nats, "f1")
    bypass = ("--permission-mode", "bypassPermissions")
    with FakeAnthropic([lead] * 40) as lead_fake, FakeAnthropic([worker] * 40) as worker_fake:
        host = Served(nats, "f1", "worker1", worker_fake, tmp_path / "w", *bypass)
        boss = Served(nats, "f1", "lead", lead_fake, tmp_path / "l", "--max-budget-usd", str(BUDGET), *bypass)
        try:
            assert fleet(nats, "f1", boss.env, "send", "lead", "start the team").returncode == 0
            ended = {
                label: wait_until(lambda label=label: tap.results(label), f"{label}'s end")[-1]  # type: ignore[misc]
                for label in ("checker-a", "checker-b")
            }
            for result in ended.values():
                assert result["subtype"] == "error_max_budget_usd", result
            assert len(worker_fake.requests) >= 2  # they worked before the budget stopped them

            def spent() -> float:  # every request a fake answered was counted at its price
                return len(lead_fake.requests) * LEAD_RESPONSE + len(worker_fake.requests) * WORKER_RESPONSE

            # The lead's tree counted every response of its children (the fleet's listing shows it), and the
            # whole tree stayed within its budget.
            wait_until(
                lambda: any(
                    row.startswith("lead ") and row.endswith(f"${spent():.4f}")
                    for row in fleet(nats, "f1", boss.env, "ls").stdout.splitlines()
                ),
                "the lead's cost to count every response of its tree",
            )
            assert spent() <= BUDGET, f"the tree spent ${spent():.4f} of a ${BUDGET} budget"
        finally:
            boss.stop()
            host.stop()
            tap.close()


class Keeper:
    """A budget kept elsewhere, in this process: holds up to `room`, and records what is asked of it."""

    def __init__(self, room: str) -> None:
        self.room = Decimal(room)
        self.held = Decimal(0)
        self.log: list[str] = []

    async def hold(self, amount: Decimal) -> str | None:
        if self.held + amount > self.room:
            self.log.append("refused")
            return "stopped before a request: the tree's budget is kept elsewhere and would be crossed"
        self.held += amount
        self.log.append("held")
        return None

    def settle(self, amount: Decimal) -> None:
        self.held -= amount
        self.log.append("settled")


async def test_the_gate_asks_a_budget_kept_elsewhere_before_every_request_and_settles_after() -> None:
    from sagent.agent.agent import Agent
    from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn

    model = ScriptedModel([tool_turn(("Glob", {"pattern": "*"})), text_turn("done")], name="claude-sonnet-4-6")
    agent = Agent(model, tools=builtin_tools(fleet=False))
    keeper = Keeper("1")
    agent.cost.lender = keeper
    results = [e for e in [event async for event in agent.run("go")] if isinstance(e, Result)]
    assert results[-1].subtype == "success"
    assert keeper.log == ["held", "settled", "held", "settled"] and keeper.held == 0
    await agent.aclose()

    refused = Agent(ScriptedModel([text_turn("never")], name="claude-sonnet-4-6"))
    refused.cost.lender = Keeper("0")
    ended = [e for e in [event async for event in refused.run("go")] if isinstance(e, Result)][-1]
    assert ended.subtype == "error_max_budget_usd" and "kept elsewhere" in ended.text
    assert refused.model.requests == []  # type: ignore[attr-defined]  # never sent
    await refused.aclose()
