"""Envelopes on the wire: JSON of their fields, read back with every field checked (whatever arrives on a
subject is hostile input until it has been)."""

from __future__ import annotations

import json
from dataclasses import asdict

from sagent.agent.fleet import Envelope, FleetError


def envelope_bytes(envelope: Envelope) -> bytes:
    return json.dumps({k: v for k, v in asdict(envelope).items() if v is not None}).encode()


def envelope_of(data: bytes) -> Envelope:
    """An envelope from the wire; FleetError when it is not one."""
    try:
        fields = json.loads(data)
        if not isinstance(fields, dict) or not isinstance(fields.get("sender"), str):
            raise ValueError("not an envelope")
        wanted = ("sender", "to", "text", "control", "provider", "model", "focus")
        envelope = Envelope(**{k: fields[k] for k in wanted if k in fields})
        if envelope.control not in (None, "switch_model", "compact", "stop") or not isinstance(envelope.text, str):
            raise ValueError("not an envelope")
        return envelope
    except (ValueError, TypeError) as error:
        raise FleetError(f"a message that is not an envelope: {error}") from None
