"""MCP (the Model Context Protocol), both ways, on the official `mcp` SDK.

As a client, sagent connects to the servers a project's `.mcp.json` and the settings files name
(`config`), keeps one connection per server in the background (`client`), offers their tools as
`mcp__<server>__<tool>` (`tools`), and loads them on demand when there are many (`search`); `setup` wires
that into a run. As a server, `sagent mcp serve` offers sagent's own tools and an agent tool (`server`).

The SDK is imported only where a server is used, never for a run without MCP servers or `--version`.
"""
