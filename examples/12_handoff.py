"""A conversation that changes hands (`sagent.patterns.Handoff`): the front desk looks the order up with
its tool, sees the customer wants a refund, and hands the conversation to returns with its `Handoff`
tool; returns gets the conversation so far (the question, the lookup and its result, the desk's note)
and continues it."""

import asyncio

from _offline import fleet_model_or_scripts, text_turn, tool_turn

from sagent import Agent, tool
from sagent.patterns import Handoff, Step


@tool
def order_status(order: str) -> str:
    """The shipping status of an order.

    Args:
        order: the order number
    """
    return {"42": "order 42: delivered on Monday, 2 items, $60"}.get(order, f"order {order}: not found")


model = fleet_model_or_scripts(
    {
        "main": [],
        "desk": [
            tool_turn(("order_status", {"order": "42"}), text="Let me look that order up."),
            tool_turn(("Handoff", {"agent": "returns", "note": "delivered Monday; the customer wants a refund"})),
            text_turn("I am passing you to our returns team."),
        ],
        "returns": [text_turn("I have started a $60 refund for order 42; it reaches you within 5 days.")],
    }
)

support = Handoff(
    [
        Step("desk", description="the front desk: orders and questions", tools=["order_status"]),
        Step("returns", description="returns and refunds", tools=[]),
    ]
)


async def main() -> None:
    lead = Agent(model, tools=[order_status], max_budget_usd=0.50)
    result = await support.run(lead, "Order 42 arrived but I do not want it any more. Can I get my money back?")
    print("path:", " -> ".join(step.label for step in result.steps))
    for turn in result.conversation:
        print(f"[{turn.speaker}] {turn.text}")
    print("answer:", result.text)
    print(f"spent: ${lead.cost.total_usd:.4f}")
    await lead.aclose()


asyncio.run(main())
