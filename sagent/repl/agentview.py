"""Every read of the agent's state that the REPL makes beyond `Agent`'s public methods, in one place.

The status line, /agents, /cost, /context, /jobs, /send and /stop need a few things `Agent` does not yet
offer as public methods (its context window, its background jobs, its children's status, sending as the
user). They are read here and nowhere else in the REPL, so when the agent grows those seams (a state
snapshot, a jobs API) only this module changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sagent.agent.agent import Agent
    from sagent.agent.fleet import Receipt
    from sagent.agent.jobs import Job


@dataclass(frozen=True)
class AgentRow:
    """One agent of the tree under the REPL's agent, as /agents, /cost and the live panel show it."""

    label: str
    depth: int
    provider: str
    model: str
    status: str  # the child's status ("working", "idle", "done", ...); "main" for the REPL's own agent
    persistent: bool
    alive: bool  # still in the fleet (a finished one-shot child has left it)
    own_usd: float
    total_usd: float


def agent_rows(root: Agent) -> list[AgentRow]:
    """`root` and every sub-agent under it (finished ones included), depth first."""
    alive = set(root.fleet.agents)
    rows = [_row(root, "main", False, True)]

    def walk(agent: Agent) -> None:
        for child in agent.children.values():
            rows.append(_row(child.agent, child.status, child.persistent, child.agent.label in alive))
            walk(child.agent)

    walk(root)
    return rows


def _row(agent: Agent, status: str, persistent: bool, alive: bool) -> AgentRow:
    model = agent.model
    cost = agent.cost
    return AgentRow(
        agent.label, agent.depth, model.provider, model.name, status, persistent, alive, cost.own_usd, cost.total_usd
    )


def context_window(agent: Agent) -> int | None:
    """The window of the agent's model in tokens, when known (read on every repaint: no measuring here)."""
    return agent.window.limit


def compaction_line(agent: Agent) -> str:
    """When the agent compacts by itself, for people."""
    return agent.window.policy_line()


def running_jobs(agent: Agent) -> list[Job]:
    return agent.jobs.running()


def all_jobs(agent: Agent) -> list[Job]:
    return agent.jobs.all()


def cancel_job(agent: Agent, job_id: str) -> list[Job]:
    """Cancel a background job (KeyError naming the id when there is none); the jobs that ended."""
    return agent.jobs.cancel(agent.jobs.get(job_id))


def tell(agent: Agent, label: str, text: str) -> Receipt:
    """Deliver `text` to the agent called `label` as the user's own words (not as a peer's message)."""
    from sagent.agent.agent import USER
    from sagent.agent.fleet import Envelope

    return agent.fleet.bus.deliver(Envelope(USER, label, text))


def stop(agent: Agent, label: str) -> Receipt:
    """Stop the agent called `label`, on the user's behalf (its result says the user stopped it)."""
    from sagent.agent.agent import USER
    from sagent.agent.fleet import Envelope

    return agent.fleet.bus.deliver(Envelope(USER, label, control="stop"))


def keep_model_open(agent: Agent) -> None:
    """Closing `agent` must leave its model open: the agent that replaces it (/clear, /resume) uses it."""
    agent.owns_model = False
