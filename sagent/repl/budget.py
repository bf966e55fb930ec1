"""`/budget`: show or change the spending limit of the agent tree (`--max-budget-usd`) from the REPL, and the
hint shown when a message is refused because the limit is reached, saying how to go on."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from sagent.agent.spending import set_budget
from sagent.repl.commands import CommandError, command

if TYPE_CHECKING:
    from sagent.agent.agent import Agent
    from sagent.repl.host import ReplHost


@command("budget", "show or change the spending limit (--max-budget-usd)", "/budget [USD|off]")
def _budget(repl: ReplHost, arg: str) -> list[str]:
    agent = repl.agent
    now = agent.snapshot(measure=False)
    spent = now.total_usd
    if not arg:
        if now.budget_usd is None:
            return [f"no budget: ${spent:.4f} spent so far; /budget USD sets one"]
        return [f"budget: ${spent:.4f} spent of ${now.budget_usd:.4f}; /budget USD changes it, /budget off"]
    if arg.lower() in ("off", "none"):
        set_budget(agent, None)
        return [f"no budget now (${spent:.4f} spent so far)"]
    amount = parse_usd(arg)
    if amount <= spent:
        raise CommandError(f"${amount:.4f} is not more than the ${spent:.4f} already spent; give a larger amount")
    try:
        set_budget(agent, amount)
    except ValueError as error:  # a model the budget could not price
        raise CommandError(str(error)) from None
    return [f"budget: ${spent:.4f} spent of ${amount:.4f}; the next message goes on"]


def parse_usd(text: str) -> float:
    """`0.5`, `$0.50`: a finite amount of dollars above 0; CommandError otherwise."""
    try:
        amount = float(text.strip().removeprefix("$"))
    except ValueError:
        raise CommandError(f"{text!r} is not an amount of USD; e.g. /budget 2.50") from None
    if not math.isfinite(amount) or amount <= 0:
        raise CommandError(f"{text!r} is not an amount of USD above 0; e.g. /budget 2.50")
    return amount


def raise_hint(agent: Agent) -> str:
    """What to do after a message was refused at the budget: the command that raises it, with an amount."""
    snapshot = agent.snapshot(measure=False)
    limit = snapshot.budget_usd
    if limit is None:  # the limit belongs to a tree this agent is part of: nothing to raise from here
        return "the budget is reached; /cost shows the spend"
    spent = snapshot.budget_spent_usd or 0.0
    suggestion = _round_up(max(limit * 2, spent * 1.5))
    return (
        f"the budget of ${limit:.2f} is reached (${spent:.4f} spent); your message is kept, unanswered: "
        f"/budget {suggestion} raises the limit (/budget off removes it), then say go on"
    )


def _round_up(amount: float) -> str:
    """An amount rounded up to a figure a person would type: 0.1, 0.25, 2, 15."""
    for step in (0.01, 0.05, 0.1, 0.25, 0.5, 1, 5, 10, 50, 100):
        if amount <= step * 20:
            value = math.ceil(amount / step - 1e-9) * step
            return f"{value:.2f}".rstrip("0").rstrip(".")
    return f"{math.ceil(amount)}"
