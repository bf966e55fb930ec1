"""One tool call through the hooks: what they (and the approver, when one asks) decide before it runs, and
their word on its result after.

The two halves are apart because a call's life has a moment between them that the round must know: the
call starts running only once `clear` lets it through. Until then it has not run, so it is never timed,
moved to the background or reported as running while its permission question waits.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from sagent.agent.hooks import Allow, Ask, Deny, Rewrite
from sagent.types import ToolCall, ToolResult

if TYPE_CHECKING:  # annotations only: the agent's rounds call this, never the other way round
    from sagent.agent.agent import Agent


async def clear(agent: Agent, call: ToolCall) -> ToolCall | ToolResult:
    """Ask the hooks, then the approver when a hook asks: the call to run (its arguments as a hook rewrote
    them), or the error result of a denied call (starting with `denied: `), which never runs."""
    ran = call
    denied: Deny | None = None
    asks: list[str] = []
    for hook in agent.settings.hooks:
        try:
            decision = await hook.before_tool(agent, ran)
        except Exception as error:  # a failing approval never lets a call through
            decision = Deny(f"{type(hook).__name__} failed: {type(error).__name__}: {error}")
        if isinstance(decision, Deny):
            denied = decision
            break
        if isinstance(decision, Rewrite):
            ran = replace(ran, arguments=dict(decision.arguments))
        elif isinstance(decision, Ask):
            asks.append(decision.reason)
    approver = agent.settings.approver
    if denied is None and asks:
        reason = "; ".join(r for r in asks if r)
        answer = await _permission_hooks(agent, ran, reason)
        if answer is None and approver is not None:
            try:
                answer = await approver(agent, ran, reason)
            except Exception as error:  # an approver that fails never lets a call through either
                answer = Deny(f"the approver failed: {type(error).__name__}: {error}")
        denied = answer if isinstance(answer, Deny) else None
        if isinstance(answer, Rewrite):  # approved with changed arguments (the SDK's `updatedInput`)
            ran = replace(ran, arguments=dict(answer.arguments))
            denied = await _recheck(agent, ran)  # the question was about other arguments: deny still beats it
    if denied is not None:
        return ToolResult.of(call, f"denied: {denied.reason}", is_error=True)
    return ran


async def _recheck(agent: Agent, call: ToolCall) -> Deny | None:
    """The first refusal of `call`, rewritten by its approver, by a hook that judged it before the rewrite."""
    for hook in agent.settings.hooks:
        try:
            refusal = await hook.recheck(agent, call)
        except Exception as error:  # a failing check never lets a call through
            return Deny(f"{type(hook).__name__} failed: {type(error).__name__}: {error}")
        if refusal is not None:
            return refusal
    return None


async def _permission_hooks(agent: Agent, call: ToolCall, reason: str) -> Allow | Deny | Rewrite | None:
    """The first answer a hook gives to the permission question about `call`, or None."""
    for hook in agent.settings.hooks:
        try:
            answer = await hook.on_permission_request(agent, call, reason)
        except Exception as error:  # a failing approval never lets a call through
            return Deny(f"{type(hook).__name__} failed: {type(error).__name__}: {error}")
        if isinstance(answer, Allow | Deny | Rewrite):
            return answer
    return None


async def reviewed(agent: Agent, call: ToolCall, ran: ToolCall, result: ToolResult) -> ToolResult:
    """The result after the hooks' `after_tool` (a denied call's too): a hook may replace it with its
    feedback for the model. `call` is the call as the model wrote it, `ran` as it ran."""
    for hook in agent.settings.hooks:
        changed = await hook.after_tool(agent, ran, result)
        if changed is not None and changed.call_id == call.id:
            result = changed
    return result
