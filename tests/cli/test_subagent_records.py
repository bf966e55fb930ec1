"""stream-json carries sub-agents' records: a child's assistant turns and tool results come as records
whose parent_tool_use_id is the id of the AgentSpawn call that started it (the root's have None)."""

from __future__ import annotations

from pathlib import Path

from tests.cli.test_fleet_cli import label_of
from tests.cli.test_headless import env_for, records, run_sagent
from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response


def test_a_childs_progress_is_in_the_stream_under_its_spawn_call(tmp_path: Path) -> None:
    scripts = {
        "main": [
            tool_use_response([("AgentSpawn", {"prompt": "read the notes", "label": "reader"})]),
            text_response("the reader is done"),
        ],
        "reader": [tool_use_response([("Glob", {"pattern": "*.md"})]), text_response("no notes here")],
    }
    with FakeAnthropic(scripts=scripts, route=label_of) as fake:
        result = run_sagent(
            ["-p", "go", "--output-format", "stream-json", "--model", "claude-sonnet-4-6", "--cwd", str(tmp_path)],
            env_for(fake, tmp_path),
        )
    assert result.returncode == 0, result.stderr
    lines = records(result.stdout)
    spawn_ids = [
        block["id"]
        for r in lines
        if r["type"] == "assistant" and r["parent_tool_use_id"] is None
        for block in r["message"]["content"]
        if block["type"] == "tool_use" and block["name"] == "AgentSpawn"
    ]
    assert len(spawn_ids) == 1
    child = [r for r in lines if r.get("parent_tool_use_id") == spawn_ids[0]]
    kinds = [r["type"] for r in child]
    assert kinds == ["assistant", "user", "assistant"]  # the Glob call, its result, the answer
    assert child[-1]["message"]["content"][0]["text"] == "no notes here"
    assert lines[-1]["type"] == "result" and lines[-1]["subtype"] == "success"
