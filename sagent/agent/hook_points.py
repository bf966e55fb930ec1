"""The hook points around the rounds of a run: a session starts, a prompt arrives, the model wants to stop.

The loop (`sagent.agent.loop`) calls these; each asks every hook of the agent in order and combines their
answers as `sagent.agent.hooks` describes. What the hooks add for the model (context, a reason to go on)
becomes a message from the hook, a `PeerMessage` whose sender names the hook point, so the model can tell
it from its user's words. While the hooks run (a Stop hook may run a test suite), the loop keeps reading the
inbox: an interrupt stops them (a command hook's processes are killed) and the run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TYPE_CHECKING, TypeVar

from sagent.agent.hooks import PROCEED, PromptDecision, SessionSource
from sagent.agent.inbox import Inbox
from sagent.types import AssistantMessage, PeerMessage, UserMessage

if TYPE_CHECKING:  # annotations only: the loop calls these, never the other way round
    from sagent.agent.agent import Agent
    from sagent.agent.loop import Run

T = TypeVar("T")

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


async def unless_interrupted(inbox: Inbox, run: Run, work: Awaitable[T]) -> T | None:
    """`work`'s value, the inbox read meanwhile by its rules (input waits for the next safe point); None
    when an interrupt or a quit stopped `run` first, and `work` is cancelled."""
    task = asyncio.ensure_future(work)
    try:
        while not task.done():
            getter = asyncio.ensure_future(inbox.get())
            done, _ = await asyncio.wait({task, getter}, return_when=asyncio.FIRST_COMPLETED)
            if getter in done:
                if inbox.on_busy(getter.result(), run):
                    return None
            else:
                getter.cancel()
        return task.result()
    finally:
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
