"""`EventSink`: what takes an agent's events besides its session log.

The session log is the first sink: `Agent.emit` writes every event there, then hands it to the settings'
hooks (`Hook.on_event`, inherited by sub-agents) and to the sinks added to this one agent with
`Agent.add_sink` (not inherited): the headless outputs and the REPL's screen. A sink sees the events in
order, after the log has them and before the loop acts on them; iterating `agent.run()` gives the same
events, for code that prefers a stream.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from sagent.events import Event

if TYPE_CHECKING:
    from sagent.agent.agent import Agent


class EventSink(Protocol):
    """Anything with `on_event(agent, event)`: a `Hook` is one."""

    def on_event(self, agent: Agent, event: Event) -> None:
        """Take one event `agent` emitted. Keep it quick: the loop waits for it. An exception ends the run
        as an internal error."""
        ...
