"""What the REPL shows of a fleet across processes (`sagent --fleet NAME`): the fleet and the agent's label
in the banner and the status line, and the fleet's agents in other processes under /agents.

The command line joins the fleet and gives the REPL its `FleetPlace` (in `ReplState.fleet`); the REPL
reads nothing of the agent's fleet or bus itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sagent.agent.fleet import FleetError


@dataclass(frozen=True, slots=True)
class FleetPlace:
    """The REPL agent's place in a fleet across processes: the fleet's name, the agent's label (kept across
    /clear, /resume and /fork), and `others()`, one line per agent of the fleet running in another process
    (FleetError when the server cannot list them now)."""

    fleet: str
    label: str
    others: Callable[[], list[str]]

    def text(self) -> str:
        """`fleet NAME as LABEL`, for the status line."""
        return f"fleet {self.fleet} as {self.label}"


def remote_rows(place: FleetPlace | None) -> list[str]:
    """The lines /agents adds for the fleet's agents in other processes (a line saying why when they cannot
    be listed now); nothing outside a fleet across processes."""
    if place is None:
        return []
    try:
        rows = place.others()
    except FleetError as error:
        return [f"the fleet {place.fleet}'s other agents cannot be listed now: {error}"]
    if not rows:
        return [f"no other agent runs in the fleet {place.fleet} now"]
    return [f"in the fleet {place.fleet}, in other processes:", *rows, "AgentSend or /send LABEL MESSAGE reaches them"]
