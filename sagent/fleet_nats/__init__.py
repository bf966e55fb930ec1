"""Fleets across processes and machines, on a NATS server with JetStream.

`NatsBus` is a `Bus` (see `sagent.agent.fleet`): agents in different processes message each other by label
within a named fleet, each with a durable inbox, and list each other through heartbeats. `sagent serve`
hosts an agent on it for good; `sagent fleet` lists, messages, attaches to and stops them.

    from sagent import Agent, Fleet
    from sagent.fleet_nats import NatsBus

    bus = NatsBus("nats://127.0.0.1:4222", fleet="review")
    agent = Agent(model, fleet=Fleet(bus=bus))

The NATS client (nats-py) is imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sagent.lib.lazy import lazy_exports

_EXPORTS = {
    "NatsBus": "sagent.fleet_nats.bus",
    "NatsAuth": "sagent.fleet_nats.bus",
    "QueuedReceipt": "sagent.fleet_nats.bus",
    "AgentInfo": "sagent.fleet_nats.discovery",
}
__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from sagent.fleet_nats.bus import NatsAuth as NatsAuth
    from sagent.fleet_nats.bus import NatsBus as NatsBus
    from sagent.fleet_nats.bus import QueuedReceipt as QueuedReceipt
    from sagent.fleet_nats.discovery import AgentInfo as AgentInfo

_load = lazy_exports(__name__, _EXPORTS)


def __getattr__(name: str) -> Any:
    return _load(name)
