"""`AgentSnapshot`: what an agent is doing now, as one frozen value.

The status line, `/agents`, `/cost` and `AgentSelf status` read an agent through `Agent.snapshot()` rather
than through its members, so how the agent keeps its state can change without them. This module holds
values only: it imports nothing of the agent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from sagent.types import Usage

AgentStatus = Literal["working", "idle", "stopped"]


@dataclass(frozen=True, slots=True)
class JobSnapshot:
    """One tool call running (or run) in the background."""

    id: str
    tool: str
    state: str
    """running, done or cancelled."""
    line: str
    """The job in one line, as `Jobs list` shows it."""


@dataclass(frozen=True, slots=True)
class ModelUse:
    """What one model's responses used and cost, over an agent and the agents below it."""

    model: str
    responses: int
    usage: Usage
    usd: float
    priced: bool
    """False when the catalog has no price for the model (its `usd` is then 0)."""


@dataclass(frozen=True, slots=True)
class AgentSnapshot:
    """One agent and the agents it started, at one moment."""

    label: str
    provider: str
    model: str
    status: AgentStatus
    """working (a run is going on), idle (waiting for input) or stopped (it quit or was stopped)."""
    depth: int
    """0 for the main agent, 1 for its sub-agents, and so on."""
    max_depth: int
    """The deepest level agents below this one may reach."""
    persistent: bool
    """A sub-agent that stays after its answer (always False for the main agent)."""
    alive: bool
    """Still in its fleet (a finished one-shot sub-agent has left it; the main agent until it closes)."""
    effort: str | None
    thinking_budget: int | None
    own_usd: float
    """What this agent's own responses cost."""
    total_usd: float
    """What this agent and every agent below it cost."""
    budget_usd: float | None
    """The nearest budget up the tree (max_budget_usd), or None."""
    budget_spent_usd: float | None
    """What the tree that budget belongs to has spent, or None without a budget."""
    usage: Usage
    """The tokens of every response of this agent and the agents below it."""
    models: tuple[ModelUse, ...]
    """`usage` and `total_usd` by model, in the order the models were first used."""
    context_tokens: int | None
    """The size of the next request, in tokens; None in a snapshot taken with `measure=False` (a status
    line repainted many times a second does not measure the context each time)."""
    context_window: int | None
    """The model's context window in tokens, when known."""
    messages: int
    """Messages in the history."""
    queued: int
    """Messages sent to the agent that no run has taken yet."""
    jobs: tuple[JobSnapshot, ...]
    children: tuple[AgentSnapshot, ...]
    """The sub-agents this agent started, in the order it started them."""

    def walk(self) -> tuple[AgentSnapshot, ...]:
        """This agent, then every agent below it, depth first."""
        found: list[AgentSnapshot] = [self]
        for child in self.children:
            found.extend(child.walk())
        return tuple(found)

    def running_jobs(self) -> tuple[JobSnapshot, ...]:
        return tuple(j for j in self.jobs if j.state == "running")

    @property
    def unpriced_models(self) -> tuple[str, ...]:
        """The models used whose spend is unknown (so `total_usd` is a lower bound)."""
        return tuple(m.model for m in self.models if not m.priced)
