"""In the REPL: /plugins lists the enabled plugins and what each holds, /help lists their commands, and a
plugin's command expands as `/plugin-name:cmd`."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from sagent.agent.agent import Agent
from sagent.providers.scripted import ScriptedModel
from sagent.repl.app import Repl
from sagent.repl.commands import expand_custom, run_command
from sagent.repl.render import Settings
from tests.plugins.helpers import write_plugin


def test_plugins_and_help_list_a_plugin_and_its_command_expands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    write_plugin(tmp_path / "config" / "sagent" / "plugins" / "plug")
    (tmp_path / "config" / "sagent" / "settings.json").write_text('{"enabledPlugins": {"plug": true, "ghost": true}}')
    agent = Agent(ScriptedModel([]), cwd=tmp_path)
    repl = Repl(agent, new_agent=lambda path=None: agent, settings=Settings(width=120, color=False))
    try:
        asyncio.run(run_command(repl, "/plugins"))
        shown = capsys.readouterr().out
        assert "plug 1.2.0  a test plugin" in shown and "1 command file" in shown
        assert "'ghost' is enabled but not installed" in shown
        asyncio.run(run_command(repl, "/help"))
        assert "/plug:hi" in capsys.readouterr().out
        expansion = expand_custom(repl, "/plug:hi Ada")
        assert expansion is not None and expansion.prompt == "Greet Ada from the plugin."
    finally:
        asyncio.run(agent.aclose())
