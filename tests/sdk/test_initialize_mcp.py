"""MCP servers a Claude Agent SDK program sends in its initialize request (`mcpServersDelivery:
"initialize"` in TypeScript) join the run as those of --mcp-config do; a bad entry is refused by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from sagent.agent.agent import Agent
from sagent.cli.control.initialize_mcp import attach_initialize_servers
from sagent.mcp.setup import servers_of
from sagent.providers.scripted import ScriptedModel, text_turn

HELPER = {"type": "stdio", "command": "python", "args": ["server.py"], "env": {"TOKEN": "secret"}}


def agent(tmp_path: Path) -> Agent:
    return Agent(ScriptedModel([text_turn("done")]), tools=[], cwd=tmp_path)


def test_the_servers_become_the_agents_own(tmp_path: Path) -> None:
    a = agent(tmp_path)
    servers = attach_initialize_servers(a, {"helper": HELPER})
    assert servers is not None and servers_of(a) is servers
    config = servers.connections["helper"].config
    assert (config.command, config.args, config.env) == ("python", ("server.py",), {"TOKEN": "secret"})
    assert "ToolSearch" in a.tools  # the MCP tools of a run with servers


def test_servers_join_those_the_agent_has(tmp_path: Path) -> None:
    a = agent(tmp_path)
    first = attach_initialize_servers(a, {"helper": HELPER})
    assert attach_initialize_servers(a, {"other": {**HELPER, "args": ["other.py"]}}) is None
    assert first is not None and set(first.connections) == {"helper", "other"}


def test_in_process_servers_are_left_to_sdk_mcp_servers(tmp_path: Path) -> None:
    a = agent(tmp_path)
    assert attach_initialize_servers(a, {"calc": {"type": "sdk", "name": "calc"}}) is None
    assert servers_of(a) is None


@pytest.mark.parametrize(
    ("servers", "said"),
    [
        (["helper"], '"mcpServers": must be an object'),
        ({"helper": {"type": "ftp"}}, '"mcpServers.helper"'),
        ({"helper": {"command": ""}}, '"mcpServers.helper.command": must not be empty'),
        ({"bad name": HELPER}, '"mcpServers.bad name"'),
    ],
)
def test_a_bad_entry_is_refused_by_name(servers: object, said: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="initialize request") as caught:
        attach_initialize_servers(agent(tmp_path), servers)
    assert said in str(caught.value)
