"""The fleet tools: AgentSpawn starts sub-agents, AgentSend messages any peer, AgentSelf inspects and retunes
the agent itself, Jobs manages tool calls running in the background. Each parses its arguments and asks
the agent through `ToolContext.runtime`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sagent.tools.base import AnyOrder, ToolContext, ToolError
from sagent.tools.runtime import AgentDefinition, SpawnRequest

MAX_WAIT = 600
# The optional fields of a SpawnRequest the model may give (their schema is AgentSpawn's input_schema).
_SPAWN_FIELDS = (
    "label", "system", "provider", "model", "tools", "max_tool_rounds", "max_depth", "advisor", "on", "capsules",
)  # fmt: skip


class _AgentTool(AnyOrder):
    name = ""
    description = ""
    input_schema: dict[str, Any] = {}


class AgentSpawn(_AgentTool):
    name = "AgentSpawn"
    spawns_agents = True
    description = (
        "Start a sub-agent, with a context of its own, on work it can do alone (explore code, review, a side "
        "task): it returns only what matters. Calls in one response run concurrently; settings not given are "
        "yours. One-shot: the call returns its final answer. persistent: it keeps running under its label, "
        "the call returns at once, AgentSend messages it, and it reports each time it goes idle."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "prompt": {"type": "string", "description": "the whole task: it does not see your conversation"},
            "label": {"type": "string", "description": "a short unique name"},
            "system": {"type": "string", "description": "instead of your system prompt"},
            "provider": {"type": "string"},
            "model": {"type": "string"},
            "tools": {"type": "array", "items": {"type": "string"}, "description": "a subset of yours"},
            "max_tool_rounds": {"type": "integer"},
            "max_depth": {"type": "integer", "description": "levels of sub-agents below it"},
            "advisor": {"type": "string", "description": "a model id it may consult, or 'none'"},
            "capsules": {"type": "integer", "description": "carry your last N handoffs ahead of the prompt"},
            "persistent": {"type": "boolean"},
            "on": {"type": "string", "description": "NATS fleets: a serve process's label, or 'any'"},
        },
        "required": ["prompt"],
    }

    def __init__(self, agents: Iterable[AgentDefinition] = ()) -> None:
        """`agents`: the sub-agents defined in files (`sagent.resources.agent_files`) it may start by name;
        the model reads their names and descriptions in this tool's description."""
        self.agents = {agent.name: agent for agent in agents}
        if self.agents:
            self.description = type(self).description + agent_list(self.agents.values())
            names = sorted(self.agents)
            choice = {"type": "string", "enum": names, "description": "start a sub-agent defined in a file, by name"}
            self.input_schema = {
                **type(self).input_schema,
                "properties": {**type(self).input_schema["properties"], "agent": choice},
            }

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        fields = {name: arguments[name] for name in _SPAWN_FIELDS if arguments.get(name) is not None}
        wanted = arguments.get("agent")
        if wanted is not None:
            definition = self.agents.get(str(wanted).strip())
            if definition is None:
                known = ", ".join(sorted(self.agents)) or "none (no agent files were found)"
                raise ToolError(f"no agent is called {wanted!r}; the agents are: {known}")
            fields["agent"] = definition
        request = SpawnRequest(arguments["prompt"], **fields, persistent=bool(arguments.get("persistent", False)))
        return await ctx.agent().spawn(request)


def agent_list(agents: Iterable[AgentDefinition]) -> str:
    """The agents as AgentSpawn's description lists them: one line each, name and description."""
    lines = [f"\n- {agent.name}: {' '.join(agent.description.split())}" for agent in agents]
    return (
        "\n\nAgents defined in files: give `agent` with one of these names and it starts with its own "
        "instructions, tools and model (the prompt is still its task):" + "".join(lines)
    )


class AgentSend(_AgentTool):
    name = "AgentSend"
    may_background = False  # messaging is not work to send to the background
    description = (
        "Send a message to another agent by its label: a sub-agent, a sibling, your parent ('main' is the "
        "top one) or any other running agent. A busy agent reads it at its next safe point; nothing is "
        "dropped, and you get a receipt. To an agent you started (or one below it), you can also send a "
        "control instead of text: switch_model (model and/or provider), tune (effort and/or thinking), "
        "compact (optional focus), clear_tool_results (the tools whose outputs go, or keep_last), or stop. "
        "AgentSelf status lists the agents reachable now."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "to": {"type": "string", "description": "the label of the agent"},
            "message": {"type": "string", "description": "the text to send"},
            "control": {
                "type": "string",
                "enum": ["switch_model", "tune", "compact", "clear_tool_results", "stop"],
            },
            "provider": {"type": "string", "description": "for switch_model: the provider, when the id does not say"},
            "model": {"type": "string", "description": "for switch_model: the model id"},
            "focus": {"type": "string", "description": "for compact: what the summary must keep"},
            "effort": {"type": "string", "enum": ["minimal", "low", "medium", "high", "xhigh", "max"]},
            "thinking": {"type": "integer", "description": "for tune: thinking budget in tokens; 0 turns it off"},
            "tools": {"type": "array", "items": {"type": "string"}, "description": "for clear_tool_results"},
            "keep_last": {"type": "integer", "description": "for clear_tool_results: keep the last N outputs"},
        },
        "required": ["to"],
    }

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        text = arguments.get("message") or ""
        control = arguments.get("control")
        if not text.strip() and control is None:
            raise ToolError("give a message, or a control (switch_model, tune, compact, clear_tool_results, stop)")
        fields = {
            k: arguments.get(k) for k in ("provider", "model", "focus", "effort", "thinking", "tools", "keep_last")
        }
        return ctx.agent().send(arguments["to"], text, control, **fields)


class AgentSelf(_AgentTool):
    name = "AgentSelf"
    may_background = False
    description = (
        "Inspect or change your own runtime. status: your model, the context by part (system, tools, "
        "messages, tool results) against the window, cost so far, sub-agents and jobs. switch: another "
        "provider, model, reasoning effort or thinking budget, applied before your next response (refused "
        "when the model cannot hold your current context). compact: free context now (old tool outputs "
        "pruned, older turns summarised, recent turns kept), keeping what `focus` names; it also happens by "
        "itself near the window's limit. clear_tool_results: replace old tool outputs you no longer need (by "
        "call id, or all but the last `keep_last`) with a short note. detach: stop waiting for one long call "
        "of the response you are in (call AgentSelf alongside it): `name` is the label of a sub-agent an "
        "AgentSpawn call started, a tool's name or a call id; it goes on in the background and its result "
        "arrives later as a message, while the other calls are still waited for."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["status", "switch", "compact", "clear_tool_results", "detach"]},
            "provider": {"type": "string"},
            "model": {"type": "string", "description": "a model id (its provider is inferred from the id)"},
            "effort": {"type": "string", "enum": ["minimal", "low", "medium", "high", "xhigh", "max"]},
            "thinking": {"type": "integer", "description": "thinking budget in tokens; 0 turns thinking off"},
            "focus": {"type": "string", "description": "for compact: what the summary must keep"},
            "ids": {"type": "array", "items": {"type": "string"}, "description": "tool call ids to clear"},
            "keep_last": {"type": "integer", "description": "clear all tool results but the last N"},
            "name": {"type": "string", "description": "for detach: a sub-agent's label, a tool's name or a call id"},
        },
        "required": ["action"],
    }

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        runtime = ctx.agent()
        action = arguments["action"]
        if action == "status":
            return runtime.status()
        if action == "switch":
            return await runtime.switch(
                arguments.get("provider"), arguments.get("model"), arguments.get("effort"), arguments.get("thinking")
            )
        if action == "compact":
            return runtime.compact(arguments.get("focus"))
        if action == "detach":
            name = (arguments.get("name") or "").strip()
            if not name:
                raise ToolError("detach needs the name of a running call: a sub-agent's label, a tool or a call id")
            return runtime.detach(name)
        return runtime.clear_tool_results(arguments.get("ids"), arguments.get("keep_last"))


class Jobs(_AgentTool):
    name = "Jobs"
    may_background = False  # waiting on jobs is not work to send to the background
    manages_jobs = True
    description = (
        "Tool calls running in the background. Any other tool call can run in the background: give it "
        "`background: true` and it returns at once with a job id, and its result arrives later as a "
        "message. Long calls also move to the background by themselves after a time limit. list: the jobs "
        "and their state. wait: block until a job finishes (up to `timeout` seconds, or until a message comes "
        "for you) and get its result now. "
        "cancel: stop a job."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["list", "wait", "cancel"]},
            "id": {"type": "string", "description": "the job id, for wait and cancel"},
            "timeout": {"type": "integer", "description": f"for wait: seconds, 1 to {MAX_WAIT}", "default": 120},
        },
        "required": ["action"],
    }

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        runtime = ctx.agent()
        action = arguments["action"]
        if action == "list":
            return runtime.jobs()
        job_id = arguments.get("id")
        if not job_id:
            raise ToolError(f"{action} needs the job's id; list shows them")
        if action == "cancel":
            return runtime.cancel_job(job_id)
        timeout = arguments.get("timeout") or 120
        if not 1 <= timeout <= MAX_WAIT:
            raise ToolError(f"timeout must be from 1 to {MAX_WAIT} seconds, got {timeout}")
        return await runtime.wait_job(job_id, float(timeout))
