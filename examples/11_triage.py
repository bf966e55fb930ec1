"""A help desk (`sagent.patterns.Triage`): a router agent reads each request and picks, with a `Route`
tool call, the agent whose description fits; that agent answers. The router's choice is a tool call
with the agents' labels as its only allowed values, not text to parse."""

import asyncio

from _offline import fleet_model_or_scripts, text_turn, tool_turn

from sagent import Agent
from sagent.patterns import Step, Triage

model = fleet_model_or_scripts(
    {
        "main": [],
        "router": [
            tool_turn(("Route", {"agent": "billing", "note": "a question about a charge"})),
            tool_turn(("Route", {"agent": "support", "note": "a failing command"})),
        ],
        "billing": [text_turn("You were charged twice; the second charge is refunded within 5 days.")],
        "support": [text_turn("Run `uv sync` first: the error means the environment is not built yet.")],
    }
)

desk = Triage(
    [
        Step("support", description="technical problems: installing, running, errors", system="You are support."),
        Step("billing", description="invoices, charges, refunds and plans", system="You are billing."),
    ]
)


async def main() -> None:
    lead = Agent(model, max_budget_usd=0.50)
    for request in ("I was charged twice this month.", "sagent says 'module not found' when I start it."):
        result = await desk.run(lead, request)
        router = result.steps[0]  # then the chosen agent, when the router chose one
        why = router.picked.note if router.picked else ""
        print(f"{request!r} -> {router.text} ({why})")
        print(f"  [{result.steps[-1].label}] {result.text}")
    print(f"spent: ${lead.cost.total_usd:.4f}")
    await lead.aclose()


asyncio.run(main())
