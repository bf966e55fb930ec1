"""The task list over ACP: each change is the session's plan (`sessionUpdate: "plan"`), replaced whole, and
a loaded session ends its replay with the plan it had. Driven by the ACP Python SDK's client side."""

from __future__ import annotations

from pathlib import Path

from tests.acp.acp_client import Editor, anthropic_env, connected, prompt_blocks
from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response

FIRST = [
    {"content": "Read notes.txt", "status": "in_progress", "activeForm": "Reading notes.txt"},
    {"content": "Change old to new", "status": "pending", "activeForm": "Changing old to new", "priority": "high"},
]
SECOND = [{**FIRST[0], "status": "completed"}, {**FIRST[1], "status": "in_progress"}]


async def test_the_list_is_the_plan_and_a_loaded_session_shows_it_again(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    steps = [
        tool_use_response([("TodoWrite", {"todos": FIRST})]),
        tool_use_response([("TodoWrite", {"todos": SECOND})]),
        text_response("halfway"),
    ]
    with FakeAnthropic(steps) as fake:
        env = anthropic_env(fake, tmp_path)
        editor = Editor()
        async with connected(editor, env) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            response = await conn.prompt(session_id=session.session_id, prompt=prompt_blocks("do it"))
        again = Editor()
        async with connected(again, env) as conn:
            await conn.load_session(cwd=str(project), session_id=session.session_id, mcp_servers=[])
    assert response.stop_reason == "end_turn" and editor.questions == []  # it runs unasked in the default mode
    plans = [[(e["content"], e["status"], e["priority"]) for e in u["entries"]] for u in editor.of_kind("plan")]
    assert plans == [
        [("Read notes.txt", "in_progress", "medium"), ("Change old to new", "pending", "high")],
        [("Read notes.txt", "completed", "medium"), ("Change old to new", "in_progress", "high")],
    ]
    calls = editor.of_kind("tool_call")  # (the fake server gives both calls one id: the editor is told once)
    assert {(c["kind"], c["title"]) for c in calls} == {("think", "Update the task list")}
    last = again.updates[-1]
    assert last["sessionUpdate"] == "plan" and [e["status"] for e in last["entries"]] == ["completed", "in_progress"]
