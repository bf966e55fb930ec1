"""The hook points around the rounds of a run: a session starts, a prompt arrives, the model wants to stop.

The loop (`sagent.agent.loop`) calls these; each asks every hook of the agent in order and combines their
answers as `sagent.agent.hooks` describes. What the hooks add for the model (context, a reason to go on)
becomes a message from the hook, a `PeerMessage` whose sender names the hook point, so the model can tell
it from its user's words.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sagent.agent.hooks import PROCEED, PromptDecision, SessionSource
from sagent.types import AssistantMessage, PeerMessage, UserMessage

if TYPE_CHECKING:  # annotations only: the loop calls these, never the other way round
    from sagent.agent.agent import Agent

SESSION_START = "SessionStart hook"
"""The sender of the context the `on_session_start` hooks add."""
PROMPT = "UserPromptSubmit hook"
"""The sender of the context the `on_prompt` hooks add after a user's message."""
STOP = "Stop hook"
"""The sender of the reason an `on_stop` hook gives to keep a run going."""


async def session_context(agent: Agent, source: SessionSource) -> list[PeerMessage]:
    """The context every hook adds as the agent's first run starts, one message per hook that gave some."""
    out: list[PeerMessage] = []
    for hook in agent.settings.hooks:
        text = await hook.on_session_start(agent, source)
        if text and text.strip():
            out.append(PeerMessage(SESSION_START, text.strip()))
    return out


async def screen_prompt(agent: Agent, message: UserMessage | PeerMessage) -> PromptDecision:
    """What the hooks decide for a message about to join the history: the first block wins; the
    contexts of the hooks that let it through are joined, in order. A peer's message is not screened."""
    if not isinstance(message, UserMessage) or not agent.settings.hooks:
        return PROCEED
    contexts: list[str] = []
    for hook in agent.settings.hooks:
        decision = await hook.on_prompt(agent, message)
        if decision.block is not None:
            return PromptDecision(block=decision.block or "blocked by a hook")
        if decision.context.strip():
            contexts.append(decision.context.strip())
    return PromptDecision(context="\n\n".join(contexts)) if contexts else PROCEED


async def stop_reason(agent: Agent, message: AssistantMessage, active: bool) -> str | None:
    """The reason the first hook that objects gives for keeping the run going; None lets it end."""
    for hook in agent.settings.hooks:
        reason = await hook.on_stop(agent, message, active)
        if reason is not None:
            return reason.strip() or "a hook asked to continue"
    return None
