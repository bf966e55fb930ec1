"""The permission question put to the editor (`session/request_permission`): sagent's approver for an
ACP session, asked exactly where the REPL asks its user (a hook's `Ask`, see `sagent.agent.call_hooks`).

The options: allow once; allow always (the rules the REPL's "don't ask again this session" records, e.g.
`Bash(git diff:*)` or `Edit(./**)`, kept for the session); reject once; reject always (the same rules,
refused unasked for the rest of the session). A plan (ExitPlanMode) is approved into acceptEdits or
default mode, or sent back to be revised. A cancelled turn's question is a refusal.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from sagent.agent.hooks import ALLOW, Allow, Deny
from sagent.permissions.modes import PLAN_TOOL
from sagent.permissions.policy import allowed_by, set_mode
from sagent.permissions.rules import Rule, RuleError, parse_rule, subject_of
from sagent.permissions.suggest import remembered, suggest_rules

if TYPE_CHECKING:
    from acp.interfaces import Client

    from sagent.acp.updates import SessionUpdates
    from sagent.agent.agent import Agent
    from sagent.types import ToolCall

ALLOW_ONCE, ALLOW_ALWAYS, REJECT_ONCE, REJECT_ALWAYS = "allow_once", "allow_always", "reject_once", "reject_always"
PLAN_ACCEPT_EDITS, PLAN_DEFAULT, PLAN_REVISE = "accept_edits", "default", "keep_planning"


class EditorApprover:
    """Asks the editor about each call sagent's permission policy (or a hook) wants asked about, one
    question at a time, and remembers the session's "always" answers."""

    def __init__(
        self, client: Client, updates: SessionUpdates, mode_changed: Callable[[], Awaitable[None]] | None = None
    ) -> None:
        self.client = client
        self.updates = updates
        self.mode_changed = mode_changed
        self.lock = asyncio.Lock()
        self.allowed: list[Rule] = []
        """Rules the user allowed for this session ("allow always")."""
        self.refused: list[Rule] = []
        """Rules the user refused for this session ("reject always")."""

    async def __call__(self, agent: Agent, call: ToolCall, reason: str) -> Allow | Deny:
        answer = self._remembered(agent, call)
        if answer is None:
            async with self.lock:
                answer = self._remembered(agent, call)  # answered while this call waited for its turn
                if answer is None:
                    answer = await self._ask(agent, call)
        if isinstance(answer, Allow):
            await self.updates.running(call)  # the editor shows it running from now, not while it asked
        return answer

    def _remembered(self, agent: Agent, call: ToolCall) -> Allow | Deny | None:
        if call.name == PLAN_TOOL:
            return None
        if self.refused and allowed_by(self.refused, subject_of(call.name, call.arguments, str(agent.context.cwd))):
            return Deny("the user refused calls like this one for this session")
        return ALLOW if remembered(agent, call, self.allowed) else None

    async def _ask(self, agent: Agent, call: ToolCall) -> Allow | Deny:
        from acp.schema import PermissionOption

        diff = await self.updates.announce(agent, call)
        plan = call.name == PLAN_TOOL
        rules = [] if plan else suggest_rules(agent, call)
        choices = _plan_choices() if plan else _choices(rules)
        options = [PermissionOption(option_id=i, name=name, kind=kind) for i, name, kind in choices]
        from sagent.userhooks.notification import permission_message, run_notification_hooks

        notified = run_notification_hooks(agent, permission_message(call.name), "permission_prompt")
        try:
            response, _ = await asyncio.gather(  # the question, and the settings' Notification hooks
                self.client.request_permission(
                    session_id=self.updates.session_id,
                    tool_call=self.updates.question(agent, call, diff),
                    options=options,
                ),
                notified,
            )
        except asyncio.CancelledError:
            raise
        except Exception as error:  # the editor failed to answer: nothing runs unasked
            return Deny(f"the editor could not ask the user: {error}")
        outcome: Any = response.outcome
        if outcome.outcome != "selected":
            return Deny("the user cancelled the turn")
        chosen = str(outcome.option_id)
        if plan:
            return await self._plan_answer(agent, chosen)
        if chosen in (ALLOW_ALWAYS, REJECT_ALWAYS):
            cwd = str(agent.context.cwd)
            target = self.allowed if chosen == ALLOW_ALWAYS else self.refused
            for text in rules:
                with contextlib.suppress(RuleError):
                    target.append(parse_rule(text, "this session (the editor)", cwd))
        if chosen in (ALLOW_ONCE, ALLOW_ALWAYS):
            return ALLOW
        if chosen == REJECT_ALWAYS:
            return Deny(f"the user said no, and to refuse {', '.join(rules)} for this session")
        return Deny("the user said no")

    async def _plan_answer(self, agent: Agent, chosen: str) -> Allow | Deny:
        if chosen == PLAN_REVISE or chosen not in (PLAN_ACCEPT_EDITS, PLAN_DEFAULT):
            return Deny("the user did not approve the plan; stay in plan mode and revise it")
        set_mode(agent, "acceptEdits" if chosen == PLAN_ACCEPT_EDITS else "default", "the approved plan")
        if self.mode_changed is not None:
            await self.mode_changed()
        return ALLOW


def _choices(rules: list[str]) -> list[tuple[str, str, Any]]:
    if not rules:  # nothing a rule could name safely (a line that cannot be split): ask each time
        return [(ALLOW_ONCE, "Allow once", "allow_once"), (REJECT_ONCE, "Reject", "reject_once")]
    named = ", ".join(rules)
    return [
        (ALLOW_ONCE, "Allow once", "allow_once"),
        (ALLOW_ALWAYS, f"Always allow {named} (this session)", "allow_always"),
        (REJECT_ONCE, "Reject", "reject_once"),
        (REJECT_ALWAYS, f"Always reject {named} (this session)", "reject_always"),
    ]


def _plan_choices() -> list[tuple[str, str, Any]]:
    return [
        (PLAN_ACCEPT_EDITS, "Yes, and accept edits (acceptEdits mode)", "allow_always"),
        (PLAN_DEFAULT, "Yes, asking before each edit (default mode)", "allow_once"),
        (PLAN_REVISE, "No, keep planning", "reject_once"),
    ]
