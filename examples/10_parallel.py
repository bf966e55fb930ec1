"""Three reviewers at once on one diff (`sagent.patterns.Parallel`), and a lead reviewer agent that
combines their answers into one verdict. Each reviewer is a sub-agent of the lead with its own system
prompt; the aggregator gets the task and every answer under its reviewer's label. A function can
aggregate instead: `Parallel(steps, aggregator=lambda task, results: ...)`."""

import asyncio

from _offline import fleet_model_or_scripts, text_turn

from sagent import Agent
from sagent.patterns import Parallel, Step

DIFF = """--- a/stats.py
+++ b/stats.py
-def average(numbers):
-    return sum(numbers) / len(numbers)
+def average(numbers, api_key="sk-live-123"):
+    return sum(numbers) / max(len(numbers), 1)
"""

model = fleet_model_or_scripts(
    {
        "main": [],
        "security": [text_turn("Blocker: an API key is hard-coded as a default argument.")],
        "correctness": [text_turn("Fine: average([]) now returns 0.0 instead of raising.")],
        "style": [text_turn("Nit: api_key is unused.")],
        "verdict": [text_turn("Request changes: remove the hard-coded key (and the unused argument).")],
    }
)

review = Parallel(
    [
        Step("security", system="You review diffs for security problems only. One line."),
        Step("correctness", system="You review diffs for bugs only. One line."),
        Step("style", system="You review diffs for style only. One line."),
    ],
    aggregator=Step("verdict", template="Combine these reviews into one verdict line.\n\n{input}"),
)


async def main() -> None:
    lead = Agent(model, max_budget_usd=0.50)
    result = await review.run(lead, f"Review this diff:\n{DIFF}")
    for step in result.steps[:-1]:
        print(f"[{step.label}] {step.text}")
    print("verdict:", result.text)
    print(f"spent: ${lead.cost.total_usd:.4f} for {len(result.steps)} agents")
    await lead.aclose()


asyncio.run(main())
