"""A reviewer sub-agent: the main agent hands a review to a sub-agent with only the Read tool, waits for
its verdict, and sees what it cost; the main agent's total includes the reviewer's spend."""

import asyncio
import tempfile
from pathlib import Path

from _offline import fleet_model_or_scripts, text_turn, tool_turn

from sagent import Agent, ToolFinished, builtin_tools

CODE = """def average(numbers):
    return sum(numbers) / len(numbers)
"""

model = fleet_model_or_scripts(
    {
        "main": [
            tool_turn(
                (
                    "AgentSpawn",
                    {
                        "prompt": "Review stats.py for bugs. Reply with a verdict line.",
                        "label": "reviewer",
                        "tools": ["Read"],
                    },
                )
            ),
            text_turn("The reviewer found one bug: average([]) divides by zero."),
        ],
        "reviewer": [
            tool_turn(("Read", {"path": "stats.py"})),
            text_turn("Verdict: one bug. average([]) raises ZeroDivisionError; return 0.0 or raise ValueError."),
        ],
    }
)


async def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "stats.py").write_text(CODE)
        agent = Agent(model, tools=builtin_tools(), cwd=folder)
        async for event in agent.run("Have a reviewer sub-agent (label 'reviewer', Read only) review stats.py."):
            if isinstance(event, ToolFinished) and event.result.name == "AgentSpawn":
                print("[AgentSpawn]", event.result.text)
        child = agent.children.get("reviewer")  # finished sub-agents stay inspectable
        seen = [m for m in child.agent.history if m.role == "tool_result"] if child else []
        if seen:
            lines = seen[0].text.splitlines()
            print(f"the reviewer read {len(lines)} lines, the first: {lines[0]!r}")
        print("answer:", agent.history[-1].text)
        print(f"spent: ${agent.cost.own_usd:.4f} by main, ${agent.cost.total_usd:.4f} with the reviewer")
        await agent.aclose()


asyncio.run(main())
