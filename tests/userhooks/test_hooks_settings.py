"""The `hooks` key of the settings files: checked strictly (a bad entry is one line naming the file and the
key), merged across files (every file's hooks run), and acted on by a real `sagent` run against a fake
provider: a hook blocks a call, a failing hook is reported on stderr and in stream-json."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sagent.userhooks.config import HookConfigError, parse_hooks
from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response
from tests.trusting import trust_in
from tests.userhooks.scripts import entry, script

GOOD = {"PreToolUse": [entry("./check.sh", "Bash|Edit", timeout=5)]}

BAD: list[tuple[Any, str]] = [
    ([], 'key "hooks": must be an object'),
    ({"PreTooluse": []}, 'key "hooks.PreTooluse": unknown event; the events are: PreToolUse, PostToolUse'),
    ({"Stop": {"hooks": []}}, 'key "hooks.Stop": must be a list of {matcher, hooks} objects, not an object'),
    ({"Stop": ["./x.sh"]}, 'key "hooks.Stop[0]": must be an object with a hooks list, not "./x.sh"'),
    ({"PreToolUse": [{"matcher": 3, "hooks": []}]}, 'key "hooks.PreToolUse[0].matcher": must be a string'),
    ({"PreToolUse": [{"matcher": "Bash(", "hooks": []}]}, 'key "hooks.PreToolUse[0].matcher": not a valid regular'),
    ({"Stop": [{"matcher": ""}]}, 'key "hooks.Stop[0].hooks": must be a non-empty list of commands, not null'),
    ({"Stop": [{"hooks": []}]}, 'key "hooks.Stop[0].hooks": must be a non-empty list of commands, not a list'),
    ({"Stop": [{"hooks": ["./x.sh"]}]}, 'key "hooks.Stop[0].hooks[0]": must be an object like'),
    ({"Stop": [{"hooks": [{"type": "prompt"}]}]}, 'key "hooks.Stop[0].hooks[0].type": must be "command"'),
    ({"Stop": [{"hooks": [{"type": "command"}]}]}, 'key "hooks.Stop[0].hooks[0].command": must be a non-empty'),
    ({"Stop": [{"hooks": [{"type": "command", "command": " "}]}]}, '.command": must be a non-empty command line'),
    ({"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": "60"}]}]}, '.timeout": must be a number'),
    ({"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": True}]}]}, '.timeout": must be a number'),
    ({"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": 0}]}]}, '.timeout": must be more than 0'),
    ({"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": float("nan")}]}]}, '.timeout": must be a'),
]


def test_a_good_value_reads_as_a_table() -> None:
    table, warnings = parse_hooks(GOOD)
    [group] = table["PreToolUse"]
    assert group.matcher == "Bash|Edit" and [(c.command, c.timeout) for c in group.commands] == [("./check.sh", 5.0)]
    assert warnings == []
    default = parse_hooks({"Stop": [{"hooks": [{"type": "command", "command": "x"}]}]})[0]["Stop"][0]
    assert default.commands[0].timeout == 60.0 and default.matcher == ""


@pytest.mark.parametrize(("value", "message"), BAD, ids=[m for _, m in BAD])
def test_a_bad_value_is_an_error_naming_the_key(value: Any, message: str) -> None:
    with pytest.raises(HookConfigError) as caught:
        parse_hooks(value, where="/p/settings.json: ")
    assert str(caught.value).startswith("/p/settings.json: ") and message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_claude_codes_other_events_and_members_are_warnings() -> None:
    value = {
        "SessionEnd": [entry("notify-send bye")],
        "Stop": [{"hooks": [{"type": "command", "command": "x", "statusMessage": "checking"}], "note": 1}],
    }
    table, warnings = parse_hooks(value, where="f: ")
    assert list(table) == ["Stop"]
    assert warnings == [
        'f: key "hooks.SessionEnd": sagent does not run SessionEnd hooks; they are ignored',
        'f: key "hooks.Stop[0].note": unknown, ignored',
        'f: key "hooks.Stop[0].hooks[0].statusMessage": unknown, ignored',
    ]


# --------------------------------------------------------------------------- through a real sagent


class Project:
    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path / "project"
        (self.root / ".sagent").mkdir(parents=True)
        self.config_home = tmp_path / "xdg"
        trust_in(self.config_home, tmp_path)  # the user trusts the folder: its hooks apply
        self.data = tmp_path / "data"
        self.scripts = tmp_path / "scripts"
        self.scripts.mkdir()

    def write(self, path: Path, settings: dict[str, Any]) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(settings))
        return path

    def run(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        environ = {**os.environ, "XDG_CONFIG_HOME": str(self.config_home), "XDG_DATA_HOME": str(self.data), **env}
        return subprocess.run(
            [sys.executable, "-m", "sagent.cli.main", *args],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            cwd=self.root,
            env=environ,
            timeout=60,
        )


@pytest.fixture
def p(tmp_path: Path) -> Project:
    return Project(tmp_path)


def test_a_malformed_hooks_entry_stops_sagent_with_one_line(p: Project) -> None:
    path = p.write(p.root / ".sagent" / "settings.json", {"hooks": {"PreToolUse": [{"matcher": "Bash"}]}})
    out = p.run("config")
    assert out.returncode == 2
    assert out.stderr == (
        f'sagent: error: {path}: key "hooks.PreToolUse[0].hooks": must be a non-empty list of commands, not null\n'
    )


def test_the_hooks_of_every_file_add_up(p: Project) -> None:
    p.write(p.config_home / "sagent" / "settings.json", {"hooks": {"Stop": [entry("./user.sh")]}})
    p.write(p.root / ".sagent" / "settings.json", {"hooks": {"Stop": [entry("./project.sh")]}})
    out = p.run("config", "--json")
    assert out.returncode == 0, out.stderr
    stop = json.loads(out.stdout)["settings"]["hooks"]["value"]["Stop"]
    assert [group["hooks"][0]["command"] for group in stop] == ["./user.sh", "./project.sh"]


def test_a_headless_run_blocks_a_call_and_reports_a_failing_hook(p: Project) -> None:
    guard = script(p.scripts, "guard.sh", 'echo "use make clean, not rm" >&2\nexit 2\n')
    broken = script(p.scripts, "broken.sh", 'echo "oops: no jq here" >&2\nexit 1\n')
    steps = [tool_use_response([("Bash", {"command": "rm -rf build"})]), text_response("I used make clean")]
    with FakeAnthropic(steps) as fake:
        key = {"ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests-0017", "ANTHROPIC_BASE_URL": fake.url}
        p.write(p.config_home / "sagent" / "settings.json", {"env": key, "hooks": {"PreToolUse": [entry(broken)]}})
        p.write(p.root / ".sagent" / "settings.json", {"hooks": {"PreToolUse": [entry(guard, "Bash")]}})
        out = p.run("-p", "clean the build", "--model", "claude-haiku-4-5", "--output-format", "stream-json")
        sent = [r["body"] for r in fake.requests]
    assert out.returncode == 0, out.stderr
    assert not (p.root / "build").exists()
    tool_result = sent[1]["messages"][-1]["content"][0]
    assert tool_result["is_error"] and "denied: use make clean, not rm" in json.dumps(tool_result)
    [line] = [line for line in out.stderr.splitlines() if line.startswith("sagent: hook ")]
    assert line.startswith("sagent: hook PreToolUse `") and line.endswith("broken.sh`: exited with 1: oops: no jq here")
    records = [json.loads(line) for line in out.stdout.splitlines()]
    [notice] = [r for r in records if r.get("subtype") == "hook_notice"]
    assert notice["level"] == "error" and notice["message"] == "exited with 1: oops: no jq here"
    assert records[-1]["type"] == "result" and records[-1]["result"] == "I used make clean"
    logs = list(p.data.rglob("*.jsonl"))
    assert len(logs) == 1 and '"hook_notice"' in logs[0].read_text()


def test_claude_codes_newer_events_are_warnings_too() -> None:
    value = {event: [entry("true")] for event in ("PostToolBatch", "StopFailure", "FileChanged", "TaskCompleted")}
    table, warnings = parse_hooks(value, where="f: ")
    assert table == {} and len(warnings) == 4
    assert all("sagent does not run" in w for w in warnings)
