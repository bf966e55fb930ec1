"""A coordinator's controls over the agents it started: sent as envelopes on the fleet's bus, and applied by
the agent they reach at its next safe point (`stop` at once).

- `switch_model`: another model (`model`, `provider`), with `effort` and `thinking` too when given;
- `tune`: the reasoning `effort` and/or the `thinking` budget (0 turns thinking off): "crank thinking";
- `compact`: summarise the conversation now, keeping `focus`;
- `clear_tool_results`: replace old tool outputs with a short note: those of the `tools` named ("drop the
  file reads": `tools=["Read"]`), or every one but the last `keep_last`;
- `stop`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, cast, get_args

from sagent.agent.fleet import CONTROLS, ControlKind, Envelope, FleetError, Receipt
from sagent.agent.inbox import Control
from sagent.types import Effort, Message, ToolResult

if TYPE_CHECKING:
    from sagent.agent.agent import Agent
    from sagent.agent.fleet import Fleet

EFFORTS: tuple[str, ...] = get_args(Effort)


def send_control(
    agent: Agent,
    label: str,
    kind: ControlKind,
    *,
    provider: str | None = None,
    model: str | None = None,
    focus: str | None = None,
    effort: str | None = None,
    thinking: int | None = None,
    tools: Sequence[str] | None = None,
    keep_last: int | None = None,
) -> Receipt:
    """Send the control `kind` from `agent` to `label`, an agent below it; FleetError when it is not one,
    or when the control lacks what it needs."""
    if kind not in CONTROLS:
        raise FleetError(f"unknown control {kind!r}; the controls are: {', '.join(CONTROLS)}")
    if not agent.fleet.is_above(agent.label, label):
        raise FleetError(f"{agent.label} does not coordinate {label!r}: controls go only to agents it started")
    if effort is not None and effort not in EFFORTS:
        raise FleetError(f"effort {effort!r}: choose one of {', '.join(EFFORTS)}")
    if thinking is not None and thinking < 0:
        raise FleetError("thinking is a budget in tokens, 0 or more (0 turns thinking off)")
    if kind == "tune" and effort is None and thinking is None:
        raise FleetError("tune needs an effort or a thinking budget")
    if kind == "clear_tool_results" and not tools and keep_last is None:
        raise FleetError("clear_tool_results needs the tools whose results go, or keep_last")
    if keep_last is not None and keep_last < 0:
        raise FleetError("keep_last is 0 or more")
    envelope = Envelope(
        agent.label,
        label,
        control=kind,
        provider=provider,
        model=model,
        focus=focus,
        effort=effort,
        thinking=thinking,
        tools=tuple(tools) if tools else None,
        keep_last=keep_last,
    )
    return agent.fleet.bus.deliver(envelope)


def control_for(envelope: Envelope, fleet: Fleet) -> Control:
    """The change `envelope` asks for; FleetError when it cannot be made (a switch naming no model)."""
    model = None
    if envelope.control == "switch_model":
        if not envelope.model and not envelope.provider:
            raise FleetError("switch_model needs a model (or a provider)")
        model = fleet.model(envelope.provider, envelope.model)
    clearing = envelope.control == "clear_tool_results"
    return Control(
        envelope.sender,
        model=model,
        effort=cast(Effort, envelope.effort) if envelope.effort in EFFORTS else None,
        thinking_budget=envelope.thinking,
        compact=envelope.control == "compact",
        focus=envelope.focus,
        clear_tools=envelope.tools if clearing else None,
        clear_keep_last=envelope.keep_last if clearing else None,
    )


def results_to_clear(history: Sequence[Message], tools: Sequence[str] | None, keep_last: int | None) -> list[str]:
    """The ids of the tool results a `clear_tool_results` control names: those of `tools`, else every one
    but the last `keep_last` (applied at a safe point, when every call has its result)."""
    results = [m for m in history if isinstance(m, ToolResult)]
    if tools:
        return [r.call_id for r in results if r.name in tools]
    keep = keep_last or 0
    return [r.call_id for r in results[: max(len(results) - keep, 0)]]
