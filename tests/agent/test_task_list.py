"""The task list the model keeps with TodoWrite: checked as the model sends it, the agent's own (one event
per change, a sub-agent's apart), kept in the session log for a resume, and carried through compaction."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sagent import Agent
from sagent.agent.hooks import Hook
from sagent.agent.session import SessionLog
from sagent.events import Event, TaskListChanged, ToolFinished
from sagent.providers.scripted import RoutedModel, ScriptedModel, text_turn, tool_turn
from sagent.tasks import TaskList, TodoItem
from sagent.tools import TodoWrite, builtin_tools, tools_by_name
from sagent.tools.base import ToolContext, ToolError
from sagent.types import ToolResult

STEPS = [
    {"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
    {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
    {"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"},
]


def write(todos: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    return ("TodoWrite", {"todos": todos})


async def test_every_surface_gets_the_tool_and_its_description_is_short() -> None:
    assert "TodoWrite" in [t.name for t in builtin_tools()]
    assert "TodoWrite" in [t.name for t in builtin_tools(fleet=False)]
    assert len(TodoWrite.description) < 400  # every request carries it


@pytest.mark.parametrize(
    ("todos", "said"),
    [
        (
            [{"content": "Fix it", "activeForm": "Fixing it"}],
            "its status is missing; it is one of pending, in_progress",
        ),
        ([{"content": "Fix it", "status": "done", "activeForm": "Fixing it"}], "its status is 'done'"),
        ([{"status": "pending", "activeForm": "Fixing it"}], 'item 1: "content" is missing'),
        ([STEPS[0], {"content": " ", "status": "pending"}], 'item 2: "content" must be a non-empty string'),
        ("Fix it", '"todos" must be a list'),
        (["Fix it"], "item 1 is not an object"),
        ([{**STEPS[0], "priority": "urgent"}], "priority is one of high, medium, low"),
    ],
)
async def test_a_bad_list_is_refused_with_what_to_fix(todos: object, said: str, tmp_path: Path) -> None:
    with pytest.raises(ToolError) as caught:
        await TodoWrite().run({"todos": todos}, ToolContext(cwd=tmp_path))
    assert said in str(caught.value) and "The list is unchanged" in str(caught.value)


def test_the_older_shape_with_id_and_priority_is_taken() -> None:
    tasks = TaskList.parse([{"id": "1", "content": "Fix it", "status": "pending", "priority": "high"}])
    assert tasks.items == (TodoItem("Fix it", "pending", "Fix it", "1", "high"),)
    assert tasks.wire()[0] == {
        "content": "Fix it",
        "status": "pending",
        "activeForm": "Fix it",
        "id": "1",
        "priority": "high",
    }


async def test_each_call_replaces_the_list_and_says_so_in_one_event(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            tool_turn(write(STEPS)),
            tool_turn(write([{**s, "status": "completed"} for s in STEPS])),
            tool_turn(write([{"content": "Fix", "status": "finished"}])),  # refused: the list stays
            text_turn("done"),
        ]
    )
    agent = Agent(model, tools=tools_by_name(["TodoWrite"]), cwd=tmp_path)
    events = [e async for e in agent.run("fix the bug")]
    changes = [e for e in events if isinstance(e, TaskListChanged)]
    assert [c.tasks.line() for c in changes] == ["1 of 3 done, 1 in progress", "3 of 3 done"]
    assert changes[0].agent == "main" and changes[0].tasks.active == TodoItem(
        "Fix the bug", "in_progress", "Fixing the bug"
    )
    # Each change comes before the result of the call that made it.
    first = events.index(changes[0])
    finished = next(e for e in events[first:] if isinstance(e, ToolFinished))
    assert finished.result.text.startswith("The task list is updated: 1 of 3 done")
    refused = [e.result for e in events if isinstance(e, ToolFinished)][2]
    assert refused.is_error and "'finished'" in refused.text
    assert agent.task_list == changes[-1].tasks and agent.task_list.finished
    await agent.aclose()


class Seen(Hook):
    def __init__(self) -> None:
        self.changes: list[TaskListChanged] = []

    def on_event(self, agent: Agent, event: Event) -> None:
        if isinstance(event, TaskListChanged):
            self.changes.append(event)


async def test_a_sub_agent_keeps_its_own_list(tmp_path: Path) -> None:
    model = RoutedModel(
        {
            "main": [
                tool_turn(write(STEPS[:1])),
                tool_turn(("AgentSpawn", {"prompt": "do the part", "label": "helper"})),
                text_turn("all done"),
            ],
            "helper": [tool_turn(write(STEPS[1:])), text_turn("part done")],
        }
    )
    seen = Seen()  # sub-agents run their parent's hooks: it hears every agent's events
    agent = Agent(model, tools=tools_by_name(["TodoWrite", "AgentSpawn"]), cwd=tmp_path, hooks=[seen])
    events = [e async for e in agent.run("go")]
    assert [(e.agent, len(e.tasks)) for e in seen.changes] == [("main", 1), ("helper", 2)]
    assert [len(e.tasks) for e in events if isinstance(e, TaskListChanged)] == [1]  # the main agent's only
    assert agent.task_list.items[0].content == "Read the code" and len(agent.task_list) == 1
    await agent.aclose()


async def test_a_resumed_session_has_its_list_back_and_says_so_first(tmp_path: Path) -> None:
    log = SessionLog.create(tmp_path, {"provider": "scripted", "model": "scripted"})
    agent = Agent(ScriptedModel([tool_turn(write(STEPS)), text_turn("paused")]), tools=[TodoWrite()], session=log)
    await agent.ask("start")
    agent.session.close()
    assert log.path is not None
    resumed = Agent.resume(log.path, ScriptedModel([text_turn("going on")]), tools=[TodoWrite()])
    assert resumed.task_list == agent.task_list and resumed.task_list.active is not None
    events = [e async for e in resumed.run("go on")]
    assert isinstance(events[1], TaskListChanged) and events[1].tasks == agent.task_list  # after the opening
    await resumed.aclose()


async def test_compaction_carries_the_list_into_the_compacted_context(tmp_path: Path) -> None:
    log = SessionLog.create(tmp_path, {"provider": "scripted", "model": "scripted"})
    model = ScriptedModel(
        [
            tool_turn(write(STEPS)),
            text_turn("working"),
            text_turn("## Goal\nFix the bug.\n> fix the bug"),  # the summary, which says nothing of the list
            text_turn("next"),
        ]
    )
    agent = Agent(model, tools=[TodoWrite()], session=log, cwd=tmp_path)
    await agent.ask("fix the bug")
    assert await agent.compact() is not None
    assert not any(isinstance(m, ToolResult) for m in agent.history)  # the TodoWrite call went into the summary
    await agent.ask("go on")
    sent = model.requests[-1].messages[0].text
    assert "[x] Read the code\n[>] Fix the bug\n[ ] Run the tests" in sent
    agent.session.close()
    assert log.path is not None
    resumed = Agent.resume(log.path, ScriptedModel([]), tools=[TodoWrite()])
    assert resumed.task_list == agent.task_list
    assert "[>] Fix the bug" in resumed.history[0].text
    await agent.aclose()


async def test_a_rewind_goes_back_to_the_list_of_that_moment_and_a_resume_agrees(tmp_path: Path) -> None:
    from sagent.agent.rewind import rewind, user_turns

    later = [{**s, "status": "completed"} for s in STEPS]
    model = ScriptedModel([tool_turn(write(STEPS)), text_turn("a"), tool_turn(write(later)), text_turn("b")])
    log = SessionLog.create(tmp_path, {"provider": "scripted", "model": "scripted"})
    agent = Agent(model, tools=[TodoWrite()], session=log, cwd=tmp_path)
    await agent.ask("one")
    first = agent.task_list
    await agent.ask("two")
    assert agent.task_list.finished
    rewind(agent, user_turns(agent)[1])  # before "two": the list "one" left
    assert agent.task_list == first
    agent.session.close()
    assert log.path is not None
    resumed = Agent.resume(log.path, ScriptedModel([]), tools=[TodoWrite()])
    assert resumed.task_list == first
    rewind(resumed, user_turns(resumed)[0])  # before "one": no list yet
    assert not resumed.task_list
    await resumed.aclose()
    await agent.aclose()


@pytest.mark.parametrize("mode", ["default", "plan"])
async def test_it_runs_unasked_in_every_mode_even_where_nobody_could_answer(mode: str, tmp_path: Path) -> None:
    from sagent.permissions.policy import PermissionHook, Permissions

    policy = Permissions.build(mode=mode, headless="deny", cwd=tmp_path)
    model = ScriptedModel([tool_turn(write(STEPS)), text_turn("planned")])
    agent = Agent(model, tools=[TodoWrite()], cwd=tmp_path, permissions=policy, hooks=[PermissionHook()])
    await agent.ask("plan the fix")
    result = next(m for m in agent.history if isinstance(m, ToolResult))
    assert not result.is_error and len(agent.task_list) == 3
    await agent.aclose()
