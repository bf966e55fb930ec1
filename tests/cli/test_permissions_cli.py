"""Permissions in headless runs (`sagent -p`, a subprocess against the fake Anthropic server): one scripted
session per mode proving what runs, what would ask (and so follows the headless default) and what is
refused; rules from flags and settings files; bad rules refused at start-up in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_headless import env_for, run_sagent
from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response
from tests.trusting import trust_in

pytestmark = pytest.mark.usefixtures("trust_tmp_path")  # the project files written here apply


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".sagent").mkdir(parents=True)
    (root / "notes.txt").write_text("old line\n")
    (root / "victim.txt").write_text("keep me\n")
    return root


def settings(project: Path, permissions: dict) -> None:
    (project / ".sagent" / "settings.json").write_text(json.dumps({"permissions": permissions}))


def results_of(fake: FakeAnthropic) -> dict[str, str]:
    """Each tool_result the run sent, by the name of the tool it answers."""
    messages = fake.requests[-1]["body"]["messages"]
    names = {
        block["id"]: block["name"]
        for message in messages
        if message["role"] == "assistant"
        for block in message["content"]
        if block.get("type") == "tool_use"
    }
    out = {}
    for message in messages:
        for block in message["content"] if isinstance(message["content"], list) else ():
            if block.get("type") == "tool_result":
                content = block["content"]
                text = content if isinstance(content, str) else " ".join(p.get("text", "") for p in content)
                out[names[block["tool_use_id"]] + ("!" if block.get("is_error") else "")] = text
    return out


def session(calls: list[tuple[str, dict]]) -> list:
    return [tool_use_response(calls), text_response("done")]


EDIT = ("Edit", {"path": "notes.txt", "old_string": "old line", "new_string": "new line"})
READ = ("Read", {"path": "notes.txt"})


def run(project: Path, tmp_path: Path, steps: list, *flags: str) -> tuple[object, dict[str, str], list[dict]]:
    with FakeAnthropic(steps) as fake:
        out = run_sagent(["-p", "go", "--cwd", str(project), *flags], env_for(fake, tmp_path))
        assert out.returncode == 0, out.stderr
        return out, results_of(fake), [r["body"] for r in fake.requests]


def test_default_mode_headless_runs_what_would_ask_but_deny_rules_hold(project: Path, tmp_path: Path) -> None:
    steps = [
        tool_use_response([READ]),
        tool_use_response([EDIT, ("Bash", {"command": "echo ran > ran.txt && rm -f victim.txt"})]),
        text_response("done"),
    ]
    _, results, bodies = run(project, tmp_path, steps, "--disallowedTools", "Bash(rm:*)")
    assert (project / "notes.txt").read_text() == "new line\n"  # nobody to ask: the edit ran, as before
    assert results["Bash!"].startswith("denied: a deny rule forbids it: Bash(rm:*) (from --disallowedTools)")
    assert (project / "victim.txt").exists() and not (project / "ran.txt").exists()  # no part of the line ran
    assert "ExitPlanMode" not in [t["name"] for t in bodies[0]["tools"]]  # offered in plan mode only


def test_headless_default_deny_refuses_what_would_ask(project: Path, tmp_path: Path) -> None:
    settings(project, {"headlessDefault": "deny", "allow": ["Bash(echo:*)"]})
    steps = [
        tool_use_response(
            [
                READ,
                ("Bash", {"command": "echo allowed"}),
                ("Grep", {"pattern": "x", "path": "/etc"}),
            ]
        ),
        tool_use_response([EDIT, ("Bash", {"command": "echo hi && touch chained.txt"})]),
        text_response("done"),
    ]
    # Without the OS sandbox, where a Bash command asks (in it, it runs unasked: tests/security/).
    _, results, _ = run(project, tmp_path, steps, "--sandbox", "danger-full-access")
    assert "old line" in results["Read"] and results["Bash"].strip() == "allowed"
    assert "/etc is outside the project; nobody is here to approve it" in results["Grep!"]
    assert "default mode asks before editing files; nobody is here" in results["Edit!"]
    assert "permissions.headlessDefault is deny" in results["Bash!"]
    assert (project / "notes.txt").read_text() == "old line\n" and not (project / "chained.txt").exists()


def test_accept_edits_lets_edits_inside_the_project_run_and_bash_still_asks(project: Path, tmp_path: Path) -> None:
    settings(project, {"headlessDefault": "deny", "defaultMode": "acceptEdits"})
    outside = tmp_path / "outside.txt"
    outside.write_text("x\n")
    steps = [
        tool_use_response([READ, ("Read", {"path": str(outside)})]),
        tool_use_response([EDIT, ("Bash", {"command": "touch made.txt"})]),
        text_response("done"),
    ]
    _, results, _ = run(project, tmp_path, steps, "--sandbox", "danger-full-access")  # Bash asks outside it
    assert (project / "notes.txt").read_text() == "new line\n" and "Edit" in results
    assert "acceptEdits mode asks before running commands" in results["Bash!"] and not (project / "made.txt").exists()
    assert "is outside the project" in results["Read!"]


def test_plan_mode_reads_refuses_changes_and_cannot_approve_its_own_plan(project: Path, tmp_path: Path) -> None:
    steps = [
        tool_use_response([READ, EDIT, ("Bash", {"command": "touch made.txt"})]),
        tool_use_response([("ExitPlanMode", {"plan": "1. edit notes.txt"})]),
        text_response("The plan: edit notes.txt"),
    ]
    out, results, bodies = run(project, tmp_path, steps, "--permission-mode", "plan", "--output-format", "json")
    assert "old line" in results["Read"]
    assert results["Edit!"].startswith("denied: plan mode: Edit does not run until the user approves a plan")
    assert results["Bash!"].startswith("denied: plan mode: Bash")
    assert "nobody is here to approve a plan" in results["ExitPlanMode!"]
    assert (project / "notes.txt").read_text() == "old line\n" and not (project / "made.txt").exists()
    assert "ExitPlanMode" in [t["name"] for t in bodies[0]["tools"]]
    assert "You are in plan mode" in json.dumps(bodies[0]["system"])
    assert json.loads(out.stdout)["result"] == "The plan: edit notes.txt"  # type: ignore[attr-defined]


def test_bypass_runs_everything_but_deny_rules(project: Path, tmp_path: Path) -> None:
    settings(project, {"headlessDefault": "deny", "deny": ["Read(victim.txt)", "Bash(git push:*)"]})
    steps = [
        tool_use_response([READ]),
        tool_use_response(
            [
                EDIT,
                ("Bash", {"command": "touch made.txt"}),
                ("Read", {"path": "./sub/../victim.txt"}),
            ]
        ),
        tool_use_response([("Bash", {"command": "true; git push origin main"})]),
        text_response("done"),
    ]
    _, results, _ = run(project, tmp_path, steps, "--permission-mode", "bypassPermissions")
    assert (project / "notes.txt").read_text() == "new line\n" and (project / "made.txt").exists()
    assert "a deny rule forbids it: Read(victim.txt)" in results["Read!"]
    assert "a deny rule forbids it: Bash(git push:*)" in results["Bash!"]


@pytest.mark.parametrize(
    ("flags", "permissions", "message"),
    [
        (["--allowedTools", "WebFetch(example.com)"], None, "--allowedTools: 'WebFetch(example.com)': WebFetch rules"),
        (["--disallowed-tools", "Bash(git 'x:*)"], None, '--disallowedTools: "Bash(git \'x:*)"'),
        (["--add-dir", "no/such/folder"], None, "--add-dir: no/such/folder is not a folder"),
        ([], {"defaultMode": "yolo"}, "key \"permissions.defaultMode\": 'yolo' is not a permission mode"),
        ([], {"deny": ["Read("]}, "key \"permissions.deny\": 'Read(': the ( is not closed"),
        ([], {"headlessDefault": "maybe"}, 'key "permissions.headlessDefault": must be "allow" or "deny"'),
    ],
)
def test_a_bad_rule_mode_or_folder_is_one_line_and_exit_2(project, tmp_path, flags, permissions, message) -> None:
    if permissions is not None:
        settings(project, permissions)
    with FakeAnthropic([text_response("never")]) as fake:
        out = run_sagent(["-p", "go", "--cwd", str(project), *flags], env_for(fake, tmp_path))
        assert fake.requests == []
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and message in out.stderr, out.stderr


def test_rules_from_every_settings_file_and_the_flags_add_up(project: Path, tmp_path: Path) -> None:
    user = trust_in(tmp_path / "xdg", tmp_path).parent
    (user / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Bash(echo:*)"]}}))
    settings(project, {"headlessDefault": "deny", "allow": ["Bash(true)"]})
    steps = [tool_use_response([("Bash", {"command": "echo a; true; pwd"})]), text_response("done")]
    with FakeAnthropic(steps) as fake:
        env = {**env_for(fake, tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
        out = run_sagent(["-p", "go", "--cwd", str(project), "--allowed-tools", "Bash(pwd)"], env)
        results = results_of(fake)
    assert out.returncode == 0, out.stderr
    assert results["Bash"].split() == ["a", str(project)]
