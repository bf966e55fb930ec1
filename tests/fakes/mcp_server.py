"""Real MCP servers for the tests and benchmarks, written with the official SDK (`MCPServer`).

    python tests/fakes/mcp_server.py KIND [--http PORT | --sse PORT]

KIND is `basic` (tools with text, image, structured and error results, a resource, a prompt, and a tool that
adds a tool and says so with tools/list_changed), `crash` (a tool that kills the server mid-call), `hang`
(never answers the handshake), `slow` (a tool that never returns), `huge` (a 300,000-character result),
`collide` (tools named like sagent's built-ins: Read, Bash, Write) or `many:N` (N tools with fat schemas).
Over stdio by default; `--http PORT` serves streamable HTTP and `--sse PORT` the legacy SSE transport on
127.0.0.1.
"""

from __future__ import annotations

import base64
import os
import sys
import time
from typing import Any

from mcp.server.mcpserver import Context, MCPServer

PIXEL = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c63000100000500010d0a2db40000000049454e44ae426082"
    )
).decode()


def basic(app: MCPServer) -> None:
    @app.tool()
    def add(a: int, b: int) -> int:
        """Add two whole numbers."""
        return a + b

    @app.tool()
    def echo(text: str) -> str:
        """Say the text back."""
        return f"echo: {text}"

    @app.tool()
    def pixel() -> list[object]:
        """A one-pixel PNG image."""
        from mcp.types import ImageContent, TextContent

        return [TextContent(text="a pixel"), ImageContent(data=PIXEL, mime_type="image/png")]

    @app.tool()
    def weather(city: str) -> dict[str, object]:
        """Structured weather for a city."""
        return {"city": city, "celsius": 21}

    @app.tool()
    def fail(reason: str) -> str:
        """Always fails with the reason given."""
        raise ValueError(f"failed on purpose: {reason}")

    @app.tool()
    async def grow(ctx: Context) -> str:
        """Add the tool `double` and tell the client the tool list changed."""
        app.add_tool(double, name="double", description="Double a whole number.")
        await ctx.session.send_tool_list_changed()
        return "grown"

    def double(x: int) -> int:
        return 2 * x

    @app.resource("note://readme", name="readme", description="the project's note")
    def readme() -> str:
        return "resource text: hello from the server"

    @app.prompt()
    def review(topic: str, tone: str = "kind") -> str:
        """Ask for a review."""
        return f"Please review {topic} in a {tone} tone."


def crash(app: MCPServer) -> None:
    @app.tool()
    def boom() -> str:
        """Kills the server mid-call."""
        sys.stderr.write("boom: exiting on purpose\n")
        sys.stderr.flush()
        os._exit(3)

    @app.tool()
    def alive() -> str:
        """Says the server is up, with its process id."""
        return f"alive {os.getpid()}"


def slow(app: MCPServer) -> None:
    @app.tool()
    def wait_forever() -> str:
        """Never returns."""
        time.sleep(3600)
        return "never"


def huge(app: MCPServer) -> None:
    @app.tool()
    def dump() -> str:
        """A very long text."""
        return "".join(f"line {i:06d} " + "x" * 40 + "\n" for i in range(6_000))


def collide(app: MCPServer) -> None:
    def make(name: str) -> Any:
        def fn(path: str) -> str:
            return f"server's own {name} of {path}"

        return fn

    for name in ("Read", "Bash", "Write"):
        app.add_tool(make(name), name=name, description=f"The server's {name}, not sagent's.")


def many(app: MCPServer, count: int) -> None:
    def make(i: int) -> Any:
        def fn(query: str, limit: int = 10, owner: str = "") -> str:
            return f"result of tool {i} for {query}"

        return fn

    for i in range(count):
        description = f"Tool number {i} of this server: searches records of kind {i} by a query, " + "x" * 300
        app.add_tool(make(i), name=f"tool_{i:02d}", description=description)


def main() -> None:
    kind = sys.argv[1]
    if kind == "hang":
        time.sleep(3600)
        return
    app = MCPServer(kind.replace(":", "-"), log_level="WARNING")
    if kind.startswith("many:"):
        many(app, int(kind.split(":")[1]))
    else:
        {"basic": basic, "crash": crash, "slow": slow, "huge": huge, "collide": collide}[kind](app)
    if "--http" in sys.argv:
        app.run("streamable-http", host="127.0.0.1", port=int(sys.argv[sys.argv.index("--http") + 1]))
    elif "--sse" in sys.argv:
        app.run("sse", host="127.0.0.1", port=int(sys.argv[sys.argv.index("--sse") + 1]))
    else:
        app.run("stdio")


if __name__ == "__main__":
    main()
