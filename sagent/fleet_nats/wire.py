"""Envelopes on the wire: JSON of their fields, read back with every field checked (whatever arrives on a
subject is hostile input until it has been)."""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from typing import TYPE_CHECKING, Any

from sagent.agent.fleet import CONTROLS, Envelope, FleetError

if TYPE_CHECKING:
    from sagent.events import Event


def envelope_bytes(envelope: Envelope) -> bytes:
    return json.dumps({k: v for k, v in asdict(envelope).items() if v is not None}).encode()


def envelope_of(data: bytes) -> Envelope:
    """An envelope from the wire; FleetError when it is not one."""
    try:
        fields = json.loads(data)
        if not isinstance(fields, dict) or not isinstance(fields.get("sender"), str):
            raise ValueError("not an envelope")
        wanted = ("sender", "to", "text", "control", "provider", "model", "focus", "effort", "thinking", "keep_last")
        envelope = Envelope(**{k: fields[k] for k in wanted if k in fields})
        tools = fields.get("tools")
        if tools is not None:
            if not isinstance(tools, list) or not all(isinstance(t, str) for t in tools):
                raise ValueError("tools is not a list of names")
            envelope = replace(envelope, tools=tuple(tools))
        if (envelope.control is not None and envelope.control not in CONTROLS) or not isinstance(envelope.text, str):
            raise ValueError("not an envelope")
        for name in ("thinking", "keep_last"):
            value = getattr(envelope, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
                raise ValueError(f"{name} is not a whole number")
        return envelope
    except (ValueError, TypeError) as error:
        raise FleetError(f"a message that is not an envelope: {error}") from None


def event_of(data: dict[str, Any]) -> Event | None:
    """A sub-agent's event as another process published it (see `NatsBus.publish_event`), for the events
    that show its progress (responses, tool results, deltas); None for any other, or for what is not one."""
    from sagent.events import TextDelta, ThinkingDelta, ToolCallDelta, ToolFinished, TurnFinished
    from sagent.types import AssistantMessage, Cost, ToolResult, Usage, message_from_dict

    try:
        kind = data.get("type")
        if kind == "turn_finished":
            message = message_from_dict(data["message"])
            if not isinstance(message, AssistantMessage):
                return None
            cost = Cost(**{k: v for k, v in data.get("cost", {}).items() if k != "total"})
            usage = Usage(**data["usage"])
            return TurnFinished(message, usage, cost, float(data["total_cost_usd"]), float(data["duration_ms"]))
        if kind == "tool_finished":
            result = message_from_dict(data["result"])
            return ToolFinished(result, float(data["duration_ms"])) if isinstance(result, ToolResult) else None
        if kind == "text_delta":
            return TextDelta(str(data["text"]))
        if kind == "thinking_delta":
            return ThinkingDelta(str(data["text"]))
        if kind == "tool_call_delta":
            fields = {k: data[k] for k in ("index", "id", "name", "arguments_delta") if k in data}
            return ToolCallDelta(**fields)
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    return None
