"""Which MCP tools each request carries, and `McpToolSearch`, which loads the others on demand.

Every tool's schema rides in every request, at the head of the cached prefix. A few MCP tools are offered
as they are; past `DIRECT_TOOLS` tools or `DIRECT_BYTES` of schemas (three servers of twenty tools are far
past it) they are not sent: the model finds the few it needs with `McpToolSearch`, which loads them for
the rest of the session. A tool once offered stays offered, so the tool list only grows, at its end, once
per change (a server connecting, a tool loaded, a server's tools/list_changed): the cached prefix breaks at
most once for each.

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
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from sagent.agent.calls import tool_specs
from sagent.agent.hooks import ALLOW, Hook, ToolDecision
from sagent.events import Event, MessageAdded, SessionStarted
from sagent.mcp.client import McpServers
from sagent.mcp.tools import McpTool, tool_name
from sagent.tools.base import AnyOrder, ToolContext, ToolError, ToolOutput
from sagent.types import ModelRequest, ToolCall

if TYPE_CHECKING:
    from sagent.agent.agent import Agent

DIRECT_TOOLS = 10  # MCP tools offered as they are; more go through McpToolSearch
DIRECT_BYTES = 10_000  # bytes of their schemas offered as they are
SEARCH_WAIT = 10.0  # seconds McpToolSearch waits for servers still starting
SLOW_SERVER = 2.0  # seconds a headless run waits for its servers before it says which it still waits for
MAX_RESULTS = 5


class McpCatalog:
    """The MCP tools of the connected servers, and which of them the model is offered."""

    def __init__(self, servers: McpServers) -> None:
        self.servers = servers
        self.offered_names: set[str] = set()
        """Tools offered once (directly or loaded by a search): they stay for the session."""
        self._built: dict[str, tuple[int, list[McpTool]]] = {}

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

    def deferred(self, tools: list[McpTool]) -> bool:
        """True when `tools` are too many or too large to send with every request."""
        size = sum(len(json.dumps([t.name, t.description, t.input_schema])) for t in tools)
        return len(tools) > DIRECT_TOOLS or size > DIRECT_BYTES

    def offered(self) -> list[McpTool]:
        """The tools the next request carries: all of them when they are few, else those loaded."""
        tools = self.all_tools()
        if not self.deferred(tools):
            self.offered_names.update(t.name for t in tools)
        return [t for t in tools if t.name in self.offered_names]

    def search(self, query: str, limit: int = MAX_RESULTS) -> list[McpTool]:
        """The tools best matching `query` (`select:NAME,NAME` picks by name), now offered."""
        tools = self.all_tools()
        if query.startswith("select:"):
            names = {n.strip() for n in query[len("select:") :].split(",") if n.strip()}
            found = [t for t in tools if t.name in names or t.remote_name in names]
        else:
            terms = [w for w in re.split(r"[^a-z0-9]+", query.lower()) if w]
            scored = [(self._score(t, terms), i, t) for i, t in enumerate(tools)]
            found = [t for score, _, t in sorted(scored, key=lambda x: (-x[0], x[1])) if score > 0][:limit]
        self.offered_names.update(t.name for t in found)
        return found

    @staticmethod
    def _score(tool: McpTool, terms: list[str]) -> int:
        name = tool.name.lower()
        text = f"{tool.description} {' '.join(tool.input_schema.get('properties', {}))}".lower()
        return sum(3 * (term in name) + (term in text) for term in terms)


class McpToolSearch(AnyOrder):
    """Finds MCP tools by keywords and loads them, so their schemas need not ride in every request."""

    name = "McpToolSearch"
    may_background = False

    def __init__(self, catalog: McpCatalog) -> None:
        self.catalog = catalog
        self.name_servers()
        self.input_schema: dict[str, Any] = {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "keywords, or select:NAME,NAME"},
                "max_results": {"type": "integer", "description": f"default {MAX_RESULTS}"},
            },
            "required": ["query"],
        }

    def name_servers(self) -> None:
        """Name the servers in the description (again, after one joined)."""
        servers = ", ".join(self.catalog.servers.connections)
        self.description = (
            f"Find and load tools of the MCP servers ({servers}). Their tools are named mcp__SERVER__TOOL and "
            "are not all listed: search with keywords (or `select:NAME,NAME`); the matching tools can be "
            "called from your next step on."
        )

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        servers = self.catalog.servers
        servers.start()
        await servers.settle(SEARCH_WAIT)
        query = arguments["query"].strip()
        if not query:
            raise ToolError("give keywords to search for, or select:NAME,NAME")
        found = self.catalog.search(query, max(1, int(arguments.get("max_results") or MAX_RESULTS)))
        lines = [f"{t.name}: {t.description.splitlines()[0][:200]}{_arguments(t)}" for t in found]
        problems = [
            f"(server {c.name} is {c.state}{f': {c.error}' if c.error else ''})"
            for c in servers.connections.values()
            if c.state != "connected"
        ]
        if not lines:
            return "\n".join(["no MCP tool matches; try other words", *problems])
        return "\n".join(["loaded, callable from your next step:", *lines, *problems])


def _arguments(tool: McpTool) -> str:
    names = list(tool.input_schema.get("properties", {}))
    return f" (arguments: {', '.join(names)})" if names else ""


class McpHook(Hook):
    """Starts the servers once the first request has gone out (before it, and waits for them, with
    `wait_first`), and gives each request the MCP tools offered now (added at the end of the agent's
    tools; a tool a server dropped is removed)."""

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
        if not isinstance(event, SessionStarted | MessageAdded):
            self.servers.start()

    async def ready(self, agent: Agent) -> None:
        """With `wait_first`, before the agent's first run: start the servers, wait for them (each at most
        its MCP_TIMEOUT, slow ones reported) and give the agent their tools now, so what announces its
        tools as the run starts (stream-json's init record) lists them. Without it, nothing."""
        if not self.wait_first or self._requests:
            return
        self.servers.start()
        await self._wait_for_servers()
        self._offer(agent)

    async def before_request(self, agent: Agent, request: ModelRequest) -> ModelRequest:
        if self._requests or self.wait_first:
            self.servers.start()
        if not self._requests and self.wait_first:
            await self._wait_for_servers()
        self._requests += 1
        if not self._offer(agent):
            return request
        return replace(request, tools=tuple(tool_specs(agent.tools, agent.context)))

    def _offer(self, agent: Agent) -> bool:
        """Give the agent the MCP tools offered now (a tool a server dropped is taken away); True when its
        tools changed."""
        if not any(isinstance(t, McpToolSearch) and t.catalog is self.catalog for t in agent.settings.tools):
            return False  # a sub-agent given a list of tools without the MCP search: only those tools
        wanted = {t.name: t for t in self.catalog.offered()}
        changed = False
        for name in [n for n, t in agent.tools.items() if isinstance(t, McpTool) and n not in wanted]:
            del agent.tools[name]
            changed = True
        for name, tool in wanted.items():
            present = agent.tools.get(name)
            if present is tool or (present is not None and not isinstance(present, McpTool)):
                continue  # already offered, or a tool of the user's own by that name
            if present is None or (present.description, present.input_schema) != (
                tool.description,
                tool.input_schema,
            ):
                changed = True
            agent.tools[name] = tool
        return changed

    async def before_tool(self, agent: Agent, call: ToolCall) -> ToolDecision:
        """A call of an MCP tool the agent does not have yet, while a server is still starting: wait for the
        servers, then give the agent the tool when one of them has it (else the call is an unknown tool)."""
        if call.name in agent.tools or not call.name.startswith("mcp__"):
            return ALLOW
        self.servers.start()
        if any(c.state == "connecting" for c in self.servers.connections.values()):
            await self.servers.settle(self._longest_wait())
        tool = next((t for t in self.catalog.all_tools() if t.name == call.name), None)
        if tool is not None:
            self.catalog.offered_names.add(tool.name)
            agent.tools.setdefault(tool.name, tool)
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
