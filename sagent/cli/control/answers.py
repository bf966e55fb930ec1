"""sagent's answers to the control requests of the Claude Agent SDK's program.

Each request gets an answer: its response body, or an exception whose text the channel sends back as an
error response (a request sagent cannot do says so; none is left unanswered).

- `initialize`: what sagent offers (its slash commands, the model, the output style), after registering
  the program's hook callbacks; the program's `agents` join the agent files AgentSpawn starts by name.
- `interrupt`: the running turn stops; its result is written, and the next message starts a new turn.
- `set_permission_mode`: the mode of the agent and the sub-agents it spawns from now on.
- `set_model`: sagent's hot switch: the next request goes to the model named (`provider:model` or a
  model id); no model: back to the one the run started on.
- `mcp_status`, `get_context_usage`: the servers, and the next request's size by part.
- `rewind_files`, `mcp_reconnect`, `mcp_toggle`, `stop_task` and anything else: an error saying why.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sagent import __version__

if TYPE_CHECKING:
    from sagent.agent.agent import Agent
    from sagent.cli.control.approver import SdkApprover
    from sagent.cli.control.requester import Requester
    from sagent.permissions.modes import HeadlessDefault
    from sagent.providers.base import Model

OUTPUT_STYLE = "default"
SDK_MODES = ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto")


REQUESTS = frozenset(
    {
        "initialize",
        "interrupt",
        "set_permission_mode",
        "set_model",
        "set_max_thinking_tokens",
        "mcp_status",
        "get_context_usage",
        "mcp_message",
        "rewind_files",
        "mcp_reconnect",
        "mcp_toggle",
        "stop_task",
    }
)
"""The control requests of the SDK's program that sagent answers (each by its `_<subtype>` method)."""


class ControlRequestError(Exception):
    """A control request sagent cannot do: its text is the error response."""


@dataclass
class Answers:
    """Answers the SDK's requests about one run's `agent`."""

    agent: Agent
    requester: Requester
    approver: SdkApprover | None = None
    stderr: Any = None
    first_model: Model | None = None
    _headless: HeadlessDefault | None = None  # the policy's own headless default, before a dontAsk
    compose_system: Callable[[str | None, str | None], str] | None = None
    """The system prompt for a replacement (None: sagent's own) and an addition, as the flags make it."""
    _said: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.first_model = self.first_model or self.agent.model

    async def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        subtype = body.get("subtype")
        if subtype not in REQUESTS:
            raise ControlRequestError(f"sagent does not support the control request {subtype!r}")
        result: dict[str, Any] = await getattr(self, f"_{subtype}")(body)
        return result

    # ----------------------------------------------------------------------------------------- requests

    async def _initialize(self, body: dict[str, Any]) -> dict[str, Any]:
        response: dict[str, Any] = {
            "commands": slash_commands(self.agent),
            "agents": [],
            "output_style": OUTPUT_STYLE,
            "available_output_styles": [OUTPUT_STYLE],
            "models": [model_info(self.agent.model)],
            "account": {"apiKeySource": "none", "tokenSource": self.agent.model.provider},
            "pid": os.getpid(),
            "sagent_version": __version__,
        }
        hooks = body.get("hooks")
        if isinstance(hooks, dict) and hooks:
            from sagent.cli.control.hooks import install_hook_callbacks

            for warning in install_hook_callbacks(self.agent, hooks, self.requester):
                self._say(warning)
            response["hooks_applied"] = True
            response["hook_on_failure_supported"] = True  # a callback that fails blocks, when it says so
        if body.get("sdkMcpServers"):  # the TypeScript SDK names its in-process servers here, not in --mcp-config
            from sagent.cli.control.sdk_mcp import attach_sdk_servers

            attach_sdk_servers(self.agent, body["sdkMcpServers"], self.requester, self._say)
        if "mcpServers" in body:  # the TypeScript SDK's mcpServersDelivery "initialize": not on the command line
            from sagent.cli.control.initialize_mcp import attach_initialize_servers

            attach_initialize_servers(self.agent, body["mcpServers"], self._say)
            response["mcp_servers_applied"] = True
        if self.compose_system is not None and ("systemPrompt" in body or "appendSystemPrompt" in body):
            # The TypeScript SDK gives the system prompt here rather than on the command line.
            given = body.get("systemPrompt")
            text = "\n\n".join(p for p in given if isinstance(p, str)) if isinstance(given, list) else given
            append = body.get("appendSystemPrompt")
            system = self.compose_system(
                text if isinstance(text, str) and text else None, append if isinstance(append, str) else None
            )
            self.agent.configure(system=system)
        from sagent.cli.control.sdk_agents import agent_infos, attach_program_agents

        if body.get("agents"):  # ClaudeAgentOptions.agents: AgentSpawn starts them by name
            attach_program_agents(self.agent, body["agents"], self._say)
        response["agents"] = agent_infos(self.agent)
        return response

    async def _interrupt(self, body: dict[str, Any]) -> dict[str, Any]:
        if self.agent.running:
            self.agent.interrupt()
        return {}

    async def _set_permission_mode(self, body: dict[str, Any]) -> dict[str, Any]:
        from sagent.permissions.policy import Permissions, set_mode

        mode = body.get("mode")
        if mode not in SDK_MODES:
            raise ControlRequestError(f"{mode!r} is not a permission mode ({', '.join(SDK_MODES)})")
        policy = self.agent.settings.permissions
        if not isinstance(policy, Permissions):
            raise ControlRequestError("this run has no permission policy to change")
        if mode == "bypassPermissions" and not policy.started_in_bypass:
            raise ControlRequestError(
                "bypassPermissions can be switched to only in a run started in it or with "
                "--allow-dangerously-skip-permissions (ClaudeAgentOptions allow_dangerously_skip_permissions)"
            )
        if self.approver is not None:
            self.approver.refuse_all = mode == "dontAsk"
        else:  # nobody is asked: dontAsk refuses what would ask; leaving it, the run's own default is back
            if self._headless is None:
                self._headless = policy.headless
            headless = "deny" if mode == "dontAsk" else self._headless
            self.agent.settings = replace(self.agent.settings, permissions=replace(policy, headless=headless))
        set_mode(self.agent, "default" if mode in ("dontAsk", "auto") else mode, "the SDK's set_permission_mode")
        return {}

    async def _set_model(self, body: dict[str, Any]) -> dict[str, Any]:
        from sagent.advisor.target import advisor_target
        from sagent.providers.base import ProviderError

        name = body.get("model")
        if name in (None, "", "default"):
            assert self.first_model is not None
            model = self.first_model
        elif not isinstance(name, str):
            raise ControlRequestError("set_model takes a model name")
        else:
            provider, model_name = advisor_target(name)  # a bare id: the provider it names, else this run's
            try:
                model = self.agent.fleet.models(provider, model_name)
            except Exception as error:
                raise ControlRequestError(f"cannot switch to {name}: {getattr(error, 'message', error)}") from None
        try:
            self.agent.switch_model(model)
        except ProviderError as error:  # a model without a price under a budget
            raise ControlRequestError(f"cannot switch to {name}: {error}") from None
        return {}

    async def _mcp_status(self, body: dict[str, Any]) -> dict[str, Any]:
        from sagent.mcp.setup import servers_of

        servers = servers_of(self.agent)
        found: list[dict[str, Any]] = []
        for c in servers.connections.values() if servers is not None else ():
            status = {"connected": "connected", "failed": "failed", "stopped": "disabled"}.get(c.state, "pending")
            entry: dict[str, Any] = {"name": c.name, "status": status}
            if c.error:
                entry["error"] = c.error
            if c.state == "connected":
                entry["tools"] = [{"name": t.name, "description": t.description} for t in c.tools]
            found.append(entry)
        return {"mcpServers": found}

    async def _get_context_usage(self, body: dict[str, Any]) -> dict[str, Any]:
        size = self.agent.context_size()
        window = size.window or self.agent.context_window or 0
        parts = (
            ("System prompt", size.system, "promptBorder"),
            ("System tools", size.tools, "inactive"),
            ("Messages", size.messages, "purple"),
            ("Tool results", size.tool_results, "claude"),
        )
        return {
            "categories": [{"name": n, "tokens": t, "color": c} for n, t, c in parts],
            "totalTokens": size.total,
            "maxTokens": window,
            "rawMaxTokens": window,
            "percentage": round(100 * size.total / window, 1) if window else 0.0,
            "model": self.agent.model.name,
            "isAutoCompactEnabled": self.agent.compaction_line() != "",
            "memoryFiles": [],
        }

    async def _set_max_thinking_tokens(self, body: dict[str, Any]) -> dict[str, Any]:
        tokens = body.get("max_thinking_tokens")
        if tokens is not None and (not isinstance(tokens, int) or tokens < 0):
            raise ControlRequestError("max_thinking_tokens must be a whole number of tokens, or null")
        self.agent.configure(thinking_budget=tokens or None)
        return {}

    async def _mcp_message(self, body: dict[str, Any]) -> dict[str, Any]:
        # A notification from an in-process server of the program (its tool list changed): noted, no answer.
        return {"mcp_response": {"jsonrpc": "2.0", "result": {}}}

    async def _rewind_files(self, body: dict[str, Any]) -> dict[str, Any]:
        raise ControlRequestError(
            "rewind_files is not supported: sagent's records carry no message ids to rewind to "
            "(the REPL's /rewind rewinds files by turn)"
        )

    async def _mcp_reconnect(self, body: dict[str, Any]) -> dict[str, Any]:
        raise ControlRequestError(f"mcp_reconnect is not supported (server {body.get('serverName')!r})")

    async def _mcp_toggle(self, body: dict[str, Any]) -> dict[str, Any]:
        raise ControlRequestError(f"mcp_toggle is not supported (server {body.get('serverName')!r})")

    async def _stop_task(self, body: dict[str, Any]) -> dict[str, Any]:
        task = body.get("task_id")
        jobs = self.agent.cancel_job(str(task)) if isinstance(task, str) else ()
        if not jobs:
            raise ControlRequestError(f"no running task {task!r}")
        return {}

    def _say(self, line: str) -> None:
        if line in self._said or self.stderr is None:
            return
        self._said.add(line)
        self.stderr.write(f"sagent: note: {line}\n")
        self.stderr.flush()


def slash_commands(agent: Agent) -> list[dict[str, str]]:
    """The slash commands a prompt may start with in this run: the custom commands, and /init."""
    from sagent.skill_commands import load_prompt_commands

    found, _ = load_prompt_commands(Path(agent.settings.cwd or "."))  # the skills too
    commands = [{"name": "init", "description": "write AGENTS.md for this project", "argumentHint": ""}]
    for name, command in sorted(found.items()):
        commands.append({"name": name, "description": command.description, "argumentHint": command.argument_hint})
    return commands


def model_info(model: Model) -> dict[str, Any]:
    return {"value": model.name, "displayName": f"{model.provider}/{model.name}", "description": model.provider}
