"""Plugins against folder trust: a repository cannot turn a plugin on for itself by its settings files
(sagent's or Claude Code's) until the user trusts it, nothing of a plugin runs while it is installed, and a
plugin cannot reach outside its own folder by a `../` path or a symbolic link."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from sagent.resources import places
from sagent.resources.plugins import find_enabled
from tests.fakes.anthropic_server import FakeAnthropic, text_response
from tests.plugins.helpers import installed, sagent, user_env, write_plugin
from tests.trusting import trust_in


def hostile_plugin(folder: Path, marker: Path) -> Path:
    """A plugin whose every part, once running, leaves a line in `marker`: hooks at start and at each
    prompt, and an MCP server that is a shell command."""
    plugin = write_plugin(folder, name="evil")
    hook = [{"hooks": [{"type": "command", "command": f"echo hook >> {marker}"}]}]
    (plugin / "hooks").mkdir()
    hooks = {"SessionStart": hook, "UserPromptSubmit": hook}
    (plugin / "hooks" / "hooks.json").write_text(json.dumps({"hooks": hooks}))
    server = {"command": "/bin/sh", "args": ["-c", f"echo server >> {marker}"]}
    (plugin / ".mcp.json").write_text(json.dumps({"mcpServers": {"s": server}}))
    return plugin


def run(env: dict[str, str], project: Path, prompt: str) -> tuple[str, list[str]]:
    """`sagent -p prompt` in `project`; its stderr and the user texts of its first request."""
    from tests.cli.test_custom_commands_cli import user_texts

    with FakeAnthropic([text_response("ok")]) as fake:
        run_env = {**env, "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests-0001", "ANTHROPIC_BASE_URL": fake.url}
        out = sagent(["-p", prompt], {**run_env, "MCP_TIMEOUT": "20000"}, project)
        assert out.returncode == 0, out.stderr
        return out.stderr, user_texts(fake.requests[0]["body"])


def test_a_repository_enabling_an_installed_plugin_gets_nothing_until_trusted(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    env = user_env(tmp_path)
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".sagent").mkdir()
    (repo / ".sagent" / "settings.json").write_text('{"enabledPlugins": {"evil": true}}')
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text('{"enabledPlugins": {"evil@market": true}}')
    # Installed for another project: on the machine, enabled nowhere the user said.
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    trust_in(tmp_path / "config", other)
    source = hostile_plugin(tmp_path / "src", marker)
    done = sagent(["plugin", "install", str(source), "--scope", "project"], env, other)
    assert done.returncode == 0, done.stderr
    assert not marker.exists()  # installing ran nothing of it

    stderr, texts = run(env, repo, "/evil:hi Ada")
    assert not marker.exists(), marker.read_text()
    assert texts[-1] == "/evil:hi Ada"  # not a command here: sent as written
    assert "not trusted" in stderr
    listed = json.loads(sagent(["plugin", "list", "--json"], env, repo).stdout)
    assert listed["plugins"][0]["enabled"] is False

    trust_in(tmp_path / "config", other, repo)  # the user's word: now the project's settings count
    _, texts = run(env, repo, "/evil:hi Ada")
    assert texts[-1] == "Greet Ada from the plugin."
    assert "hook" in marker.read_text().splitlines()


def test_claude_settings_alone_enable_a_plugin_in_a_trusted_project(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    write_plugin(tmp_path / "config" / "sagent" / "plugins" / "team", name="team")
    repo = tmp_path / "repo"
    (repo / ".claude").mkdir(parents=True)
    (repo / ".claude" / "settings.json").write_text('{"enabledPlugins": {"team@acme": true}}')
    assert find_enabled(repo)[0] == []
    from sagent.cli.settings_files import load

    assert ".claude/settings.json" in (load(repo).skipped_notice() or "")  # said, so the REPL asks
    trust_in(tmp_path / "config", repo)
    assert [p.name for p in find_enabled(repo)[0]] == ["team"]


@pytest.mark.parametrize(
    "plant",
    [
        lambda p, out: os.symlink(out, p / "commands" / "stolen.md"),
        lambda p, out: os.symlink("../../../outside/secret.md", p / "commands" / "rel.md"),
        lambda p, out: (p / "skills").symlink_to(out.parent),
        lambda p, out: os.mkfifo(p / "commands" / "pipe.md"),
    ],
    ids=["absolute-link", "relative-link-out", "folder-link", "fifo"],
)
def test_install_refuses_links_out_of_the_plugin_and_special_files(tmp_path: Path, plant) -> None:
    secret = tmp_path / "outside" / "secret.md"
    secret.parent.mkdir()
    secret.write_text("the user's private notes")
    source = write_plugin(tmp_path / "a" / "b" / "src")
    plant(source, secret)
    done = sagent(["plugin", "install", str(source)], user_env(tmp_path), tmp_path)
    assert done.returncode == 2 and "refused" in done.stderr, done.stderr
    assert installed(tmp_path) == []


def test_a_planted_plugin_reaching_outside_its_folder_is_not_used(tmp_path: Path, monkeypatch) -> None:
    """Put in the plugins folder by hand (not through install): a manifest path with ../ refuses the whole
    plugin; a folder that is a symbolic link out is left out."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    plugins = tmp_path / "config" / "sagent" / "plugins"
    outside = tmp_path / "outside"
    (outside / "agents").mkdir(parents=True)
    escaping = write_plugin(plugins / "escaping", name="escaping", agents="../../../../outside/agents")
    linked = write_plugin(plugins / "linked", name="linked")
    (linked / "agents").symlink_to(outside / "agents")
    (tmp_path / "config" / "sagent" / "settings.json").write_text('{"enabledPlugins": ["escaping", "linked"]}')
    plugins_found, problems = find_enabled(tmp_path)
    assert [p.name for p in plugins_found] == ["linked"]
    assert any("leads outside the plugin's folder" in line for line in problems)
    assert str(escaping) not in str(places("agents", tmp_path, home=tmp_path / "home").found)
    assert places("agents", tmp_path, home=tmp_path / "home").found == ()


def test_a_name_that_is_a_path_removes_nothing_outside_the_plugins_folder(tmp_path: Path) -> None:
    precious = tmp_path / "config" / "precious"
    precious.mkdir(parents=True)
    (tmp_path / "config" / "sagent" / "plugins").mkdir(parents=True)
    env = user_env(tmp_path)
    for verb in ("remove", "enable", "disable"):
        done = sagent(["plugin", verb, "../../precious"], env, tmp_path)
        assert done.returncode == 2 and "is not a plugin name" in done.stderr
    assert precious.is_dir() and not (tmp_path / "config" / "sagent" / "settings.json").exists()
