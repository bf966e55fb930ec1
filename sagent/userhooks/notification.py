"""The `Notification` hook event: a surface that tells its user something needs them (the REPL when a turn
ends or a permission question waits, a Claude Agent SDK program asked a permission question) runs the
`Notification` commands of the settings' hooks with Claude Code's input:

    {"hook_event_name": "Notification", "message": "sagent needs your permission to use Bash",
     "title": "sagent", "notification_type": "permission_prompt", "session_id": ..., "cwd": ..., ...}

`notification_type` is `permission_prompt` (a question waits) or `idle_prompt` (the turn ended and sagent waits
for the user); a hook's `matcher` selects on it. A surface may add fields of its own (the REPL's
`terminal_focused`).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from sagent.agent.agent import Agent

NotificationType = Literal["permission_prompt", "idle_prompt"]
TITLE = "sagent"


def waiting_message() -> str:
    """What an `idle_prompt` notification says."""
    return "sagent is waiting for your input"


def permission_message(tool: str) -> str:
    """What a `permission_prompt` notification says for a call of `tool`."""
    return f"sagent needs your permission to use {tool}"


async def run_notification_hooks(
    agent: Agent, message: str, notification_type: NotificationType, extra: dict[str, Any] | None = None
) -> None:
    """Run the agent's `Notification` command hooks, if it has any (they never block anything)."""
    from sagent.userhooks.command_hooks import CommandHooks

    fields = {"message": message, "title": TITLE, "notification_type": notification_type, **(extra or {})}
    for hook in agent.settings.hooks:
        if isinstance(hook, CommandHooks) and "Notification" in hook.events:
            await hook.on_notification(agent, fields)


_RUNNING: set[asyncio.Future[None]] = set()


def start_notification_hooks(
    agent: Agent, message: str, notification_type: NotificationType, extra: dict[str, Any] | None = None
) -> None:
    """`run_notification_hooks` in the background: the question or the prompt never waits on a hook."""
    from sagent.userhooks.command_hooks import CommandHooks

    if not any(isinstance(h, CommandHooks) and "Notification" in h.events for h in agent.settings.hooks):
        return
    task = asyncio.ensure_future(run_notification_hooks(agent, message, notification_type, extra))
    _RUNNING.add(task)
    task.add_done_callback(_RUNNING.discard)
