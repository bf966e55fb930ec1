"""`CommandHooks`: the user's hook commands from settings, run at the loop's hook points.

    hooks = CommandHooks.from_settings({"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "./.sagent/hooks/check-bash.sh"}]}]}, project_dir=".")
    agent = Agent(model, tools=builtin_tools(), hooks=[hooks])

Each event maps to a point of `sagent.agent.hooks.Hook`: `SessionStart` to `on_session_start` (the main agent
only; `SubagentStart` for a sub-agent), `UserPromptSubmit` to `on_prompt` (the user's messages to the main
agent), `PreToolUse` to `before_tool`, `PostToolUse` to `after_tool` (and `PostToolUseFailure` too, for a call
whose result is an error), `Stop` and `SubagentStop` to `on_stop` (of the main agent and of a sub-agent),
`PreCompact` to `before_compact`, `PermissionRequest` to `on_permission_request`. The commands an event
selects run at the same time; each gets one JSON object on stdin:

    {"session_id", "transcript_path", "cwd", "hook_event_name", "agent", "permission_mode",
     "tool_name", "tool_input", "tool_use_id", "tool_response",   (tool events; "error" for a failure)
     "prompt",                                                    (UserPromptSubmit)
     "stop_hook_active", "last_assistant_message",                (Stop, SubagentStop)
     "source",                                                    (SessionStart: startup or resume)
     "trigger", "custom_instructions",                            (PreCompact: manual or auto, the focus)
     "agent_id", "agent_type", "agent_transcript_path"}           (a sub-agent's: its label, ...)

`transcript_path` is the agent's session log (sagent's JSON lines; empty for a session kept in memory) and
`tool_response` is `{"output": text, "is_error": bool}`. How the answers are read: `sagent.userhooks.answers`.
Combined, for a tool call: a deny (exit 2, `deny`, `block`) beats an ask, which beats a rewrite
(`updatedInput`), which beats allow. Everything a hook has to say to the user, and every hook that fails,
reaches them as a `HookNotice` (`Agent.notify`).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sagent.agent.hooks import ALLOW, PROCEED, Ask, Deny, Hook, PromptDecision, Rewrite, SessionSource, ToolDecision
from sagent.events import HookNotice
from sagent.types import AssistantMessage, TextPart, ToolCall, ToolResult, UserMessage
from sagent.userhooks.answers import NO_REASON, Answer, read_answer
from sagent.userhooks.callbacks import run_callback
from sagent.userhooks.config import HookCallback, HookEntry, HookTable, parse_hooks
from sagent.userhooks.runner import hook_environment, run_command

if TYPE_CHECKING:
    from collections.abc import Mapping

    from sagent.agent.agent import Agent
    from sagent.agent.compaction import Trigger

SUBAGENT_TYPE = "general-purpose"
"""The `agent_type` hooks are told for a sub-agent not started from an agent file (Claude Code's general kind);
one from a file is told the file's agent name, as Claude Code does."""
DENIED = "denied: "  # how the loop starts the result of a call that did not run (sagent.agent.rounds)


class CommandHooks(Hook):
    """Runs the command hooks of a `hooks` settings value (Claude Code's shape) for every agent of a tree."""

    def __init__(
        self, table: HookTable, *, project_dir: str | Path | None = None, env: Mapping[str, str] | None = None
    ) -> None:
        """`table` is a parsed `hooks` value (`sagent.userhooks.config.parse_hooks`); `project_dir` is where
        the commands run and what `SAGENT_PROJECT_DIR` names (None: the agent's working directory); `env`
        is the environment they get (None: this process's)."""
        self.table = table
        self.project_dir = Path(project_dir).resolve() if project_dir is not None else None
        self.env = dict(env) if env is not None else None

    @classmethod
    def from_settings(
        cls, hooks: Any, *, project_dir: str | Path | None = None, env: Mapping[str, str] | None = None
    ) -> CommandHooks:
        """From the `hooks` value of a settings file (as JSON gives it); `HookConfigError` naming the key
        for a value of the wrong shape. Events sagent does not run (Claude Code's `Notification`, ...) are
        left out."""
        return cls(parse_hooks(hooks)[0], project_dir=project_dir, env=env)

    @property
    def events(self) -> tuple[str, ...]:
        """The events some command is configured for."""
        return tuple(event for event, groups in self.table.items() if groups)

    # ------------------------------------------------------------------------------- the hook points

    async def on_session_start(self, agent: Agent, source: SessionSource) -> str | None:
        if agent.parent is not None:
            starting = await self._run(agent, "SubagentStart", agent.settings.agent_type or SUBAGENT_TYPE, {})
            return _joined(a.context for _, a in starting) or None
        answers = await self._run(agent, "SessionStart", source, {"source": source})
        for name, answer in answers:
            if answer.block is not None:  # exit 2 here blocks nothing: its stderr is for the user
                agent.notify(HookNotice(name, answer.block, "warning"))
        return _joined(a.context for _, a in answers) or None

    async def on_prompt(self, agent: Agent, message: UserMessage) -> PromptDecision:
        if agent.parent is not None:
            return PROCEED
        answers = await self._run(agent, "UserPromptSubmit", None, {"prompt": message.text})
        for _, answer in answers:
            if answer.block is not None or answer.stop is not None:
                return PromptDecision(block=answer.block if answer.block is not None else answer.stop)
        context = _joined(a.context for _, a in answers)
        return PromptDecision(context=context) if context else PROCEED

    async def before_tool(self, agent: Agent, call: ToolCall) -> ToolDecision:
        fields = {"tool_name": call.name, "tool_input": call.arguments, "tool_use_id": call.id}
        answers = [a for _, a in await self._run(agent, "PreToolUse", call.name, fields)]
        for answer in answers:
            if answer.block is not None:
                return Deny(answer.block)
            if answer.permission == "deny":
                return Deny(answer.reason or NO_REASON)
            if answer.stop is not None:
                return Deny(f"the agent was stopped by a hook: {answer.stop}")
        asks = [a.reason for a in answers if a.permission == "ask"]
        if asks:
            return Ask("; ".join(r for r in asks if r) or "a PreToolUse hook asks")
        rewrite = next((a.updated_input for a in answers if a.updated_input is not None), None)
        return Rewrite(rewrite) if rewrite is not None else ALLOW

    async def after_tool(self, agent: Agent, call: ToolCall, result: ToolResult) -> ToolResult | None:
        if result.is_error and result.text.startswith(DENIED):
            return None  # it did not run: nothing happened to look at
        fields = {
            "tool_name": call.name,
            "tool_input": call.arguments,
            "tool_use_id": call.id,
            "tool_response": {"output": result.text, "is_error": result.is_error},
        }
        answers = [a for _, a in await self._run(agent, "PostToolUse", call.name, fields)]
        if result.is_error:
            failed = {**{k: v for k, v in fields.items() if k != "tool_response"}, "error": result.text}
            answers += [a for _, a in await self._run(agent, "PostToolUseFailure", call.name, failed)]
        replaced = next((a.updated_output for a in answers if a.updated_output is not None), None)
        feedback = [a.block for a in answers if a.block is not None] + [a.context for a in answers if a.context]
        if replaced is None and not feedback:
            return None
        content = (TextPart(replaced),) if replaced is not None else result.content
        if feedback:
            note = "\n\n".join(f"[PostToolUse hook] {text}" for text in feedback)
            content = (*content, TextPart(f"\n\n{note}"))
        return replace(result, content=content)

    async def on_permission_request(self, agent: Agent, call: ToolCall, reason: str) -> ToolDecision | None:
        fields = {"tool_name": call.name, "tool_input": call.arguments, "tool_use_id": call.id}
        answers = [a for _, a in await self._run(agent, "PermissionRequest", call.name, fields)]
        for answer in answers:
            if answer.block is not None:
                return Deny(answer.block)
            if answer.permission == "deny":
                return Deny(answer.reason or NO_REASON)
        allowed = [a for a in answers if a.permission == "allow"]
        if not allowed:
            return None
        rewrite = next((a.updated_input for a in allowed if a.updated_input is not None), None)
        return Rewrite(rewrite) if rewrite is not None else ALLOW

    async def before_compact(self, agent: Agent, trigger: Trigger, focus: str | None) -> None:
        kind = "manual" if trigger == "manual" else "auto"  # Claude Code's two: a refused request is auto
        fields = {"trigger": kind, "custom_instructions": focus}
        for name, answer in await self._run(agent, "PreCompact", kind, fields):
            if answer.block is not None:  # nothing to block here: its reason is for the user
                agent.notify(HookNotice(name, answer.block, "warning"))

    async def on_stop(self, agent: Agent, message: AssistantMessage, active: bool) -> str | None:
        event = "Stop" if agent.parent is None else "SubagentStop"
        fields = {"stop_hook_active": active, "last_assistant_message": message.text}
        answers = [a for _, a in await self._run(agent, event, None, fields)]
        if any(a.stop is not None for a in answers):
            return None  # `continue: false` wins over a reason to go on
        return next((a.block for a in answers if a.block is not None), None)

    # ------------------------------------------------------------------------------------ running them

    async def _run(
        self, agent: Agent, event: str, target: str | None, fields: dict[str, Any]
    ) -> list[tuple[str, Answer]]:
        """Run the commands `event` selects for `target` (a tool name, a session's source) at once; their
        answers, each with the name notices give it. What they tell the user is told here."""
        commands: list[HookEntry] = []
        for group in self.table.get(event, ()):
            if target is None or group.matches(target):
                commands += [c for c in group.commands if c not in commands]  # the same command runs once
        if not commands:
            return []
        path = agent.session.path
        payload = {
            "session_id": agent.session.id,
            "transcript_path": str(path) if path is not None else "",
            "cwd": str(agent.context.cwd),
            "hook_event_name": event,
            "agent": agent.label,
            **fields,
        }
        mode = getattr(agent.settings.permissions, "mode", None)  # a `Permissions` policy's
        if isinstance(mode, str):
            payload["permission_mode"] = mode
        if agent.parent is not None:  # Claude Code's names for the sub-agent a hook runs for
            payload["agent_id"] = agent.label
            payload["agent_type"] = agent.settings.agent_type or SUBAGENT_TYPE  # an agent file's name
            if event == "SubagentStop":
                payload["agent_transcript_path"] = payload["transcript_path"]
        data = json.dumps(payload, ensure_ascii=False, default=str).encode("utf-8", errors="replace")
        cwd = self.project_dir or agent.context.cwd
        env = hook_environment(cwd, self.env)

        async def answer_of(entry: HookEntry) -> Answer:
            if isinstance(entry, HookCallback):
                return await run_callback(entry, event, json.loads(data))  # a copy of its own, as JSON has it
            return read_answer(event, await run_command(entry.command, data, cwd=cwd, env=env, timeout=entry.timeout))

        answers = await asyncio.gather(*(answer_of(c) for c in commands))
        out = []
        for command, answer in zip(commands, answers, strict=True):
            if isinstance(command, HookCallback):
                name = f"{event} callback {command.name}"
            else:
                name = f"{event} `{_short(command.command)}`"
            for level, text in answer.notices:
                agent.notify(HookNotice(name, text, level))
            if answer.stop is not None and event not in ("Stop", "SubagentStop"):
                agent.notify(HookNotice(name, f"stopped the agent: {answer.stop}", "warning"))
                agent.interrupt()
            out.append((name, answer))
        return out


def _joined(texts: Any) -> str:
    return "\n\n".join(t for t in texts if t)


def _short(command: str, limit: int = 60) -> str:
    line = " ".join(command.split())
    return line if len(line) <= limit else "…" + line[-(limit - 1) :]  # the end names the script
