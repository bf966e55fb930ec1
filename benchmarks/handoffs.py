"""Bounded handoffs: how many tokens a sub-agent's task carries when it takes the last 4 capsules of its
parent's handoff history (the seed's default) instead of the whole history, read from the capsules of real
runs. A coordinator (played by the scripted model) hands out 8, 16 and 32 tasks one after another (each a
400-character task, each answered in 800 characters) with `handoff_capsules=4`; every spawn capsule records
what it carried (`tokens`) and what carrying every earlier handoff would have cost (`tokens_all`, tokens
estimated at 4 characters each).

    uv run python benchmarks/handoffs.py
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sagent.agent.agent import Agent  # noqa: E402
from sagent.agent.session import SessionLog  # noqa: E402
from sagent.evidence.handoffs import DEFAULT_CAPSULES  # noqa: E402
from sagent.providers.scripted import RoutedModel, text_turn, tool_turn  # noqa: E402
from sagent.tools import AgentSpawn  # noqa: E402

TASK = "Review the module below for bugs and say what to change. " * 7
ANSWER = "The module reads the file twice and keeps the handle open; close it and read once. " * 10


async def run(tasks: int, folder: Path) -> list[dict[str, int]]:
    """The `context` of every spawn capsule of a coordinator that hands out `tasks` tasks."""
    labels = [f"w{n}" for n in range(tasks)]
    script = {"main": [tool_turn(("AgentSpawn", {"prompt": f"{n}: {TASK}", "label": n})) for n in labels]}
    script["main"].append(text_turn("all reviewed"))
    script |= {n: [text_turn(ANSWER)] for n in labels}
    log = SessionLog.create(folder, {"provider": "scripted", "model": "scripted"}, directory=folder)
    agent = Agent(RoutedModel(script), tools=[AgentSpawn()], session=log, cwd=folder, handoff_capsules=DEFAULT_CAPSULES)
    async for _ in agent.run("review every module"):
        pass
    await agent.aclose()
    assert log.path is not None
    records = [json.loads(line) for line in log.path.read_bytes().splitlines()]
    return [
        r["capsule"]["context"]
        for r in records
        if r["kind"] == "capsule" and r["role"] == "sent" and r["capsule"]["type"] == "spawn"
    ]


def main() -> None:
    print(f"Bounded handoffs: each task carries the last {DEFAULT_CAPSULES} capsules, or the whole history")
    print()
    print(
        "| tasks | last task: whole history | last task: last 4 | saved "
        "| all tasks: whole | all tasks: last 4 | saved |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for tasks in (8, 16, 32):
        with tempfile.TemporaryDirectory() as folder:
            contexts = asyncio.run(run(tasks, Path(folder)))
        last = contexts[-1]
        whole = sum(c["tokens_all"] for c in contexts)
        bounded = sum(c["tokens"] for c in contexts)
        print(
            f"| {tasks} | {last['tokens_all']:,} | {last['tokens']:,} | {last['saved'] / last['tokens_all']:.0%} "
            f"| {whole:,} | {bounded:,} | {(whole - bounded) / whole:.0%} |"
        )


if __name__ == "__main__":
    main()
