"""A first agent in ten lines: it looks around this folder with the built-in tools and answers."""

import asyncio
from pathlib import Path

from _offline import model_or_script, text_turn, tool_turn

from sagent import Agent, ToolFinished, builtin_tools

model = model_or_script([tool_turn(("List", {"path": "."})), text_turn("A folder of sagent examples.")])


async def main() -> None:
    agent = Agent(model, tools=builtin_tools(), cwd=Path(__file__).parent)
    async for event in agent.run("What is in this folder? Answer in one sentence."):
        if isinstance(event, ToolFinished):
            print(f"[{event.result.name}] {event.result.text[:200]}")
    print("answer:", agent.history[-1].text)
    print(f"cost: ${agent.cost.total_usd:.4f}")


asyncio.run(main())
