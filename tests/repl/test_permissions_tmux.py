"""Permissions in the real REPL (tmux) against the fake Anthropic server: the question, its answers, the
reason that reaches the model, "don't ask again", Shift+Tab and plan approval."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response
from tests.repl.test_repl_tmux import env_for
from tests.repl.tmux import HAVE_TMUX, Tmux

pytestmark = pytest.mark.skipif(not HAVE_TMUX, reason="tmux is not installed")


@pytest.fixture
def project(tmp_path: Path, trust_tmp_path: None) -> Path:
    root = tmp_path / "project"
    (root / ".sagent").mkdir(parents=True)
    (root / "notes.txt").write_text("old line\n")
    return root


def tool_results(fake: FakeAnthropic) -> list[dict]:
    """Every tool_result block the REPL sent, in order (the last request holds the whole history)."""
    messages = fake.requests[-1]["body"]["messages"]
    return [
        block
        for message in messages
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def result_text(block: dict) -> str:
    content = block["content"]
    return content if isinstance(content, str) else " ".join(part.get("text", "") for part in content)


def test_default_mode_asks_and_the_answers_reach_the_model(project: Path, tmp_path: Path) -> None:
    steps = [
        tool_use_response([("Bash", {"command": "echo first > made.txt"})], text="Making it."),
        text_response("Made it."),
        tool_use_response([("Edit", {"path": "notes.txt", "old_string": "old line", "new_string": "new line"})]),
        text_response("Not edited then."),
        tool_use_response([("Bash", {"command": "git status --short && echo again"})]),
        text_response("Ran it."),
        tool_use_response([("Bash", {"command": "git status -s; echo twice"})]),
        text_response("Ran it again without asking."),
    ]
    # Without the OS sandbox, where Bash asks in default mode (in it, a command runs unasked).
    outside = ["--sandbox", "danger-full-access"]
    with FakeAnthropic(steps) as fake, Tmux(outside, env_for(fake, tmp_path), project, height=40) as term:
        term.wait_for("default mode")  # the status line shows the mode
        term.type("make a file")
        term.press("Enter")
        term.wait_for("Allow Bash?")
        screen = term.wait_for("$ echo first")
        assert "$ echo first > made.txt" in screen and "default mode asks before running commands" in screen
        assert not (project / "made.txt").exists()  # nothing ran before the answer
        term.press("y")
        term.wait_for("Made it.")
        assert (project / "made.txt").read_text() == "first\n"

        term.type("edit the notes")
        term.press("Enter")
        term.wait_for("Allow Edit?")
        screen = term.wait_for("+new line")  # the diff, before the answer
        assert "-old line" in screen, screen
        term.press("n")
        term.wait_for("why not?")
        term.type("keep the old wording")
        term.press("Enter")
        term.wait_for("Not edited then.")
        assert (project / "notes.txt").read_text() == "old line\n"
        refused = result_text(tool_results(fake)[-1])
        assert "the user said no: keep the old wording" in refused

        term.type("status twice")
        term.press("Enter")
        screen = term.wait_for("Allow Bash?")
        assert "Bash(git status:*), Bash(echo:*)" in screen, screen
        term.press("3")  # don't ask again in this project
        term.wait_for("Ran it.")
        saved = json.loads((project / ".sagent" / "settings.local.json").read_text())
        assert saved["permissions"]["allow"] == ["Bash(git status:*)", "Bash(echo:*)"]
        term.type("and again")
        term.press("Enter")
        screen = term.wait_for("Ran it again without asking.")
        assert screen.count("Bash asks for approval") == 2  # the remembered rules answered the third Bash call

        term.type("/permissions")
        term.press("Enter")
        screen = term.wait_for("(this session)")
        assert "mode: default (from default)" in screen and "allow Bash(git status:*)   (this session)" in screen


def test_shift_tab_cycles_the_modes_and_accept_edits_lets_edits_run(project: Path, tmp_path: Path) -> None:
    steps = [
        tool_use_response([("Read", {"path": "notes.txt"})]),
        tool_use_response([("Edit", {"path": "notes.txt", "old_string": "old line", "new_string": "new line"})]),
        text_response("Edited without asking."),
    ]
    with FakeAnthropic(steps) as fake, Tmux([], env_for(fake, tmp_path), project) as term:
        term.wait_for("default mode (⇧Tab)")
        term.press("BTab")
        term.wait_for("acceptEdits mode (⇧Tab)")
        term.press("BTab")
        term.wait_for("plan mode (⇧Tab)")
        term.press("BTab")
        term.wait_for("default mode (⇧Tab)")
        term.press("BTab")
        term.wait_for("acceptEdits mode (⇧Tab)")
        term.type("edit the notes")
        term.press("Enter")
        screen = term.wait_for("Edited without asking.")
        assert "asks for approval" not in screen
    assert (project / "notes.txt").read_text() == "new line\n"


def test_plan_mode_refuses_changes_until_the_plan_is_approved(project: Path, tmp_path: Path) -> None:
    plan = "1. Change old line to new line in notes.txt\n2. Read it back"
    steps = [
        tool_use_response([("Edit", {"path": "notes.txt", "old_string": "old line", "new_string": "new line"})]),
        tool_use_response([("Read", {"path": "notes.txt"}), ("ExitPlanMode", {"plan": plan})]),
        tool_use_response([("Edit", {"path": "notes.txt", "old_string": "old line", "new_string": "new line"})]),
        text_response("Done as planned."),
    ]
    with FakeAnthropic(steps) as fake, Tmux(["--permission-mode", "plan"], env_for(fake, tmp_path), project) as term:
        term.wait_for("plan mode (⇧Tab)")
        term.type("plan the change")
        term.press("Enter")
        term.wait_for("Approve this plan?")
        screen = term.wait_for("Plan for approval:")  # printed above the question; it may lag a frame
        assert "1. Change old line to new line in notes.txt" in screen
        assert (project / "notes.txt").read_text() == "old line\n"
        term.press("1")  # yes, and accept edits
        term.wait_for("Done as planned.")
        screen = term.wait_for("acceptEdits mode (⇧Tab)")  # the status line is redrawn after the answer
        assert "Edit asks for approval" not in screen
        first = fake.requests[0]["body"]
        later = fake.requests[-1]["body"]
    assert (project / "notes.txt").read_text() == "new line\n"
    assert "You are in plan mode" in json.dumps(first["system"])
    assert "ExitPlanMode" in [t["name"] for t in first["tools"]]
    assert "ExitPlanMode" not in [t["name"] for t in later["tools"]]  # offered only in plan mode
    results = [result_text(b) for b in tool_results(fake)]
    assert results[0].startswith("denied: plan mode: Edit does not run")
    assert "The user approved the plan" in results[2]


def test_bypass_asks_nothing_but_deny_rules_still_refuse(project: Path, tmp_path: Path) -> None:
    steps = [
        tool_use_response([("Bash", {"command": "touch made.txt && rm -f notes.txt"})]),
        tool_use_response([("Bash", {"command": "touch made.txt"})]),
        text_response("Bypassed."),
    ]
    args = ["--permission-mode", "bypassPermissions", "--disallowedTools", "Bash(rm:*)"]
    with FakeAnthropic(steps) as fake, Tmux(args, env_for(fake, tmp_path), project) as term:
        term.wait_for("bypassPermissions mode (⇧Tab)")
        term.type("go")
        term.press("Enter")
        screen = term.wait_for("Bypassed.")
        assert "asks for approval" not in screen
        results = [result_text(b) for b in tool_results(fake)]
        term.press("BTab")  # a session started in bypass keeps it in the cycle
        term.wait_for("default mode (⇧Tab)")
        term.press("BTab", "BTab", "BTab")
        term.wait_for("bypassPermissions mode (⇧Tab)")
    assert results[0].startswith("denied: a deny rule forbids it: Bash(rm:*) (from --disallowedTools)")
    assert (project / "notes.txt").exists() and (project / "made.txt").exists()
