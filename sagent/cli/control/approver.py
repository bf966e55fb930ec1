"""The SDK's program as the agent's approver (`--permission-prompt-tool stdio`): every call sagent's
permission policy would ask the user about becomes a `can_use_tool` control request, as the REPL's prompt
is the approver on a terminal. It is one more `Approver` (sagent.agent.hooks): the policy, the rules and
the modes decide as always, and only what they would ask reaches the program.

The answer: `allow` runs the call, with `updatedInput` when the program changed its arguments, and adds
`updatedPermissions` (rules and a mode for this session; an update for a settings file applies to the
session only, said once); `deny` refuses it with the program's `message` for the model, and `interrupt:
true` also stops the turn. A program that fails to answer refuses the call (an approver that fails never
lets a call through).
"""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from typing import TYPE_CHECKING, Any

from sagent.agent.hooks import ALLOW, Allow, Deny, Rewrite

if TYPE_CHECKING:
    from sagent.agent.agent import Agent
    from sagent.cli.control.requester import Requester
    from sagent.types import ToolCall

PATH_TOOLS = frozenset({"Read", "Write", "Edit", "List", "Glob", "Grep", "NotebookEdit"})


class SdkApprover:
    """Asks the SDK's program about each call the policy would ask about."""

    def __init__(self, requester: Requester, stderr: Any = None) -> None:
        self.requester = requester
        self.stderr = stderr if stderr is not None else sys.stderr
        self.refuse_all = False  # the program set dontAsk: what would ask is refused, unasked
        self._said: set[str] = set()

    async def __call__(self, agent: Agent, call: ToolCall, reason: str) -> Allow | Deny | Rewrite:
        if self.refuse_all:
            return Deny(f"{reason or 'this call needs approval'}; the permission mode is dontAsk")
        request: dict[str, Any] = {
            "subtype": "can_use_tool",
            "tool_name": call.name,
            "input": call.arguments,
            "tool_use_id": call.id,
            "permission_suggestions": suggestions(agent, call),
        }
        if reason:
            request["decision_reason"] = reason
            request["description"] = reason
        path = blocked_path(agent, call)
        if path is not None:
            request["blocked_path"] = path
        if agent.parent is not None:
            request["agent_id"] = agent.label
        from sagent.userhooks.notification import permission_message, run_notification_hooks

        notified = run_notification_hooks(agent, permission_message(call.name), "permission_prompt")
        answer, _ = await asyncio.gather(self.requester.request(request), notified)  # the question, and the hooks
        if answer.get("behavior") == "allow":
            self._apply(agent, answer.get("updatedPermissions"))
            updated = answer.get("updatedInput")
            if isinstance(updated, dict) and updated != call.arguments:
                return Rewrite(updated)
            return ALLOW
        if answer.get("behavior") != "deny":
            return Deny(f"the SDK's program answered can_use_tool with {answer.get('behavior')!r}, not allow or deny")
        if answer.get("interrupt"):
            root = agent
            while root.parent is not None:
                root = root.parent
            root.interrupt()
        message = answer.get("message")
        return Deny(message if isinstance(message, str) and message else "the SDK's program refused this call")

    def _apply(self, agent: Agent, updates: Any) -> None:
        """`updatedPermissions`: rules and the mode, for the rest of this session."""
        if not isinstance(updates, list):
            return
        from sagent.permissions.policy import Permissions, set_mode
        from sagent.permissions.rules import RuleError, parse_rule

        for update in updates:
            if not isinstance(update, dict):
                continue
            kind = update.get("type")
            if update.get("destination") not in (None, "session", "cliArg"):
                self._say(
                    "permission updates for settings files apply to this session only: sagent does not write them"
                )
            if kind == "setMode" and update.get("mode") in ("default", "acceptEdits", "plan"):
                set_mode(agent, update["mode"], "the SDK's permission update")
            elif kind == "addRules" and update.get("behavior") in ("allow", "deny", "ask"):
                policy = agent.settings.permissions
                if not isinstance(policy, Permissions):
                    continue
                for value in update.get("rules") or ():
                    text = rule_text(value)
                    if text is None:
                        continue
                    try:
                        rule = parse_rule(text, "the SDK's permission update", str(agent.context.cwd))
                    except RuleError as error:
                        self._say(f"a permission rule from the SDK's program is not used: {error}")
                        continue
                    policy = policy.with_rule(update["behavior"], rule)
                agent.settings = dataclasses.replace(agent.settings, permissions=policy)
            elif kind is not None:
                self._say(f"the permission update {kind!r} from the SDK's program is not supported")

    def _say(self, line: str) -> None:
        if line not in self._said:
            self._said.add(line)
            self.stderr.write(f"sagent: note: {line}\n")
            self.stderr.flush()


def rule_text(value: Any) -> str | None:
    """`Bash(git diff:*)` for the SDK's `{"toolName": "Bash", "ruleContent": "git diff:*"}`."""
    if not isinstance(value, dict) or not isinstance(value.get("toolName"), str):
        return None
    content = value.get("ruleContent")
    return f"{value['toolName']}({content})" if isinstance(content, str) and content else value["toolName"]


def suggestions(agent: Agent, call: ToolCall) -> list[dict[str, Any]]:
    """What "don't ask again this session" would allow, as the SDK's permission updates (the rules the
    REPL offers for the same call)."""
    from sagent.permissions.suggest import suggest_rules

    try:
        rules = suggest_rules(agent, call)
    except Exception:  # a call the rules cannot read offers nothing
        return []
    values = []
    for text in rules:
        tool, paren, rest = text.partition("(")
        values.append(
            {"toolName": tool, "ruleContent": rest[:-1]} if paren and rest.endswith(")") else {"toolName": tool}
        )
    if not values:
        return []
    return [{"type": "addRules", "rules": values, "behavior": "allow", "destination": "session"}]


def blocked_path(agent: Agent, call: ToolCall) -> str | None:
    """The file a file tool's call would touch, for the program's question."""
    if call.name not in PATH_TOOLS:
        return None
    for key in ("path", "file_path", "notebook_path"):
        value = call.arguments.get(key)
        if isinstance(value, str) and value:
            from pathlib import Path

            return str((Path(agent.context.cwd) / value).resolve())
    return None
