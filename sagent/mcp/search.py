"""Which on-demand tools each request carries, and `ToolSearch`, which loads the others.

Every tool's schema rides in every request, at the head of the cached prefix. So the rarely used built-in
tools (`sagent.tools.ON_DEMAND`, when the CLI runs its default tool set) are not sent: `ToolSearch` names
them in one line of its description and loads them, and a call by name runs one and offers it from then
on. MCP tools are offered as they are while few; past `DIRECT_TOOLS` tools or `DIRECT_BYTES` of schemas
(three servers of twenty tools are far past it) the model finds them the same way. A tool once offered
stays offered, so the tool list only grows, at its end, once per change (a server connecting, a tool
loaded, a server's tools/list_changed): the cached prefix breaks at most once for each. The agent itself
has every built-in tool all along (sub-agents pick from them, permissions and hooks see them).

`McpHook` applies the list to the agent before each request. In the REPL it never waits for a server: a
server still starting adds its tools to a later request, and the first request goes out at once. A headless
run (`wait_first`) starts its servers before its first request and waits for them (each at most its
`MCP_TIMEOUT`), so their tools are in it; a slow one is reported. Either way, a call of a tool whose server
is still starting waits for that server rather than finding an unknown tool.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sagent.agent.calls import tool_specs
from sagent.agent.hooks import ALLOW, Hook, ToolDecision
from sagent.events import Event, MessageAdded, SessionStarted
from sagent.mcp.client import McpServers
from sagent.mcp.tools import McpTool, tool_name
from sagent.tools.base import AnyOrder, Tool, ToolContext, ToolError, ToolOutput
from sagent.types import AssistantMessage, ModelRequest, ToolCall

if TYPE_CHECKING:
    from sagent.agent.agent import Agent

DIRECT_TOOLS = 10  # MCP tools offered as they are; more go through McpToolSearch
DIRECT_BYTES = 10_000  # bytes of their schemas offered as they are
SEARCH_WAIT = 10.0  # seconds McpToolSearch waits for servers still starting
SLOW_SERVER = 2.0  # seconds a headless run waits for its servers before it says which it still waits for
MAX_RESULTS = 5


class McpCatalog:
    """The tools offered on demand: the built-in tools deferred (`defer`) and the MCP tools of the connected
    servers (none without `servers`), and which of the MCP tools the model is offered."""

    def __init__(self, servers: McpServers | None = None, deferred: Sequence[Tool] = ()) -> None:
        self.servers = servers if servers is not None else McpServers([], Path.cwd())
        self.deferred: dict[str, Tool] = {}
        """The built-in tools offered on demand, by name: the agent has them, its requests carry them only
        once loaded (found by ToolSearch, or called by name)."""
        self.defer(deferred)
        self.offered_names: set[str] = set()
        """MCP tools offered once (directly or loaded by a search): they stay for the session."""
        self._built: dict[str, tuple[int, list[McpTool]]] = {}

    def defer(self, tools: Sequence[Tool]) -> None:
        """Offer `tools` (built-in tools of the agent) on demand; a tool of the same name is replaced. An
        AgentSpawn that knows agents defined in files is not deferred: its description is where the model
        learns of them."""
        self.deferred.update((t.name, t) for t in tools if not getattr(t, "agents", None))

    def all_tools(self) -> list[McpTool]:
        """Every tool of the servers, in the configured order of servers, names made unique. A server that
        stopped (it crashed) keeps offering the tools it listed: a call starts it again, or says why it
        cannot, rather than finding an unknown tool."""
        tools: list[McpTool] = []
        taken: set[str] = set()
        for connection in self.servers.connections.values():
            if connection.state != "connected" and not connection.tools:
                continue
            version, built = self._built.get(connection.name, (-1, []))
            if version != connection.version:
                built = [McpTool(connection, t, tool_name(connection.name, t.name)) for t in connection.tools]
                self._built[connection.name] = (connection.version, built)
            for tool in built:
                base, n = tool.name, 2
                while tool.name in taken:  # two tool names that differ only in characters providers refuse
                    tool.name = f"{base[: 64 - len(str(n)) - 1]}_{n}"
                    n += 1
                taken.add(tool.name)
                tools.append(tool)
        return tools

    def too_many(self, tools: list[McpTool]) -> bool:
        """True when `tools` are too many or too large to send with every request."""
        size = sum(len(json.dumps([t.name, t.description, t.input_schema])) for t in tools)
        return len(tools) > DIRECT_TOOLS or size > DIRECT_BYTES

    def offered(self) -> list[McpTool]:
        """The MCP tools the next request carries: all of them when they are few, else those loaded."""
        tools = self.all_tools()
        if not self.too_many(tools):
            self.offered_names.update(t.name for t in tools)
        return [t for t in tools if t.name in self.offered_names]

    def search(self, query: str, limit: int = MAX_RESULTS) -> list[Tool]:
        """The on-demand tools best matching `query` (`select:NAME,NAME` picks by name), built-in ones first
        on a tie; the MCP ones found are now offered (the caller loads the built-in ones for its agent)."""
        tools: list[Tool] = [*self.deferred.values(), *self.all_tools()]
        if query.startswith("select:"):
            names = {n.strip() for n in query[len("select:") :].split(",") if n.strip()}
            found = [t for t in tools if t.name in names or getattr(t, "remote_name", None) in names]
        else:
            terms = [w for w in re.split(r"[^a-z0-9]+", query.lower()) if w]
            scored = [(self._score(t, terms), i, t) for i, t in enumerate(tools)]
            found = [t for score, _, t in sorted(scored, key=lambda x: (-x[0], x[1])) if score > 0][:limit]
        self.offered_names.update(t.name for t in found if isinstance(t, McpTool))
        return found

    @staticmethod
    def _score(tool: Tool, terms: list[str]) -> int:
        name = tool.name.lower()
        text = f"{tool.description} {' '.join(tool.input_schema.get('properties', {}))}".lower()
        return sum(3 * (term in name) + (term in text) for term in terms)


ToolCatalog = McpCatalog
"""The one catalog of on-demand tools, built-in and MCP alike."""


class ToolSearch(AnyOrder):
    """Finds the tools offered on demand (rarely used built-in tools, MCP servers' tools) by keywords and
    loads them, so their schemas need not ride in every request."""

    name = "ToolSearch"
    may_background = False

    def __init__(self, catalog: McpCatalog) -> None:
        self.catalog = catalog
        self.name_servers()
        self.input_schema: dict[str, Any] = {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "keywords, or select:NAME,NAME"},
                "max_results": {"type": "integer", "default": MAX_RESULTS},
            },
            "required": ["query"],
        }

    def name_servers(self) -> None:
        """Name the deferred tools and the servers in the description (again, after a change)."""
        parts = ["Loads tools not listed yet, by keywords or `select:NAME,NAME`, callable from your next step."]
        if self.catalog.deferred:
            parts.append(f"Built-in: {', '.join(self.catalog.deferred)}.")
        servers = ", ".join(self.catalog.servers.connections)
        if servers:
            parts.append(f"MCP servers ({servers}): tools named mcp__SERVER__TOOL.")
        self.description = " ".join(parts)

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        servers = self.catalog.servers
        query = arguments["query"].strip()
        if not query:
            raise ToolError("give keywords to search for, or select:NAME,NAME")
        if servers.connections:
            servers.start()
            await servers.settle(SEARCH_WAIT)
        found = self.catalog.search(query, max(1, int(arguments.get("max_results") or MAX_RESULTS)))
        if ctx.runtime is not None:  # a sub-agent given some tools finds only built-in tools it has
            have = ctx.runtime.tool_names()
            found = [t for t in found if t.name not in self.catalog.deferred or t.name in have]
        ctx.loaded.extend(t.name for t in found if t.name in self.catalog.deferred and t.name not in ctx.loaded)
        lines = [f"{t.name}: {t.description.splitlines()[0][:200]}{_arguments(t)}" for t in found]
        problems = [
            f"(server {c.name} is {c.state}{f': {c.error}' if c.error else ''})"
            for c in servers.connections.values()
            if c.state != "connected"
        ]
        if not lines:
            names = f" (built-in tools on demand: {', '.join(self.catalog.deferred)})" if self.catalog.deferred else ""
            return "\n".join([f"no tool matches; try other words{names}", *problems])
        return "\n".join(["loaded, callable from your next step:", *lines, *problems])


McpToolSearch = ToolSearch


def _arguments(tool: Tool) -> str:
    names = list(tool.input_schema.get("properties", {}))
    return f" (arguments: {', '.join(names)})" if names else ""


def on_demand(tools: Sequence[Tool], names: Iterable[str] | None = None) -> tuple[list[Tool], McpHook]:
    """`tools` with ToolSearch added, and the hook to give the agent with them, so that those of `tools`
    named in `names` (by default the built-in tools of `sagent.tools.ON_DEMAND`) are offered on demand, as
    the CLI offers them: `tools, hook = on_demand(builtin_tools()); Agent(model, tools=tools, hooks=[hook])`.
    """
    from sagent.tools import ON_DEMAND

    wanted = set(names) if names is not None else {cls.name for cls in ON_DEMAND}
    catalog = McpCatalog(deferred=[t for t in tools if t.name in wanted])
    return [*tools, ToolSearch(catalog)], McpHook(catalog)


class McpHook(Hook):
    """Gives each request the tools offered now: the agent's tools less those offered on demand, then the
    on-demand ones this agent has loaded, in the order it loaded them (so the list only grows, at its end).
    MCP servers start once the first request has gone out (before it, and waited for, with `wait_first`);
    their tools join the agent's tools as they are offered (a tool a server dropped is removed). An agent
    without the catalog's ToolSearch (a sub-agent given a list of tools) gets its tools as they are."""

    def __init__(self, catalog: McpCatalog, wait_first: bool = False) -> None:
        """`wait_first`: start the servers before the first request and wait for them (a headless run)."""
        self.catalog = catalog
        self.servers = catalog.servers
        self.wait_first = wait_first
        self._requests = 0

    def on_event(self, agent: Agent, event: Event) -> None:
        # Started once the first request is out (its answer is streaming, or it failed): the servers'
        # subprocesses and the SDK's import then share the CPU with waiting for the model, never with
        # sagent's own start-up.
        if self.servers.connections and not isinstance(event, SessionStarted | MessageAdded):
            self.servers.start()
        if isinstance(event, SessionStarted) and event.resumed and self._searches(agent):
            # A session continued: the on-demand tools its history called are offered again from its first
            # request, as they were when it stopped.
            loaded = agent.context.loaded
            for message in agent.history:
                for call in message.tool_calls if isinstance(message, AssistantMessage) else ():
                    if call.name in self.catalog.deferred and call.name not in loaded:
                        loaded.append(call.name)

    async def ready(self, agent: Agent) -> None:
        """With `wait_first`, before the agent's first run: start the servers, wait for them (each at most
        its MCP_TIMEOUT, slow ones reported) and give the agent their tools now, so what announces its
        tools as the run starts (stream-json's init record) lists them. Without it, nothing."""
        if not self.wait_first or self._requests or not self.servers.connections:
            return
        self.servers.start()
        await self._wait_for_servers()
        self._offer(agent)

    async def before_request(self, agent: Agent, request: ModelRequest) -> ModelRequest:
        if self.servers.connections and (self._requests or self.wait_first):
            self.servers.start()
            if not self._requests and self.wait_first:
                await self._wait_for_servers()
        self._requests += 1
        self._offer(agent)
        return self.shape_request(agent, request)  # unchanged, the request gate sends the last request's objects

    def shape_request(self, agent: Agent, request: ModelRequest) -> ModelRequest:
        if not self._searches(agent):
            return request  # a sub-agent given a list of tools without the search: only those tools
        loaded = agent.context.loaded
        # An AgentSpawn given agents since (a Claude Agent SDK program's) is offered: it lists them.
        deferred = (n for n in self.catalog.deferred if not getattr(agent.tools.get(n), "agents", None))
        on_demand = {*deferred, *(n for n, t in agent.tools.items() if isinstance(t, McpTool))}
        offered = {n: t for n, t in agent.tools.items() if n not in on_demand}
        offered.update((n, agent.tools[n]) for n in loaded if n in agent.tools)
        present = {t.name for t in request.tools}  # a hook before this one may have taken a tool away
        specs = tuple(s for s in tool_specs(offered, agent.context) if s.name in present or s.name in loaded)
        return replace(request, tools=specs)

    def _searches(self, agent: Agent) -> bool:
        return any(isinstance(t, ToolSearch) and t.catalog is self.catalog for t in agent.tools.values())

    def _offer(self, agent: Agent) -> None:
        """Give the agent the MCP tools offered now (a tool a server dropped is taken away)."""
        if not self.servers.connections or not self._searches(agent):
            return
        wanted = {t.name: t for t in self.catalog.offered()}
        for name in [n for n, t in agent.tools.items() if isinstance(t, McpTool) and n not in wanted]:
            del agent.tools[name]
        loaded = agent.context.loaded
        for name, tool in wanted.items():
            present = agent.tools.get(name)
            if present is not None and not isinstance(present, McpTool):
                continue  # a tool of the user's own by that name
            agent.tools[name] = tool
            if name not in loaded:
                loaded.append(name)

    async def before_tool(self, agent: Agent, call: ToolCall) -> ToolDecision:
        """A call of an on-demand tool not loaded yet: a built-in one runs and is offered from the next request
        on; an MCP one the agent does not have yet (its server still starting) waits for the servers, then
        the agent gets it when one of them has it (else the call is an unknown tool)."""
        loaded = agent.context.loaded
        if call.name in self.catalog.deferred:
            if call.name in agent.tools and call.name not in loaded and self._searches(agent):
                loaded.append(call.name)
            return ALLOW
        if call.name in agent.tools or not call.name.startswith("mcp__") or not self.servers.connections:
            return ALLOW
        self.servers.start()
        if any(c.state == "connecting" for c in self.servers.connections.values()):
            await self.servers.settle(self._longest_wait())
        tool = next((t for t in self.catalog.all_tools() if t.name == call.name), None)
        if tool is not None:
            self.catalog.offered_names.add(tool.name)
            agent.tools.setdefault(tool.name, tool)
            if tool.name not in loaded:
                loaded.append(tool.name)
        return ALLOW

    async def _wait_for_servers(self) -> None:
        """Wait until every server is connected or failed (each at most its MCP_TIMEOUT); say which are slow."""
        waiting = [c for c in self.servers.connections.values() if c.state == "connecting"]
        if not waiting:
            return
        await asyncio.gather(*(c.wait(SLOW_SERVER) for c in waiting))
        slow = [c.name for c in waiting if c.state == "connecting"]
        if slow and self.servers.report is not None:
            self.servers.report(f"waiting for MCP server {', '.join(slow)} to start (up to MCP_TIMEOUT)")
        await self.servers.settle(self._longest_wait())

    def _longest_wait(self) -> float:
        return max((c.connect_timeout for c in self.servers.connections.values()), default=0.0)
