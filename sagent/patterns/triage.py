"""`Triage`: a router agent reads the task and picks, by their descriptions, the agent that does it."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from sagent.patterns.step import INPUT, PatternResult, Step, StepResult, check_labels, run_step, stopped
from sagent.tools.choose import Choice, Pick

if TYPE_CHECKING:
    from sagent.agent.agent import Agent

ROUTER_SYSTEM = (
    "You are a router. You do not do tasks yourself: you read the task and send it, with the Route tool, to "
    "the one agent whose description fits it best. Call Route once and nothing else."
)
ROUTER_TEMPLATE = "Route this task to the agent that should do it.\n\nThe task:\n{input}"


def default_router() -> Step:
    """The router a Triage uses when none is given: the parent's model, no tools but Route."""
    return Step("router", system=ROUTER_SYSTEM, template=ROUTER_TEMPLATE, tools=())


@dataclass(frozen=True, slots=True)
class Triage:
    """The router (a `Step`; by default `default_router()`; one of yours gets `ROUTER_SYSTEM` and
    `ROUTER_TEMPLATE` unless it has a system prompt and a template) is given the task and a `Route` tool whose
    options are the agents' labels and descriptions; it answers with one call, and its run ends there. The
    chosen agent then does the task and its answer is the pattern's. The router's step result holds the
    chosen label as its text and the call (label and reason) as `picked`.

    A router whose model answers in words instead of calling Route is taken at its word only when exactly
    one agent's label appears in the answer; otherwise the pattern stops, saying what it answered."""

    agents: Sequence[Step]
    router: Step = field(default_factory=default_router)

    def __post_init__(self) -> None:
        agents = check_labels(self.agents, "Triage")
        check_labels([*agents, self.router], "Triage (the router included)")
        vague = [a.label for a in agents if not a.description.strip()]
        if vague:
            raise ValueError(f"a Triage router picks by description; give one to: {', '.join(vague)}")
        object.__setattr__(self, "agents", agents)

    async def run(self, parent: Agent, task: str) -> PatternResult:
        """Route `task` and run the chosen agent, both as sub-agents of `parent`."""
        choice = Choice("Route", {a.label: a.description for a in self.agents})
        router = self.router
        if router.system is None:
            router = replace(router, system=ROUTER_SYSTEM)
        if router.template == INPUT:
            router = replace(router, template=ROUTER_TEMPLATE)
        # One tool round, the Route call's, unless the router was given more (to look around first).
        rounds = 1 if router.max_tool_rounds is None else None
        ran = (await run_step(parent, router, task, choice=choice, max_tool_rounds=rounds)).result
        picked = (ran.picked or _named_in(ran.text, choice)) if ran.subtype != "error_max_budget_usd" else None
        if picked is None:
            if ran.ok or ran.subtype == "error_max_turns":
                ran = replace(ran, subtype="error_during_execution", text=f"it picked no agent; it said: {ran.text}")
            return stopped([ran])
        # Its run ends with the Route call (one tool round, its limit): that is its success.
        routed = replace(ran, text=picked.label, subtype="success", picked=picked)
        chosen = next(a for a in self.agents if a.label == picked.label)
        done: list[StepResult] = [routed, (await run_step(parent, chosen, task)).result]
        return PatternResult(done[-1].text, "success", tuple(done)) if done[-1].ok else stopped(done)


def _named_in(text: str, choice: Choice) -> Pick | None:
    """The one option whose label is a word of `text`, or None (none, or more than one)."""
    found = [label for label in choice.options if re.search(rf"(?<![\w-]){re.escape(label)}(?![\w-])", text)]
    return Pick(found[0], "named in its answer") if len(found) == 1 else None
