"""The task list from the command line: `sagent -p` writes a `task_list` record each time the model changes
its list, and `--continue` picks the session up with the list it had (said in a record after `init`)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_fleet_cli import label_of
from tests.cli.test_headless import env_for, records, run_sagent
from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response

STEPS = [
    {"content": "Read calc.py", "status": "completed", "activeForm": "Reading calc.py"},
    {"content": "Fix add()", "status": "in_progress", "activeForm": "Fixing add()"},
    {"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"},
]


def test_the_list_is_a_record_and_a_continued_session_has_it_back(tmp_path: Path) -> None:
    steps = [
        tool_use_response([("TodoWrite", {"todos": STEPS})]),
        text_response("paused after the fix"),
        text_response("going on"),
    ]
    with FakeAnthropic(steps) as fake:
        env = env_for(fake, tmp_path)
        first = run_sagent(["-p", "fix add", "--output-format", "stream-json", "--cwd", str(tmp_path)], env)
        second = run_sagent(
            ["--continue", "-p", "go on", "--output-format", "stream-json", "--cwd", str(tmp_path)], env
        )
        sent = [r["body"] for r in fake.requests]
    assert first.returncode == 0, first.stderr
    recs = records(first.stdout)
    assert "TodoWrite" in recs[0]["tools"]
    kinds = [(r["type"], r.get("subtype")) for r in recs]
    at = kinds.index(("system", "task_list"))
    listed = recs[at]
    assert listed["todos"] == STEPS and listed["agent"] == "main" and listed["session_id"] == recs[0]["session_id"]
    # The call that set it comes before it, its result after it: the model's own record of the list stays.
    assert kinds[at - 1] == ("assistant", None) and kinds[at + 1] == ("user", None)
    call = recs[at - 1]["message"]["content"][0]
    assert call["name"] == "TodoWrite" and call["input"] == {"todos": STEPS}
    assert "1 of 3 done, 1 in progress" in json.dumps(recs[at + 1]["message"]["content"])

    assert second.returncode == 0, second.stderr
    again = records(second.stdout)
    assert again[0]["subtype"] == "init" and again[0]["resumed"] is True
    assert again[1]["type"] == "system" and again[1]["subtype"] == "task_list" and again[1]["todos"] == STEPS
    # The model sees the conversation with its TodoWrite call, as before.
    assert any(b.get("name") == "TodoWrite" for m in sent[-1]["messages"] for b in m["content"] if isinstance(b, dict))


def test_a_bad_list_is_an_error_result_the_model_can_act_on_and_no_record(tmp_path: Path) -> None:
    bad = [{"content": "Fix add()", "status": "doing", "activeForm": "Fixing add()"}]
    steps = [tool_use_response([("TodoWrite", {"todos": bad})]), text_response("ok")]
    with FakeAnthropic(steps) as fake:
        out = run_sagent(
            ["-p", "fix", "--output-format", "stream-json", "--cwd", str(tmp_path)], env_for(fake, tmp_path)
        )
    assert out.returncode == 0, out.stderr
    recs = records(out.stdout)
    assert not [r for r in recs if r.get("subtype") == "task_list"]
    result = next(r for r in recs if r["type"] == "user")["message"]["content"][0]
    assert result["is_error"] is True and "its status is 'doing'" in json.dumps(result["content"])


def test_a_sub_agents_list_comes_under_its_spawn_call(tmp_path: Path) -> None:
    scripts = {
        "main": [
            tool_use_response([("AgentSpawn", {"prompt": "fix add", "label": "fixer"})]),
            text_response("the fixer is done"),
        ],
        "fixer": [tool_use_response([("TodoWrite", {"todos": STEPS[1:]})]), text_response("fixed")],
    }
    with FakeAnthropic(scripts=scripts, route=label_of) as fake:
        out = run_sagent(
            ["-p", "go", "--output-format", "stream-json", "--model", "claude-sonnet-4-6", "--cwd", str(tmp_path)],
            env_for(fake, tmp_path),
        )
    assert out.returncode == 0, out.stderr
    recs = records(out.stdout)
    (listed,) = [r for r in recs if r.get("subtype") == "task_list"]
    spawn = next(r for r in recs if r["type"] == "assistant" and r["parent_tool_use_id"] is None)
    assert listed["parent_tool_use_id"] == spawn["message"]["content"][0]["id"]
    assert listed["agent"] == "fixer" and listed["todos"] == STEPS[1:]
