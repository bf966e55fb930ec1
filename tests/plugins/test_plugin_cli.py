"""`sagent plugin install|list|remove|enable|disable` run as a user runs them, and a plugin's command used
headless against the fake Anthropic server."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.cli.test_custom_commands_cli import user_texts
from tests.cli.test_headless import records
from tests.fakes.anthropic_server import FakeAnthropic, text_response
from tests.plugins.helpers import installed, sagent, user_env, write_plugin


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    return root


def test_install_from_a_folder_lists_runs_its_command_headless_and_removes(project: Path, tmp_path: Path) -> None:
    source = write_plugin(tmp_path / "src" / "plug")
    env = user_env(tmp_path)
    checked = sagent(["plugin", "validate", str(source)], env, project)
    assert checked.returncode == 0 and "plug 1.2.0: a sound plugin; it holds 1 command file" in checked.stdout
    assert installed(tmp_path) == []
    done = sagent(["plugin", "install", str(source)], env, project)
    assert done.returncode == 0, done.stderr
    assert "installed plugin plug 1.2.0" in done.stdout and "1 command file" in done.stdout
    settings = json.loads((tmp_path / "config" / "sagent" / "settings.json").read_text())
    assert settings["enabledPlugins"] == {"plug": True}
    listed = sagent(["plugin", "list", "--json"], env, project)
    (row,) = json.loads(listed.stdout)["plugins"]
    assert (row["name"], row["version"], row["enabled"]) == ("plug", "1.2.0", True)
    with FakeAnthropic([text_response("Hello, Ada!")]) as fake:
        run_env = {**env, "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests-0001", "ANTHROPIC_BASE_URL": fake.url}
        out = sagent(["-p", "/plug:hi Ada", "--output-format", "stream-json"], run_env, project)
        assert out.returncode == 0, out.stderr
        body = fake.requests[0]["body"]
    assert user_texts(body)[-1] == "Greet Ada from the plugin."
    assert records(out.stdout)[-1]["result"] == "Hello, Ada!"
    removed = sagent(["plugin", "remove", "plug"], env, project)
    assert removed.returncode == 0, removed.stderr
    assert installed(tmp_path) == [] and "plug" not in (tmp_path / "config" / "sagent" / "settings.json").read_text()
    assert sagent(["plugin", "remove", "plug"], env, project).returncode == 1


def test_install_from_a_git_url_clones_it_without_its_history(project: Path, tmp_path: Path) -> None:
    work = write_plugin(tmp_path / "work", name="gitplug")
    git = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t"}
    git["GIT_COMMITTER_EMAIL"] = "t@x"
    for command in (["init", "-q"], ["add", "."], ["commit", "-qm", "plugin"]):
        subprocess.run(["git", *command], cwd=work, check=True, env=git)
    bare = tmp_path / "gitplug.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
    env = user_env(tmp_path)
    done = sagent(["plugin", "install", bare.as_uri()], env, project)
    assert done.returncode == 0, done.stderr
    target = tmp_path / "config" / "sagent" / "plugins" / "gitplug"
    assert (target / "commands" / "hi.md").is_file() and not (target / ".git").exists()
    assert installed(tmp_path) == ["gitplug"]
    missing = sagent(["plugin", "install", (tmp_path / "nothing.git").as_uri()], env, project)
    assert missing.returncode == 2 and "git clone failed" in missing.stderr
    assert installed(tmp_path) == ["gitplug"]


@pytest.mark.parametrize(
    ("manifest", "said"),
    [
        ("{not json", "not valid JSON"),
        ('{"version": "1"}', '"name" must be'),
        ('{"name": "has space"}', '"name" must be'),
        ('{"name": "p", "commands": "../../elsewhere"}', "leads outside the plugin's folder"),
        ('{"name": "p", "agents": "/etc"}', "must be a path relative"),
        ('{"name": "p", "hooks": {"PreToolUse": "nope"}}', "hooks.PreToolUse"),
        ('{"name": "p", "mcpServers": {"s": {"type": "carrier-pigeon"}}}', "mcpServers.s"),
    ],
)
def test_a_bad_plugin_is_refused_with_exit_2_and_nothing_installed(
    manifest: str, said: str, project: Path, tmp_path: Path
) -> None:
    source = write_plugin(tmp_path / "bad")
    (source / ".claude-plugin" / "plugin.json").write_text(manifest)
    done = sagent(["plugin", "install", str(source)], user_env(tmp_path), project)
    assert done.returncode == 2 and said in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and installed(tmp_path) == []
    checked = sagent(["plugin", "validate", str(source)], user_env(tmp_path), project)
    assert checked.returncode == 2 and said in checked.stderr
    assert not (tmp_path / "config" / "sagent" / "settings.json").exists()


def test_not_a_plugin_and_unknown_words_are_usage_errors(project: Path, tmp_path: Path) -> None:
    env = user_env(tmp_path)
    (tmp_path / "empty").mkdir()
    for args, said in [
        (["plugin", "install", str(tmp_path / "empty")], "no .claude-plugin/plugin.json"),
        (["plugin", "install", str(tmp_path / "nowhere")], "not a folder, and not a git URL"),
        (["plugin", "install", "x", "--scope", "galaxy"], "invalid choice"),
        (["plugin", "frobnicate"], "unknown command"),
        (["plugin", "enable", "ghost"], "no plugin named 'ghost'"),
    ]:
        done = sagent(args, env, project)
        assert done.returncode in (1, 2) and said in done.stderr, (args, done.stderr)
    assert installed(tmp_path) == []


def test_project_scope_enables_it_for_that_project_only_and_disable_wins(project: Path, tmp_path: Path) -> None:
    from tests.trusting import trust_in

    trust_in(tmp_path / "config", project)
    env = user_env(tmp_path)
    done = sagent(["plugin", "install", str(write_plugin(tmp_path / "src")), "--scope", "project"], env, project)
    assert done.returncode == 0, done.stderr
    assert json.loads((project / ".sagent" / "settings.json").read_text())["enabledPlugins"] == {"plug": True}
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    assert json.loads(sagent(["plugin", "list", "--json"], env, other).stdout)["plugins"][0]["enabled"] is False
    assert json.loads(sagent(["plugin", "list", "--json"], env, project).stdout)["plugins"][0]["enabled"] is True
    assert sagent(["plugin", "enable", "plug"], env, other).returncode == 0  # the user's: every project
    assert sagent(["plugin", "disable", "plug", "--scope", "local"], env, project).returncode == 0
    assert json.loads(sagent(["plugin", "list", "--json"], env, project).stdout)["plugins"][0]["enabled"] is False
    assert json.loads(sagent(["plugin", "list", "--json"], env, other).stdout)["plugins"][0]["enabled"] is True
    kept = sagent(["plugin", "remove", "plug", "--scope", "project"], env, other)
    assert "still enabled by" in kept.stdout and installed(tmp_path) == ["plug"]


def test_hooks_sagent_does_not_run_are_left_out_with_a_warning_not_a_refusal(project: Path, tmp_path: Path) -> None:
    source = write_plugin(tmp_path / "src")
    hooks = {
        "Stop": [{"hooks": [{"type": "prompt", "prompt": "Is the work done?"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}],
    }
    (source / "hooks").mkdir()
    (source / "hooks" / "hooks.json").write_text(json.dumps({"hooks": hooks}))
    done = sagent(["plugin", "install", str(source)], user_env(tmp_path), project)
    assert done.returncode == 0, done.stderr
    assert 'a "prompt" hook of Stop is not run by sagent' in done.stderr and "hooks" in done.stdout


def test_a_claude_code_marketplace_lists_its_plugins_and_installs_the_one_picked(project: Path, tmp_path: Path) -> None:
    market = tmp_path / "market"
    write_plugin(market / "plugins" / "fmt", name="fmt")
    loose = market / "plugins" / "loose"  # "strict": false: the entry is its manifest
    (loose / "commands").mkdir(parents=True)
    (loose / "commands" / "go.md").write_text("Go.")
    entries = [
        {"name": "fmt", "source": "./plugins/fmt"},
        {"name": "loose", "source": "loose", "description": "no plugin.json", "version": "0.1.0", "strict": False},
        {"name": "far", "source": {"source": "github", "repo": "acme/far"}},
    ]
    (market / ".claude-plugin").mkdir()
    (market / ".claude-plugin" / "marketplace.json").write_text(
        json.dumps({"name": "team", "metadata": {"pluginRoot": "./plugins"}, "plugins": entries})
    )
    env = user_env(tmp_path)
    listed = sagent(["plugin", "install", str(market)], env, project)
    assert (
        listed.returncode == 2 and "marketplace (fmt, loose, far)" in listed.stderr and "--plugin NAME" in listed.stderr
    )
    far = sagent(["plugin", "install", str(market), "--plugin", "far"], env, project)
    assert far.returncode == 2 and "https://github.com/acme/far.git" in far.stderr
    for name in ("fmt", "loose"):
        done = sagent(["plugin", "install", str(market), "--plugin", name], env, project)
        assert done.returncode == 0, done.stderr
    assert installed(tmp_path) == ["fmt", "loose"]
    made = json.loads(
        (tmp_path / "config" / "sagent" / "plugins" / "loose" / ".claude-plugin" / "plugin.json").read_text()
    )
    assert made == {"name": "loose", "version": "0.1.0", "description": "no plugin.json"}


def test_a_settings_file_that_cannot_be_written_leaves_no_copy(project: Path, tmp_path: Path) -> None:
    settings = tmp_path / "config" / "sagent" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text("{broken")
    done = sagent(["plugin", "install", str(write_plugin(tmp_path / "src"))], user_env(tmp_path), project)
    assert done.returncode == 2 and "not valid JSON" in done.stderr, done.stderr
    assert installed(tmp_path) == [] and settings.read_text() == "{broken"
