"""A sagent tool result as MCP content blocks: what `sagent mcp serve` and the bridge that lends sagent's
tools to a model CLI both answer a tools/call with. Imports only sagent's value types (and the SDK's,
lazily), so the provider layer may use it too."""

from __future__ import annotations

from typing import Any

from sagent.types import ImagePart, TextPart, ToolResult


def mcp_content(result: ToolResult) -> list[Any]:
    """`result`'s text and images as MCP `TextContent` / `ImageContent` blocks; one empty text block for a
    result with neither, since a client may expect at least one."""
    from mcp.types import ImageContent, TextContent

    blocks: list[Any] = []
    for part in result.content:
        if isinstance(part, TextPart):
            blocks.append(TextContent(type="text", text=part.text))
        elif isinstance(part, ImagePart):
            blocks.append(ImageContent(type="image", data=part.data, mime_type=part.media_type))
    return blocks or [TextContent(type="text", text="")]
