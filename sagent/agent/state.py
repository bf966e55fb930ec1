"""How an `Agent` turns its state into an `AgentSnapshot` (the value the status line, /agents, /cost and
`AgentSelf status` read). Kept beside the agent so `sagent.snapshot` stays a module of values only."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sagent.snapshot import AgentSnapshot, AgentStatus, JobSnapshot, ModelUse

if TYPE_CHECKING:
    from sagent.agent.agent import Agent


def take_snapshot(agent: Agent, measure: bool, persistent: bool, status: AgentStatus, queued: int) -> AgentSnapshot:
    """`agent` and the agents below it now; `queued` is its input not taken yet (the inbox is its own)."""
    cost = agent.cost
    budget = cost.limiting() or cost.budgeted()  # a spent budget up the tree first
    return AgentSnapshot(
        label=agent.label,
        provider=agent.model.provider,
        model=agent.model.name,
        status=status,
        depth=agent.depth,
        max_depth=agent.max_depth,
        persistent=persistent,
        alive=agent.fleet.agents.get(agent.label) is agent,
        effort=agent.effort,
        thinking_budget=agent.thinking_budget,
        own_usd=cost.own_usd,
        total_usd=cost.total_usd,
        budget_usd=budget.max_budget_usd if budget is not None else None,
        budget_spent_usd=budget.total_usd if budget is not None else None,
        usage=cost.usage,
        models=tuple(ModelUse(n, s.responses, s.usage, s.cost.total, s.cost.priced) for n, s in cost.by_model.items()),
        context_tokens=agent.context_tokens if measure else None,
        context_window=agent.context_window,
        messages=len(agent.history),
        queued=queued,
        jobs=tuple(JobSnapshot(j.id, j.call.name, j.state, j.line()) for j in agent.jobs.all()),
        children=tuple(
            c.agent.snapshot(measure=measure, persistent=c.persistent, status=c.status) for c in agent.children.values()
        ),
    )
