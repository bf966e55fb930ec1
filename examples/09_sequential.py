"""A pipeline of three agents (`sagent.patterns.Sequential`): a writer drafts, an editor tightens the
draft, a checker approves it; each one's answer is the next one's input. The lead agent runs the
pattern: every step is its one-shot sub-agent, so the steps' spend is in the lead's cost, and each task
and answer is sealed in the lead's session log and the step's own (`verify_tree` checks both)."""

import asyncio
from pathlib import Path

from _offline import fleet_model_or_scripts, text_turn

from sagent import Agent, SessionLog
from sagent.evidence.verify import verify_tree
from sagent.patterns import Sequential, Step

model = fleet_model_or_scripts(
    {
        "main": [],
        "writer": [text_turn("sagent is an agent runtime that works with every model provider you have.")],
        "editor": [text_turn("sagent: one agent runtime, every provider.")],
        "checker": [text_turn("Approved: sagent: one agent runtime, every provider.")],
    }
)

pipeline = Sequential(
    [
        Step("writer", system="You write product taglines. Answer with the tagline only."),
        Step("editor", template="Make this tagline shorter and sharper; answer with it only:\n{input}"),
        Step("checker", template="Approve this tagline, or fix it; start with 'Approved:':\n{input}"),
    ]
)


async def main() -> None:
    here = Path.cwd()
    log = SessionLog.create(here, {"provider": model.provider, "model": model.name})
    lead = Agent(model, session=log, max_budget_usd=0.50)
    result = await pipeline.run(lead, "A tagline for sagent, a coding agent that runs on any provider.")
    for step in result.steps:
        print(f"[{step.label}] {step.text}")
    print("answer:", result.text)
    print(f"spent: ${result.cost_usd:.4f} by the steps, ${lead.cost.total_usd:.4f} in the lead's tree")
    assert log.path is not None
    await lead.aclose()
    print(verify_tree(log.path).summary())


asyncio.run(main())
