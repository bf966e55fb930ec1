"""Two peers talking over AgentSend under one budget. The main agent starts a `writer` and a `critic`
that stay alive (persistent); the writer sends its draft to the critic, the critic answers the writer,
and both report back to main when they go idle. `max_budget_usd` caps the three together: once the
tree has spent it, no agent starts another paid call."""

import asyncio

from _offline import fleet_model_or_scripts, text_turn, tool_turn

from sagent import Agent, PeerMessage, builtin_tools

DRAFT = "sagent: one agent runtime, every provider."

model = fleet_model_or_scripts(
    {
        "main": [
            tool_turn(
                (
                    "AgentSpawn",
                    {"prompt": "Write a one-line tagline, send it to critic", "label": "writer", "persistent": True},
                ),
                ("AgentSpawn", {"prompt": "Critique what writer sends you", "label": "critic", "persistent": True}),
            ),
            text_turn("Waiting for writer and critic."),
            text_turn("Noted."),
            text_turn("Noted."),
            text_turn("Noted."),
            text_turn("Noted."),
        ],
        "writer": [
            tool_turn(("AgentSend", {"to": "critic", "message": DRAFT})),
            text_turn("Draft sent to critic."),
            lambda request: text_turn(f"Final tagline, after the critique: {DRAFT} ({request.messages[-1].text})"),
        ],
        "critic": [
            text_turn("Ready for a draft."),
            lambda request: tool_turn(("AgentSend", {"to": "writer", "message": "Good: short and concrete."})),
            text_turn("Critique sent."),
        ],
    }
)


async def main() -> None:
    agent = Agent(model, tools=builtin_tools(), max_budget_usd=0.50)
    await agent.ask("Have a writer and a critic agree on a tagline for sagent; they talk to each other.")
    for label, child in agent.children.items():  # a real model may choose other labels
        for message in child.agent.history:
            if isinstance(message, PeerMessage):
                print(f"{label} got from {message.sender}: {message.text}")
    reports = [m for m in agent.history if isinstance(m, PeerMessage)]
    for report in reports:
        print(f"main got from {report.sender}: {report.text.splitlines()[0][:120]}")
    print(f"the tree spent ${agent.cost.total_usd:.4f} of its ${agent.cost.max_budget_usd:.2f} budget")
    await agent.aclose()


asyncio.run(main())
