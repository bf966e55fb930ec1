"""What the REPL shows of a fleet across processes (`sagent --fleet NAME`): the fleet and the agent's label
in the status line, and the fleet's agents in other processes under /agents.

Nothing here imports the NATS bus: a bus that spans processes says so by its `fleet` name and its
`agents()` listing (the heartbeats of the agents running now); the in-process bus has neither.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sagent.agent.fleet import FleetError

if TYPE_CHECKING:
    from sagent.agent.agent import Agent


def fleet_name(agent: Agent) -> str | None:
    """The name of the fleet across processes `agent` is in, None when its fleet is this process only."""
    name = getattr(agent.fleet.bus, "fleet", None)
    return name if isinstance(name, str) else None


def fleet_text(agent: Agent) -> str | None:
    """`fleet NAME as LABEL` for the status line, None outside a fleet across processes."""
    name = fleet_name(agent)
    return None if name is None else f"fleet {name} as {agent.label}"


def remote_rows(agent: Agent) -> list[str]:
    """One line per agent of the fleet running in another process (label, host, model, status, spend), for
    /agents; a line saying why when they cannot be listed now; nothing outside a fleet across processes."""
    name = fleet_name(agent)
    listing = getattr(agent.fleet.bus, "agents", None)
    if name is None or not callable(listing):
        return []
    try:
        found = listing()
    except FleetError as error:
        return [f"the fleet {name}'s other agents cannot be listed now: {error}"]
    rows = [
        f"{info.label:<16} {info.model:<30} {info.status:<8} {info.host}:{info.pid}  ${info.cost_usd:.4f}"
        for info in found
        if info.label not in agent.fleet.agents
    ]
    if not rows:
        return [f"no other agent runs in the fleet {name} now"]
    return [f"in the fleet {name}, in other processes:", *rows, "AgentSend or /send LABEL MESSAGE reaches them"]
