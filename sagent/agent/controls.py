"""A coordinator's control, as the agent it was sent to applies it: an envelope from the bus becomes the
`Control` its loop takes at the next safe point (`stop` is not one: the agent stops at once)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sagent.agent.fleet import Envelope, FleetError
from sagent.agent.inbox import Control

if TYPE_CHECKING:
    from sagent.agent.fleet import Fleet


def control_for(envelope: Envelope, fleet: Fleet) -> Control:
    """The change `envelope` asks for; FleetError when it cannot be made (a switch naming no model)."""
    model = None
    if envelope.control == "switch_model":
        if not envelope.model and not envelope.provider:
            raise FleetError("switch_model needs a model (or a provider)")
        model = fleet.model(envelope.provider, envelope.model)
    return Control(envelope.sender, model=model, compact=envelope.control == "compact", focus=envelope.focus)
