"""`sagent config set|unset` and the REPL's `/config set|unset` are one writer (sagent/cli/config_set.py): the
CLI takes `OBJECT.MEMBER` keys, checks a change against every settings file as a run reads them, keeps a
file's permissions, never prints a secret it keeps in `env`, and writes the user's file by default, as the
REPL does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sagent.cli.config_cmd import config_command
from tests.trusting import trust_in

SECRET = "sk-proj-config-set-secret-0123456789"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The XDG_CONFIG_HOME of these runs, whose trust file trusts `tmp_path`."""
    config = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    trust_in(config, tmp_path)
    return config


@pytest.fixture
def project(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    (root / ".sagent").mkdir(parents=True)
    monkeypatch.chdir(root)
    return root


@pytest.fixture
def user(home: Path) -> Path:
    return home / "sagent" / "settings.json"


def config(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = config_command(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_member_of_a_merged_object_is_set_and_unset(
    project: Path, user: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(json.dumps({"permissions": {"allow": ["Read"]}}))
    assert config(capsys, "set", "permissions.defaultMode", "plan")[0] == 0
    assert config(capsys, "set", "sandbox.network", "true")[0] == 0
    assert config(capsys, "set", "env.LOG_LEVEL", "debug")[0] == 0
    code, out, _ = config(capsys, "set", "permissions.deny", '["Bash(rm:*)"]')
    assert code == 0 and f'permissions.deny = ["Bash(rm:*)"] saved in {user} (user)' in out
    assert json.loads(user.read_text()) == {
        "permissions": {"allow": ["Read"], "defaultMode": "plan", "deny": ["Bash(rm:*)"]},
        "sandbox": {"network": True},
        "env": {"LOG_LEVEL": "debug"},
    }
    code, out, _ = config(capsys, "unset", "permissions.defaultMode")
    assert code == 0 and "permissions.defaultMode removed from" in out
    assert json.loads(user.read_text())["permissions"] == {"allow": ["Read"], "deny": ["Bash(rm:*)"]}
    assert config(capsys, "unset", "env.LOG_LEVEL")[0] == 0
    assert "env" not in json.loads(user.read_text())  # no empty object left behind
    code, out, _ = config(capsys, "unset", "env.LOG_LEVEL")
    assert code == 0 and "nothing changed" in out


def test_an_env_member_is_always_text(project: Path, user: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert config(capsys, "set", "env.RETRIES", "3")[0] == 0
    assert config(capsys, "set", "env.VERBOSE", "true")[0] == 0
    assert json.loads(user.read_text()) == {"env": {"RETRIES": "3", "VERBOSE": "true"}}


def test_a_member_of_the_wrong_shape_is_refused_and_nothing_is_written(
    project: Path, user: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = config(capsys, "set", "permissions.allow", "Bash")
    assert code == 2 and err.startswith("sagent: error: not saved:") and "permissions.allow" in err
    assert not user.exists()


@pytest.mark.parametrize(
    "key, hint",
    [
        ("permisions.defaultMode", 'did you mean "permissions.defaultMode"?'),
        ("modle", 'did you mean "model"?'),
        ("model.name", "OBJECT.MEMBER names a member of one of"),
        ("env.", "after the dot (env.NAME)"),
        ("colour", "docs/settings.md"),
    ],
)
def test_an_unknown_key_or_member_is_an_error_naming_the_nearest(
    key: str, hint: str, project: Path, user: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = config(capsys, "set", key, "x")
    assert code == 2 and err.startswith(f'sagent: error: unknown settings key "{key}"') and hint in err
    assert config(capsys, "unset", key)[0] == 2
    assert not user.exists()


@pytest.mark.parametrize(
    "key, value, problem",
    [
        ("maxTokens", "0", "at least 1"),
        ("tools", "Reed", "unknown tool(s) Reed"),
        ("provider", "no-such-provider", '"provider"'),
        ("permissions.defaultMode", "planning", "is not a permission mode"),
        ("permissions.deny", '["Bash("]', "is not closed"),
        ("permissions.headlessDefault", "ask", 'must be "allow" or "deny"'),
        ("sandbox.mode", "strict", "must be one of"),
        ("sandbox", '{"network": "yes"}', "sandbox.network"),
        ("mcpServers.docs", '{"command": ""}', "must not be empty"),
        ("mcpServers", '{"bad name!": {"command": "x"}}', "a server name is"),
    ],
)
def test_a_value_a_run_refuses_is_not_written(
    key: str, value: str, problem: str, project: Path, user: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text('{\n    "maxDepth": 3\n}\n')
    before = user.read_bytes()
    code, _, err = config(capsys, "set", key, value)
    assert code == 2 and err.startswith("sagent: error: not saved:") and problem in err
    assert str(user) in err and f'key "{key.split(".")[0]}' in err
    assert user.read_bytes() == before  # not rewritten, not reformatted


def test_a_change_is_checked_with_the_other_files(
    project: Path, user: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The settings are checked whole, as a run reads them: a project file a run refuses is named when a
    change is made elsewhere (the change is kept: it does not make things worse)."""
    project_file = project / ".sagent" / "settings.json"
    project_file.write_text(json.dumps({"maxToolRounds": 0}))
    code, out, err = config(capsys, "set", "model", "gpt-5.4")
    assert code == 0 and "saved in" in out
    assert "still refuses the settings:" in err and str(project_file) in err and '"maxToolRounds"' in err
    project_file.write_text(json.dumps({"maxToolRounds": 5}))
    code, _, err = config(capsys, "set", "maxToolRounds", "0", "--scope", "local")
    assert code == 2 and "not saved" in err and "settings.local.json" in err
    assert not (project / ".sagent" / "settings.local.json").exists()


def test_a_variable_not_exported_yet_can_be_named(
    project: Path, user: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SAGENT_TEST_NOT_YET_SET", raising=False)
    assert config(capsys, "set", "apiKeyEnv", "SAGENT_TEST_NOT_YET_SET")[0] == 0
    server = '{"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"X": "${SAGENT_TEST_NOT_YET_SET}"}}'
    assert config(capsys, "set", "mcpServers.docs", server)[0] == 0
    assert json.loads(user.read_text()) == {
        "apiKeyEnv": "SAGENT_TEST_NOT_YET_SET",
        "mcpServers": {"docs": json.loads(server)},
    }


def test_a_file_with_two_bad_values_is_mended_one_at_a_time(
    project: Path, user: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(json.dumps({"maxTokens": "lots", "effort": "ultra"}))
    code, _, err = config(capsys, "set", "maxTokens", "100")
    assert code == 0 and "sagent: warning: saved, but a run still refuses the settings:" in err and "effort" in err
    code, _, err = config(capsys, "set", "effort", "high")
    assert code == 0 and "still refuses" not in err
    assert json.loads(user.read_text()) == {"maxTokens": 100, "effort": "high"}
    code, _, err = config(capsys, "set", "maxTokens", "nope")  # a bad value is still refused
    assert code == 2 and "not saved" in err


def test_a_private_file_stays_private(project: Path, user: Path, capsys: pytest.CaptureFixture[str]) -> None:
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(json.dumps({"env": {"ANTHROPIC_API_KEY": "sk-ant-kept"}}))
    user.chmod(0o600)
    assert config(capsys, "set", "maxTokens", "2000")[0] == 0
    assert json.loads(user.read_text()) == {"env": {"ANTHROPIC_API_KEY": "sk-ant-kept"}, "maxTokens": 2000}
    assert user.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in user.parent.iterdir()) == ["settings.json", "trusted-folders.json"]


def test_a_linked_file_is_written_through_its_link(
    project: Path, user: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    real = tmp_path / "dotfiles" / "sagent.json"
    real.parent.mkdir()
    real.write_text("{}")
    user.parent.mkdir(parents=True, exist_ok=True)
    user.symlink_to(real)
    assert config(capsys, "set", "model", "gpt-5.4")[0] == 0
    assert user.is_symlink() and json.loads(real.read_text()) == {"model": "gpt-5.4"}


def test_a_secret_kept_in_env_is_never_printed(project: Path, user: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = config(capsys, "set", "env.OPENAI_API_KEY", SECRET)
    assert code == 0 and SECRET not in out + err and "hidden" in out
    code, out, err = config(capsys, "set", "env", json.dumps({"MY_TOKEN": SECRET, "MODE": "fast"}))
    assert code == 0 and SECRET not in out + err and '"MODE": "fast"' in out
    assert json.loads(user.read_text()) == {"env": {"MY_TOKEN": SECRET, "MODE": "fast"}}


def test_unset_of_a_key_the_file_lacks_changes_nothing(
    project: Path, user: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = config(capsys, "unset", "model")
    assert code == 0 and f"model is not set in {user} (user); nothing changed" in out
    assert not user.exists()


@pytest.mark.parametrize(
    "key, text, written",
    [
        ("tools", "none", []),
        ("tools", '["Read"]', ["Read"]),
        ("model", '"gpt-5.4"', "gpt-5.4"),
        ("appendSystemPrompt", "42", "42"),
        ("compactAt", "0.6", 0.6),
        pytest.param("appendSystemPrompt", "[" * 5000, "[" * 5000, id="nested-past-json"),
    ],
)
def test_values_are_read_as_the_repl_reads_them(
    key: str, text: str, written: object, project: Path, user: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert config(capsys, "set", key, text)[0] == 0
    assert json.loads(user.read_text()) == {key: written}


def test_the_cli_and_the_repl_share_the_default_scope_and_the_messages() -> None:
    from sagent.cli import config_set
    from sagent.cli.settings_files import SettingsError

    assert config_set.DEFAULT_SCOPE == "user"
    with pytest.raises(SettingsError, match='did you mean "model"'):
        config_set.known_key("modle")


def test_sagent_config_set_from_the_command_line(tmp_path: Path) -> None:
    """The real entry point: a member written to the user's file, a refusal exiting 2."""
    root = tmp_path / "project"
    (root / ".sagent").mkdir(parents=True)
    config_home = tmp_path / "xdg"
    env = {**os.environ, "XDG_CONFIG_HOME": str(config_home), "XDG_DATA_HOME": str(tmp_path / "data")}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "sagent.cli.main", "config", *args]
        return subprocess.run(command, capture_output=True, text=True, cwd=root, env=env, timeout=60, check=False)

    done = run("set", "permissions.defaultMode", "plan")
    assert done.returncode == 0, done.stderr
    written = json.loads((config_home / "sagent" / "settings.json").read_text())
    assert written == {"permissions": {"defaultMode": "plan"}}
    done = run("set", "maxTokens", "0")
    assert done.returncode == 2 and "not saved" in done.stderr and "at least 1" in done.stderr
    assert "permissions.defaultMode" in run("set", "--help").stdout


def test_a_value_nested_past_what_json_parses_is_an_error_not_a_crash(
    project: Path, user: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = config(capsys, "set", "tools", "[" * 5000)
    assert code == 2 and err.startswith("sagent: error: not saved:") and "unknown tool" in err
    assert not user.exists()
