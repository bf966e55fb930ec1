"""The real REPL in tmux with a project's MCP server: /mcp, a server prompt as a slash command, and the
model calling the server's tool, against the fake Anthropic server."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response
from tests.mcp.conftest import SERVER
from tests.repl.tmux import HAVE_TMUX, Tmux
from tests.trusting import trust_in

pytestmark = pytest.mark.skipif(not HAVE_TMUX, reason="tmux is not installed")


def test_mcp_status_a_prompt_command_and_a_tool_call_in_the_repl(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    servers = {"basic": {"command": sys.executable, "args": [SERVER, "basic"]}}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    steps = [
        tool_use_response([("mcp__basic__echo", {"text": "from the REPL"})]),
        text_response("The server echoed it."),
    ]
    with FakeAnthropic(steps) as fake:
        env = {
            **os.environ,
            "ANTHROPIC_API_KEY": "sk-ant-test",
            "ANTHROPIC_BASE_URL": fake.url,
            "XDG_DATA_HOME": str(tmp_path / "data"),
            "XDG_CONFIG_HOME": str(trust_in(tmp_path / "config", project).parents[1]),
            "TERM": "xterm-256color",
            "MCP_TIMEOUT": "60000",
        }
        with Tmux([], env, project, width=160) as term:
            term.wait_for("Esc interrupts")
            term.type("/mcp")
            term.press("Enter")
            term.wait_for("basic ")
            for _ in range(60):  # /mcp starts the server; ask again until it is up
                if "connected  6 tools, 1 prompt " in term.screen():
                    break
                term.type("/mcp")
                term.press("Enter")
                term.wait_for("tools offered to the model")
                time.sleep(1)
            assert "connected  6 tools, 1 prompt " in term.screen()
            term.type("/mcp__basic__review the-parser tone=terse")
            term.press("Enter")
            # An MCP tool asks first in the REPL's default mode: the user says yes.
            term.wait_for("Allow mcp__basic__echo?", timeout=60)
            term.press("1")
            screen = term.wait_for("The server echoed it.", timeout=60)
            assert "mcp__basic__echo" in screen
    first, second = (r["body"] for r in fake.requests)
    assert first["messages"][0]["content"][0]["text"] == "Please review the-parser in a terse tone."
    assert "mcp__basic__echo" in [t["name"] for t in first["tools"]]
    result = second["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and "echo: from the REPL" in json.dumps(result["content"])
