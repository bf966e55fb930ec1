"""Fixtures the ACP tests share with others: real MCP servers over http and sse (tests/mcp)."""

from tests.mcp.conftest import http_server as http_server
