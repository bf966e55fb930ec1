"""`sagent mcp serve`: sagent as an MCP server, for Claude Code, Codex, Gemini CLI or any MCP host.

It offers sagent's own tools (files, search, the web tools with the fetch guard, the paper tools; not the
tools that need a running sagent agent) and `sagent_task`, which runs a whole sagent task on any provider
within a budget and answers with the result and its cost. Over stdio by default, or streamable HTTP on
127.0.0.1 (`--http PORT`, endpoint `/mcp`), where every request must carry the server's bearer token
(`sagent.mcp.auth`).

Every call goes through the server's permission policy (the `Permissions` it was started with: mode,
rules, headless default) exactly as an agent's tool call does: the tools run inside a tool host, an
`Agent` that never calls its model, through `sagent.agent.rounds.run_call` (its hooks, then its tools
with its `ToolContext`, the single path every agent's calls take, so whatever that path applies, such
as the OS sandbox around Bash, applies here too). Nobody is there to answer a question: a call that
would ask runs or is refused by the policy's headless default. `sagent_task`'s agent runs under the same
policy.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sagent.mcp.content import mcp_content
from sagent.sandbox.policy import DEFAULT as DEFAULT_SANDBOX
from sagent.sandbox.policy import SandboxPolicy
from sagent.tools.base import Tool, manages_jobs, spawns_agents
from sagent.types import ToolCall, ToolResult

if TYPE_CHECKING:
    from sagent.agent.agent import Agent
    from sagent.mcp.auth import App
    from sagent.permissions.policy import Permissions

TASK_TOOL = "sagent_task"
DEFAULT_BUDGET_USD = 1.0
TASK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "prompt": {"type": "string", "description": "the task, as you would give it to a coding agent"},
        "provider": {"type": "string", "description": "anthropic, openai, google, local, ... (default: sagent's)"},
        "model": {"type": "string", "description": "a model id of that provider (default: its default model)"},
        "max_budget_usd": {"type": "number", "description": "stop once the task has cost this much"},
    },
    "required": ["prompt"],
}
NEEDS_AN_AGENT = frozenset({"Jobs", "AgentSpawn", "AgentSend", "AgentSelf", "TodoWrite"})
"""Tools that act on the agent running them (TodoWrite keeps its task list, which a host would never see)."""


def served_tools(tools: Sequence[Tool]) -> list[Tool]:
    """The tools an MCP host may call directly: those that need no running sagent agent."""
    return [t for t in tools if not spawns_agents(t) and not manages_jobs(t) and t.name not in NEEDS_AN_AGENT]


class SagentServer:
    """The MCP server's behaviour, apart from the SDK's plumbing: which tools there are and what a call does."""

    def __init__(
        self,
        tools: Sequence[Tool],
        cwd: Path,
        budget_usd: float = DEFAULT_BUDGET_USD,
        permissions: Permissions | None = None,
        sandbox: SandboxPolicy | None = None,
    ) -> None:
        """`permissions` is the policy every call is held to (None: every call runs, for code that decides
        for itself what it serves); `sandbox` the OS sandbox served Bash calls and `sagent_task`'s run in
        (None: the default, workspace-write without network)."""
        from sagent.agent.agent import Agent
        from sagent.agent.session import SessionLog
        from sagent.agent.settings import AgentSettings
        from sagent.providers.scripted import ScriptedModel

        self.tools = {t.name: t for t in served_tools(tools)}
        self.cwd = cwd
        self.budget_usd = budget_usd
        self.permissions = permissions
        self.sandbox = sandbox or DEFAULT_SANDBOX
        settings = AgentSettings(
            tools=tuple(self.tools.values()),
            cwd=cwd,
            label="mcp-serve",
            sandbox=self.sandbox,
            permissions=permissions,
            hooks=self._policy_hooks(),
            approver=None,
        )
        # The tool host: an agent whose tool calls come from the MCP host, never from a model of its own.
        self.host: Agent = Agent(ScriptedModel(name="none", provider="none"), settings, session=SessionLog.ephemeral())
        self.context = self.host.context

    def _policy_hooks(self) -> tuple[Any, ...]:
        if self.permissions is None:
            return ()
        from sagent.permissions.policy import PermissionHook

        return (PermissionHook(),)

    def listing(self) -> list[tuple[str, str, dict[str, Any]]]:
        """(name, description, input schema) of every tool offered, `sagent_task` last."""
        from sagent.tools.base import tool_spec

        specs = [tool_spec(t, self.context) for t in self.tools.values()]
        task = (
            TASK_TOOL,
            "Run a task with sagent, a coding agent with its own tools, on any provider and model, within a "
            f"budget (at most ${self.budget_usd:g}); answers with its final text and what it cost.",
            TASK_SCHEMA,
        )
        return [*((s.name, s.description, s.input_schema) for s in specs), task]

    async def call(self, name: str, arguments: dict[str, Any]) -> tuple[ToolResult, dict[str, Any] | None]:
        """One call: the result (an error result for an unknown tool or bad arguments) and, for
        `sagent_task`, its structured summary."""
        call = ToolCall(f"mcp-{uuid.uuid4().hex[:12]}", name, arguments)
        if name == TASK_TOOL:
            return await self.task(call)
        from sagent.agent.rounds import run_call

        return await run_call(self.host, call), None

    async def task(self, call: ToolCall) -> tuple[ToolResult, dict[str, Any] | None]:
        """Run `sagent_task`: a new agent with sagent's tools, an in-memory session, the budget given."""
        from sagent.agent.agent import Agent
        from sagent.agent.prompt import coding_system_prompt
        from sagent.events import Result
        from sagent.providers.base import ProviderError
        from sagent.providers.registry import build_model, choose
        from sagent.tools import builtin_tools

        args = call.arguments
        prompt = args.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            return ToolResult.of(call, "give the task as `prompt`", is_error=True), None
        budget = args.get("max_budget_usd", self.budget_usd)
        if not isinstance(budget, int | float) or isinstance(budget, bool) or not 0 < budget < float("inf"):
            return ToolResult.of(call, "max_budget_usd must be a positive number", is_error=True), None
        budget = min(budget, self.budget_usd)  # the server's budget is a ceiling: a host may ask for less
        try:
            model = build_model(choose(args.get("provider"), args.get("model")))
            agent = Agent(  # refused here, before any request, when the budget cannot price the model
                model,
                system=coding_system_prompt(self.cwd),
                tools=builtin_tools(fleet=False),
                max_budget_usd=float(budget),
                cwd=self.cwd,
                sandbox=self.sandbox,
                permissions=self.permissions,  # the task's agent is held to the server's policy too
                hooks=self._policy_hooks(),
            )
        except ProviderError as error:
            return ToolResult.of(call, f"cannot use that model: {error}", is_error=True), None
        result: Result | None = None
        try:
            async for event in agent.run(prompt):
                if isinstance(event, Result):
                    result = event
        finally:
            await agent.aclose()
        if result is None:
            return ToolResult.of(call, "the task ended without a result", is_error=True), None
        summary = {
            "answer": result.text,
            "status": result.subtype,
            "cost_usd": round(result.total_cost_usd, 6),
            "provider": model.provider,
            "model": model.name,
            "turns": result.num_turns,
        }
        where = f"{model.provider}/{model.name}"
        text = f"{result.text}\n\n[sagent: {result.subtype}, {where}, ${result.total_cost_usd:.4f}]"
        return ToolResult.of(call, text, is_error=result.is_error), summary


def build(server: SagentServer) -> Any:
    """The SDK's low-level `Server` answering tools/list and tools/call with `server`."""
    from importlib.metadata import version

    from mcp.server.lowlevel import Server
    from mcp.types import CallToolResult, ListToolsResult
    from mcp.types import Tool as McpTool

    async def list_tools(ctx: Any, params: Any) -> ListToolsResult:
        listing = server.listing()
        return ListToolsResult(tools=[McpTool(name=n, description=d, input_schema=s) for n, d, s in listing])

    async def call_tool(ctx: Any, params: Any) -> CallToolResult:
        result, structured = await server.call(params.name, dict(params.arguments or {}))
        return CallToolResult(content=mcp_content(result), structured_content=structured, is_error=result.is_error)

    return Server("sagent", version=version("sagent"), on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio(server: SagentServer) -> None:
    """Serve over standard input and output until the host closes them."""
    from mcp.server.stdio import stdio_server

    lowlevel = build(server)
    async with stdio_server() as (read, write):
        await lowlevel.run(read, write, lowlevel.create_initialization_options())


async def serve_http(
    server: SagentServer, port: int, token: str, host: str = "127.0.0.1", ready: Callable[[], None] | None = None
) -> None:
    """Serve streamable HTTP on `host:port` at `/mcp` until interrupted, to requests that carry `token`
    (`Authorization: Bearer TOKEN`; any other gets 401 and runs nothing); OSError when the port cannot be
    bound (taken, or privileged), before anything is served; `ready` is called once it is bound."""
    import socket

    import uvicorn

    listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listening.bind((host, port))
    except OSError:
        listening.close()
        raise
    if ready is not None:  # bound: say where, and how to get in
        ready()
    from sagent.mcp.auth import requiring_token

    app: App = requiring_token(build(server).streamable_http_app(host=host), token)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning")
    await uvicorn.Server(config).serve(sockets=[listening])
