"""MCP servers' tools and resources as sagent tools.

A server's tool `search` on the server `github` is the tool `mcp__github__search`: the prefix keeps it
apart from the built-in tools (a server may well call its tool `Read`) and lets permission rules name a
whole server (`mcp__github__*`). Its result becomes content the model reads: text, images, the text of an
embedded resource, structured content as JSON when there is no text; `isError` becomes a tool error. The
loop caps a long result as it caps every tool's (the whole of it saved to the session folder).
"""

from __future__ import annotations

import json
import re
from typing import Any

from sagent.mcp.client import McpConnection, McpServers
from sagent.tools.base import AnyOrder, ToolContext, ToolError, ToolOutput, fit_output
from sagent.types import ImagePart, TextPart, UserContent

MAX_NAME = 64  # characters of a tool name every provider accepts (^[A-Za-z0-9_-]{1,64}$)
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def tool_name(server: str, tool: str) -> str:
    """`mcp__<server>__<tool>`, with characters providers refuse replaced by `_`, at most 64 characters."""
    return _UNSAFE.sub("_", f"mcp__{server}__{tool}")[:MAX_NAME]


def _schema(raw: Any) -> dict[str, Any]:
    """The tool's input schema as providers take it: an object at the top, without the `title` noise."""
    schema = dict(raw) if isinstance(raw, dict) else {}
    schema.pop("title", None)
    schema["type"] = "object"
    return schema


class McpTool(AnyOrder):
    """One tool of an MCP server, called through the server's connection."""

    may_background = True

    def __init__(self, connection: McpConnection, tool: Any, name: str) -> None:
        self.connection = connection
        self.remote_name: str = tool.name
        """The tool's own name on its server."""
        self.name = name
        self.description = (tool.description or tool.name).strip()
        self.input_schema = _schema(tool.input_schema)

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        self.connection.use_spill_dir(ctx.spill_dir)
        result = await self.connection.call_tool(self.remote_name, arguments)
        content = result_content(result)
        if result.is_error:
            text = "\n".join(p.text for p in content if isinstance(p, TextPart)) or "the tool reported an error"
            raise ToolError(fit_output(text, ctx, self.name))  # an error result is cut and spilled too
        return content or "(no output)"

    def __repr__(self) -> str:
        return f"<mcp tool {self.name}>"


def result_content(result: Any) -> tuple[UserContent, ...]:
    """A `CallToolResult` (or a prompt's or resource's content blocks) as content parts."""
    parts: list[UserContent] = []
    for block in getattr(result, "content", None) or ():
        parts.extend(block_content(block))
    structured = getattr(result, "structured_content", None)
    if structured is not None and not any(isinstance(p, TextPart) for p in parts):
        parts.append(TextPart(json.dumps(structured, ensure_ascii=False, indent=1)))
    return tuple(parts)


def block_content(block: Any) -> list[UserContent]:
    """One MCP content block (text, image, audio, a resource or a link to one) as content parts."""
    kind = getattr(block, "type", "")
    if kind == "text":
        return [TextPart(block.text)]
    if kind == "image":
        return [ImagePart(block.data, block.mime_type)]
    if kind == "resource":
        return resource_content(block.resource)
    if kind == "resource_link":
        return [TextPart(f"[resource {block.uri}{f': {block.description}' if block.description else ''}]")]
    if kind == "audio":
        return [TextPart(f"[audio, {block.mime_type}, {len(block.data) * 3 // 4:,} bytes: not shown]")]
    return [TextPart(f"[{kind or 'unknown'} content: not shown]")]


def resource_content(contents: Any) -> list[UserContent]:
    """A resource's contents: its text, an image, or a note for other binary data."""
    text = getattr(contents, "text", None)
    if text is not None:
        return [TextPart(text)]
    mime = getattr(contents, "mime_type", None) or "application/octet-stream"
    blob = getattr(contents, "blob", "")
    if mime.startswith("image/"):
        return [ImagePart(blob, mime)]
    return [TextPart(f"[{contents.uri}: {mime}, {len(blob) * 3 // 4:,} bytes of binary data: not shown]")]


class ListMcpResources(AnyOrder):
    """The resources (files, records, documents) the MCP servers offer."""

    name = "ListMcpResources"
    description = "List the resources (documents, files, records) the connected MCP servers offer, by URI."
    input_schema = {
        "type": "object",
        "properties": {"server": {"type": "string", "description": "only this server's resources"}},
    }
    may_background = False
    reproducible = True

    def __init__(self, servers: McpServers) -> None:
        self.servers = servers

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        wanted = arguments.get("server")
        if wanted is not None and wanted not in self.servers.connections:
            raise ToolError(f"no MCP server {wanted!r}; the servers are: {', '.join(self.servers.connections)}")
        self.servers.start()
        lines: list[str] = []
        for connection in self.servers.connections.values():
            if wanted is not None and connection.name != wanted:
                continue
            await connection.wait(connection.connect_timeout)
            if not connection.has_resources:
                continue
            try:
                listing = await connection.request("listing resources", lambda s: s.list_resources())
            except ToolError as error:
                lines.append(f"{connection.name}: {error}")
                continue
            for resource in listing.resources:
                about = f" ({resource.mime_type})" if resource.mime_type else ""
                what = f": {resource.description}" if resource.description else ""
                lines.append(f"{connection.name}  {resource.uri}  {resource.name}{about}{what}")
        return "\n".join(lines) or "no MCP server offers resources"


class ReadMcpResource(AnyOrder):
    """Read one resource of an MCP server."""

    name = "ReadMcpResource"
    description = "Read a resource of an MCP server by its URI (ListMcpResources lists them)."
    input_schema = {
        "type": "object",
        "properties": {"server": {"type": "string"}, "uri": {"type": "string"}},
        "required": ["server", "uri"],
    }
    may_background = False
    reproducible = True

    def __init__(self, servers: McpServers) -> None:
        self.servers = servers

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        connection = self.servers.connections.get(arguments["server"])
        if connection is None:
            raise ToolError(
                f"no MCP server {arguments['server']!r}; the servers are: {', '.join(self.servers.connections)}"
            )
        uri = arguments["uri"]
        result = await connection.request(f"reading {uri}", lambda s: s.read_resource(uri))
        parts: list[UserContent] = []
        for contents in result.contents:
            parts.extend(resource_content(contents))
        return tuple(parts) or "(empty resource)"
