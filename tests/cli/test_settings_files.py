"""Settings files as a user writes them: real files in temporary folders, read by real `sagent` processes.

Each test has its own XDG_CONFIG_HOME (the user file) and project folder (`.sagent/settings.json` and
`.sagent/settings.local.json`); `sagent config --json` shows what a run would use and where it came from.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response
from tests.trusting import trust_in


class Setup:
    """A user config folder and a project, with helpers to write their settings files and run sagent."""

    def __init__(self, tmp_path: Path) -> None:
        self.config_home = tmp_path / "xdg"
        self.project = tmp_path / "project"
        (self.project / ".sagent").mkdir(parents=True)
        trust_in(self.config_home, tmp_path)  # the user trusts the folder: its project files apply
        self.data = tmp_path / "data"

    @property
    def user_file(self) -> Path:
        return self.config_home / "sagent" / "settings.json"

    @property
    def project_file(self) -> Path:
        return self.project / ".sagent" / "settings.json"

    @property
    def local_file(self) -> Path:
        return self.project / ".sagent" / "settings.local.json"

    def write(self, path: Path, settings: dict[str, Any] | str) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(settings if isinstance(settings, str) else json.dumps(settings, indent=2))
        return path

    def env(self, **extra: str) -> dict[str, str]:
        return {**os.environ, "XDG_CONFIG_HOME": str(self.config_home), "XDG_DATA_HOME": str(self.data), **extra}

    def run(
        self, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "sagent.cli.main", *args],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            cwd=cwd or self.project,
            env=env or self.env(),
            timeout=60,
        )

    def config(self, *flags: str, cwd: Path | None = None) -> dict[str, Any]:
        out = self.run("config", "--json", *flags, cwd=cwd)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)


@pytest.fixture
def s(tmp_path: Path) -> Setup:
    return Setup(tmp_path)


def value_and_origin(report: dict[str, Any], key: str) -> tuple[Any, str]:
    item = report["settings"][key]
    return item["value"], item["from"]


def test_no_settings_files_leaves_every_value_at_its_default(s: Setup) -> None:
    report = s.config()
    assert [f["scope"] for f in report["files"]] == ["user", "project", "local"]
    assert not any(f["exists"] for f in report["files"])
    assert {item["from"] for item in report["settings"].values()} == {"default"}
    assert value_and_origin(report, "maxDepth") == (3, "default")
    assert value_and_origin(report, "maxAgents") == (16, "default")
    assert value_and_origin(report, "model") == (None, "default")
    assert report["env"] == {} and report["warnings"] == []


def test_user_then_project_then_local_then_flags_each_win(s: Setup) -> None:
    user = s.write(
        s.user_file,
        {"model": "claude-opus-4-6", "maxDepth": 5, "effort": "low", "maxTokens": 1000, "maxAgents": 8},
    )
    project = s.write(s.project_file, {"model": "claude-haiku-4-5", "maxDepth": 4, "effort": "medium"})
    local = s.write(s.local_file, {"maxDepth": 2, "tools": ["Read", "Glob"]})

    report = s.config()
    assert value_and_origin(report, "model") == ("claude-haiku-4-5", str(project))
    assert value_and_origin(report, "maxDepth") == (2, str(local))
    assert value_and_origin(report, "effort") == ("medium", str(project))
    assert value_and_origin(report, "maxTokens") == (1000, str(user))
    assert value_and_origin(report, "maxAgents") == (8, str(user))
    assert value_and_origin(report, "tools") == (["Read", "Glob"], str(local))
    assert [f["exists"] for f in report["files"]] == [True, True, True]

    flagged = s.config("--model", "claude-sonnet-4-6", "--max-depth", "1", "--tools", "Bash", "--effort", "high")
    assert value_and_origin(flagged, "model") == ("claude-sonnet-4-6", "flag")
    assert value_and_origin(flagged, "maxDepth") == (1, "flag")
    assert value_and_origin(flagged, "tools") == (["Bash"], "flag")
    assert value_and_origin(flagged, "effort") == ("high", "flag")
    assert value_and_origin(flagged, "maxTokens") == (1000, str(user))  # no flag: the file still counts


def test_a_flag_equal_to_the_default_still_wins_over_a_file(s: Setup) -> None:
    s.write(s.project_file, {"maxDepth": 5})
    assert value_and_origin(s.config("--max-depth", "3"), "maxDepth") == (3, "flag")


def test_the_project_root_is_found_from_a_subfolder_and_with_cwd(s: Setup, tmp_path: Path) -> None:
    (s.project / ".git").mkdir()
    project = s.write(s.project_file, {"model": "claude-haiku-4-5"})
    deep = s.project / "src" / "pkg"
    deep.mkdir(parents=True)
    assert value_and_origin(s.config(cwd=deep), "model") == ("claude-haiku-4-5", str(project))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert value_and_origin(s.config(cwd=elsewhere), "model") == (None, "default")
    assert value_and_origin(s.config("--cwd", str(deep), cwd=elsewhere), "model") == ("claude-haiku-4-5", str(project))


def test_env_objects_merge_variable_by_variable_and_secrets_are_not_shown(s: Setup) -> None:
    user = s.write(s.user_file, {"env": {"SAGENT_T_A": "user-a", "SAGENT_T_B": "user-b"}})
    local = s.write(s.local_file, {"env": {"SAGENT_T_B": "local-b", "SAGENT_T_API_KEY": "sk-settings-secret-123"}})
    report = s.config()
    env = report["env"]
    assert env["SAGENT_T_A"]["value"] == "user-a" and env["SAGENT_T_A"]["from"] == str(user)
    assert env["SAGENT_T_B"]["value"] == "local-b" and env["SAGENT_T_B"]["from"] == str(local)
    assert env["SAGENT_T_API_KEY"]["from"] == str(local)
    out = s.run("config")
    assert "sk-settings-secret-123" not in out.stdout + json.dumps(report)
    assert "env.SAGENT_T_B" in out.stdout and str(local) in out.stdout


def test_the_text_form_names_each_key_its_value_and_its_origin(s: Setup) -> None:
    project = s.write(s.project_file, {"model": "claude-haiku-4-5", "maxBudgetUsd": 2.5})
    out = s.run("config", "--max-agents", "4")
    assert out.returncode == 0, out.stderr
    rows = {line.split()[0]: line.split() for line in out.stdout.splitlines() if line and not line.startswith(" ")}
    assert rows["model"][1:] == ['"claude-haiku-4-5"', str(project)]
    assert rows["maxBudgetUsd"][1:] == ["2.5", str(project)]
    assert rows["maxAgents"][1:] == ["4", "flag"]
    assert rows["maxDepth"][1:] == ["3", "default"]
    assert f"project  {project}" in out.stdout


def test_config_help(s: Setup) -> None:
    out = s.run("config", "--help")
    assert out.returncode == 0 and out.stdout.startswith("usage: sagent config")
    assert "--json" in out.stdout and ".sagent/settings.local.json" in out.stdout


def test_a_run_takes_its_model_and_env_from_the_settings_files(s: Setup) -> None:
    """The project file names the model; the user file's `env` holds the key and the endpoint (nothing in
    the process's environment does), and a variable the Bash tool then sees."""
    steps = [tool_use_response([("Bash", {"command": "echo value=$SAGENT_T_FROM_SETTINGS"})]), text_response("done")]
    with FakeAnthropic(steps) as fake:
        s.write(
            s.user_file,
            {
                "env": {
                    "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests-0002",
                    "ANTHROPIC_BASE_URL": fake.url,
                    "SAGENT_T_FROM_SETTINGS": "it-arrived",
                }
            },
        )
        s.write(s.project_file, {"model": "claude-haiku-4-5", "maxToolRounds": 5})
        out = s.run("-p", "say done", "--output-format", "json")
        sent = [r["body"] for r in fake.requests]
    assert out.returncode == 0, out.stderr
    assert [body["model"] for body in sent] == ["claude-haiku-4-5", "claude-haiku-4-5"]
    tool_result = sent[1]["messages"][-1]["content"][0]
    assert "value=it-arrived" in json.dumps(tool_result)
    assert json.loads(out.stdout)["result"] == "done"


def test_a_flag_wins_over_the_project_files_model_in_a_run(s: Setup) -> None:
    with FakeAnthropic([text_response("ok")]) as fake:
        s.write(s.project_file, {"model": "claude-haiku-4-5"})
        env = s.env(ANTHROPIC_API_KEY="sk-ant-fake-key-for-tests-0003", ANTHROPIC_BASE_URL=fake.url)
        out = s.run("-p", "hi", "--model", "claude-sonnet-4-6", env=env)
        sent = [r["body"] for r in fake.requests]
    assert out.returncode == 0, out.stderr
    assert [body["model"] for body in sent] == ["claude-sonnet-4-6"]


BAD = [
    ('{\n  "model": "claude-haiku-4-5",\n  "maxTokens": \n}\n', "not valid JSON at line 4, column 1"),
    ('{"model": "x" "effort": "low"}', "not valid JSON at line 1, column 15"),
    ("[1, 2]", "must hold a JSON object"),
    ('{"maxTokens": ' + "9" * 5000 + "}", "not valid JSON: a number has more than"),
    ('{"maxTokens": "ten"}', 'key "maxTokens": must be a whole number'),
    ('{"maxTokens": 0}', 'key "maxTokens" must be at least 1'),
    ('{"maxDepth": -1}', 'key "maxDepth" must be 0 or more'),
    ('{"maxBudgetUsd": -5}', "key \"maxBudgetUsd\": '-5' is not a finite number of dollars more than 0"),
    ('{"maxBudgetUsd": NaN}', "key \"maxBudgetUsd\": 'nan' is not a finite number"),
    ('{"backgroundAfter": 1e999}', "key \"backgroundAfter\": 'inf' is not a finite number"),
    ('{"compactAt": 1.5}', 'key "compactAt": 1.5 is not a fraction'),
    ('{"provider": "nope"}', "key \"provider\": unknown provider 'nope'"),
    ('{"effort": "extreme"}', 'key "effort": "extreme" is not one of'),
    ('{"tools": ["Read", "Teleport"]}', 'key "tools": unknown tool(s) Teleport'),
    ('{"tools": "Read"}', 'key "tools": must be a list of names'),
    ('{"allowProviders": ["anthropic", "nope"]}', 'key "allowProviders": unknown provider(s) nope'),
    ('{"noMemory": "yes"}', 'key "noMemory": must be true or false'),
    ('{"env": {"A": 1}}', 'key "env.A": must be a string'),
    ('{"apiKeyEnv": "SAGENT_T_UNSET_VARIABLE"}', 'key "apiKeyEnv" SAGENT_T_UNSET_VARIABLE: that variable is not set'),
    ('{"permissions": {"allow": "Bash"}}', 'key "permissions.allow": must be a list of strings'),
    ('{"hooks": []}', 'key "hooks": must be an object'),
    ('{"mcpServers": "x"}', 'key "mcpServers": must be an object'),
]


@pytest.mark.parametrize(("text", "message"), BAD, ids=[b[1][:40] for b in BAD])
def test_a_bad_file_is_one_line_naming_the_file_and_key_exit_2(s: Setup, text: str, message: str) -> None:
    path = s.write(s.project_file, text)
    for args in (["config"], ["-p", "hi", "--ephemeral"]):
        out = s.run(*args)
        assert out.returncode == 2, (args, out.stderr)
        assert out.stderr == f"sagent: error: {path}: {message}" + out.stderr.split(message, 1)[1]
        assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
        assert out.stdout == ""


def test_a_bad_user_file_is_named_too(s: Setup) -> None:
    path = s.write(s.user_file, '{"maxAgents": 0}')
    out = s.run("config")
    assert out.returncode == 2 and out.stderr == f'sagent: error: {path}: key "maxAgents" must be at least 1\n'


def test_a_bad_flag_is_still_blamed_on_the_flag(s: Setup) -> None:
    s.write(s.project_file, {"maxTokens": 100})
    out = s.run("config", "--max-tokens", "0")
    assert out.returncode == 2 and out.stderr == "sagent: error: --max-tokens must be at least 1\n"


def test_a_flag_overrides_a_bad_value_in_a_file_only_where_the_cli_would(s: Setup) -> None:
    """A file's value of the wrong shape is refused even when a flag would replace it: never ignored."""
    path = s.write(s.project_file, {"maxTokens": "lots"})
    out = s.run("config", "--max-tokens", "5")
    assert out.returncode == 2 and str(path) in out.stderr and '"maxTokens"' in out.stderr


def test_an_unknown_key_is_a_warning_naming_the_file_and_key(s: Setup) -> None:
    path = s.write(s.project_file, {"$schema": "https://example.invalid/s.json", "modle": "x", "maxDepth": 4})
    out = s.run("config", "--json")
    assert out.returncode == 0, out.stderr
    near = '; did you mean "model"?'
    assert out.stderr == f'sagent: warning: {path}: unknown key "modle" is ignored{near} (see docs/settings.md)\n'
    assert value_and_origin(json.loads(out.stdout), "maxDepth") == (4, str(path))


def test_the_keys_for_later_features_are_kept(s: Setup) -> None:
    s.write(s.user_file, {"permissions": {"allow": ["Read"], "defaultMode": "default"}})
    local = s.write(s.local_file, {"permissions": {"deny": ["Bash(rm:*)"]}, "mcpServers": {"x": {"command": "y"}}})
    report = s.config()
    value, origin = value_and_origin(report, "permissions")
    assert value == {"allow": ["Read"], "defaultMode": "default", "deny": ["Bash(rm:*)"]} and origin == str(local)
    assert value_and_origin(report, "mcpServers")[0] == {"x": {"command": "y"}}


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "folder"])
def test_a_settings_path_that_is_not_a_regular_file_is_refused_without_hanging(s: Setup, kind: str) -> None:
    path = s.project_file
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    else:
        path.mkdir()
    out = s.run("config")
    assert out.returncode == 2 and out.stderr == f"sagent: error: {path}: not a regular file\n"


def test_a_huge_or_binary_file_is_refused(s: Setup) -> None:
    path = s.project_file
    path.write_bytes(b'{"model": "' + b"x" * (2 << 20) + b'"}')
    out = s.run("config")
    assert out.returncode == 2 and str(path) in out.stderr and "larger than" in out.stderr
    path.write_bytes(b'{"model": "\xff"}')
    out = s.run("config")
    assert out.returncode == 2 and out.stderr == f"sagent: error: {path}: not UTF-8 text (byte 12)\n"


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_local_file_git_would_commit_is_warned_about(s: Setup) -> None:
    subprocess.run(["git", "init", "-q", str(s.project)], check=True)
    local = s.write(s.local_file, {"maxDepth": 2})
    out = s.run("config")
    assert out.returncode == 0
    assert out.stderr == f"sagent: warning: {local} is not git-ignored: add .sagent/settings.local.json to .gitignore\n"
    (s.project / ".gitignore").write_text(".sagent/settings.local.json\n")
    out = s.run("config")
    assert out.returncode == 0 and out.stderr == ""


DOCS = Path(__file__).resolve().parents[2] / "docs" / "settings.md"


def test_docs_settings_names_every_key_and_its_example_files_are_accepted(s: Setup) -> None:
    from sagent.cli.settings_files import KEYS

    text = DOCS.read_text()
    assert [key for key in KEYS if f"| `{key}` |" not in text] == []
    project, local, *others = re.findall(r"```json\n(.*?)```", text, re.S)
    s.write(s.project_file, project)
    s.write(s.local_file, local)
    out = s.run("config", "--json")
    assert out.returncode == 0 and out.stderr == "", out.stderr
    assert value_and_origin(json.loads(out.stdout), "maxBudgetUsd") == (20, str(s.local_file))
    s.local_file.unlink()
    for example in others:  # the examples of single keys (hooks, ...) are accepted too
        s.write(s.project_file, example)
        out = s.run("config", "--json")
        assert out.returncode == 0 and out.stderr == "", out.stderr


def test_config_into_a_closed_pipe_is_quiet(s: Setup) -> None:
    """`sagent config | head -1`: the reader has gone before sagent writes; no traceback, and the status a
    shell reports for a command SIGPIPE ended (141), as for every subcommand (tests/cli/test_closed_output.py)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        out = subprocess.run(
            [sys.executable, "-m", "sagent.cli.main", "config", "--json"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            cwd=s.project,
            env=s.env(),
            timeout=60,
        )
    finally:
        os.close(write_end)
    assert out.returncode == 141 and out.stderr == ""
