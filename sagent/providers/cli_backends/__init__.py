"""Models answered by an installed official CLI (Claude Code), on the user's subscription, with sagent's
own tools offered to the CLI over an MCP bridge so sagent's loop still runs every tool."""
