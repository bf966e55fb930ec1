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
    context_tokens: int
    """The size of the next request, in tokens."""
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
