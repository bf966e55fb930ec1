"""What an enabled plugin brings beyond its files: hook commands that fire with `${CLAUDE_PLUGIN_ROOT}` set,
MCP servers that start under `plugin_NAME_SERVER`, and commands from every folder Claude Code users keep
them in; each through a real `sagent` run."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from sagent.custom_commands import load_commands
from sagent.resources.plugins import Plugin, PluginError, read_plugin
from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response
from tests.mcp.conftest import SERVER
from tests.plugins.helpers import sagent, user_env, write_plugin
from tests.trusting import trust_in


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    return root


def install(source: Path, tmp_path: Path, project: Path) -> dict[str, str]:
    env = user_env(tmp_path)
    done = sagent(["plugin", "install", str(source)], env, project)
    assert done.returncode == 0, done.stderr
    return env


def test_a_plugin_hook_fires_with_its_folder_in_claude_plugin_root(project: Path, tmp_path: Path) -> None:
    source = write_plugin(tmp_path / "src")
    marker = tmp_path / "marker"
    (source / "scripts").mkdir()
    (source / "scripts" / "mark.sh").write_text(f'#!/bin/sh\necho "$1 $SAGENT_PLUGIN_ROOT" >> {marker}\n')
    (source / "scripts" / "mark.sh").chmod(0o755)
    command = '"${CLAUDE_PLUGIN_ROOT}/scripts/mark.sh" prompt'
    hooks = {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": command}]}]}
    (source / "hooks").mkdir()
    (source / "hooks" / "hooks.json").write_text(json.dumps({"description": "marks", "hooks": hooks}))
    stop = f'echo "stop $CLAUDE_PLUGIN_ROOT" >> {marker}; test -d "$CLAUDE_PLUGIN_DATA" && echo data >> {marker}'
    inline = {"Stop": [{"hooks": [{"type": "command", "command": stop}]}]}
    manifest = json.loads((source / ".claude-plugin" / "plugin.json").read_text())
    (source / ".claude-plugin" / "plugin.json").write_text(json.dumps({**manifest, "hooks": inline}))
    env = install(source, tmp_path, project)
    root = tmp_path / "config" / "sagent" / "plugins" / "plug"
    with FakeAnthropic([text_response("ok")]) as fake:
        run_env = {**env, "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests-0001", "ANTHROPIC_BASE_URL": fake.url}
        out = sagent(["-p", "hello"], run_env, project)
    assert out.returncode == 0, out.stderr
    assert marker.read_text().splitlines() == [f"prompt {root}", f"stop {root}", "data"]
    assert (tmp_path / "data" / "sagent" / "plugin-data" / "plug").is_dir()


def test_a_plugin_mcp_server_is_listed_and_its_tool_is_called(project: Path, tmp_path: Path) -> None:
    source = write_plugin(tmp_path / "src")
    shutil.copy(SERVER, source / "server.py")
    servers = {"basic": {"command": sys.executable, "args": ["${CLAUDE_PLUGIN_ROOT}/server.py", "basic"]}}
    (source / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    env = {**install(source, tmp_path, project), "MCP_TIMEOUT": "60000"}
    root = tmp_path / "config" / "sagent" / "plugins" / "plug"
    listed = sagent(["mcp", "list"], env, project)
    assert listed.returncode == 0, listed.stderr
    assert f"plugin_plug_basic: {sys.executable} {root}/server.py basic - connected" in listed.stdout
    steps = [tool_use_response([("mcp__plugin_plug_basic__add", {"a": 2, "b": 3})]), text_response("5")]
    with FakeAnthropic(steps) as fake:
        run_env = {**env, "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests-0001", "ANTHROPIC_BASE_URL": fake.url}
        out = sagent(["-p", "add 2 and 3"], run_env, project)
        second = fake.requests[1]["body"]
    assert out.returncode == 0, out.stderr
    results = [b for b in second["messages"][-1]["content"] if b.get("type") == "tool_result"]
    assert results and "5" in json.dumps(results[0]["content"]) and not results[0].get("is_error")


def test_commands_come_from_claude_folders_plugins_and_sagent_names_win(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    trust_in(tmp_path / "config", project)
    home = tmp_path / "home"
    for folder, name, text in [
        (home / ".claude" / "commands", "mine.md", "the user's Claude command"),
        (project / ".claude" / "commands", "deploy.md", "---\nallowed-tools:\n  - Read\n  - Bash(git:*)\n---\nship"),
        (project / ".claude" / "commands", "review.md", "Claude's review"),
        (project / ".sagent" / "commands", "review.md", "sagent's review"),
    ]:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    plugin = write_plugin(tmp_path / "config" / "sagent" / "plugins" / "plug", commands=["./extra/solo.md"])
    (plugin / "extra").mkdir()
    (plugin / "extra" / "solo.md").write_text("one file the manifest names")
    (tmp_path / "config" / "sagent" / "settings.json").write_text('{"enabledPlugins": {"plug@some-market": true}}')
    found, broken = load_commands(project, home=home)
    assert broken == {}
    assert sorted(found) == ["deploy", "mine", "plug:hi", "plug:solo", "review"]
    assert found["review"].body == "sagent's review" and found["mine"].scope == "user"
    assert found["deploy"].allowed_tools == ("Read", "Bash(git:*)")
    assert found["plug:hi"].scope == "plugin"


def test_a_plugin_folder_is_usable_from_the_library(tmp_path: Path) -> None:
    plugin = read_plugin(write_plugin(tmp_path / "lib-plugin", name="lib"))
    assert isinstance(plugin, Plugin) and plugin.name == "lib" and plugin.version == "1.2.0"
    assert plugin.folders("commands") == [plugin.root / "commands"]
    with pytest.raises(PluginError, match=r"no \.claude-plugin/plugin\.json"):
        read_plugin(tmp_path)


async def test_a_claude_agent_sdk_program_s_plugins_option_loads_the_folder(project: Path, tmp_path: Path) -> None:
    """`plugins=[{"type": "local", "path": ...}]` reaches sagent as `--plugin-dir`: the plugin's hook runs
    though nothing was installed; a folder that is not a plugin is refused (exit 2)."""
    from claude_agent_sdk import ClaudeAgentOptions, query

    from tests.sdk.harness import PROVIDERS, cli

    marker = tmp_path / "marker"
    source = write_plugin(tmp_path / "src")
    hook = {"type": "command", "command": f'echo "$CLAUDE_PLUGIN_ROOT" >> {marker}'}
    (source / "hooks").mkdir()
    (source / "hooks" / "hooks.json").write_text(json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [hook]}]}}))
    provider = PROVIDERS[0]
    with provider.fake([provider.text("hi")]) as fake:
        options = ClaudeAgentOptions(
            cli_path=cli(fake, provider, tmp_path), cwd=str(project), plugins=[{"type": "local", "path": str(source)}]
        )
        messages = [m async for m in query(prompt="hello", options=options)]
    assert marker.read_text().strip() == str(source.resolve())
    init = next(m for m in messages if getattr(m, "subtype", None) == "init")
    assert init.data["plugins"] == [{"name": "plug", "path": str(source.resolve())}]
    assert "plug:hi" in init.data["slash_commands"]
    env = {**user_env(tmp_path), "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests-0001"}
    bad = sagent(["-p", "hi", "--plugin-dir", str(tmp_path)], env, project)
    assert bad.returncode == 2 and "--plugin-dir: " in bad.stderr and "plugin.json" in bad.stderr


def test_an_enabled_plugins_folders_reach_every_kind_through_places(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sagent.resources import places

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    plugin = write_plugin(tmp_path / "config" / "sagent" / "plugins" / "plug", agents=["./more/agents"])
    for folder in ("skills/deploy", "agents", "more/agents"):
        (plugin / folder).mkdir(parents=True)
    (tmp_path / "config" / "sagent" / "settings.json").write_text('{"enabledPlugins": ["plug"]}')
    home = tmp_path / "home"
    skills = places("skills", tmp_path, home=home).found
    assert [(p.scope, p.folder, p.namespace) for p in skills] == [("plugin", plugin / "skills", "plug:")]
    agents = [p.folder for p in places("agents", tmp_path, home=home).found]
    assert agents == [plugin / "agents", plugin / "more" / "agents"]
    (tmp_path / "config" / "sagent" / "settings.json").write_text('{"enabledPlugins": {"plug": false}}')
    assert places("skills", tmp_path, home=home).found == ()


def test_a_run_names_a_plugin_enabled_but_not_installed_once(project: Path, tmp_path: Path) -> None:
    env = user_env(tmp_path)
    (tmp_path / "config" / "sagent").mkdir(parents=True)
    (tmp_path / "config" / "sagent" / "settings.json").write_text('{"enabledPlugins": {"ghost@market": true}}')
    with FakeAnthropic([text_response("ok")]) as fake:
        run_env = {**env, "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests-0001", "ANTHROPIC_BASE_URL": fake.url}
        out = sagent(["-p", "hello"], run_env, project)
    assert out.returncode == 0, out.stderr
    assert out.stderr.count("plugin 'ghost' is enabled but not installed") == 1, out.stderr
