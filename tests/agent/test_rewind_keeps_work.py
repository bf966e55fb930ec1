"""A rewind never loses work: it puts a file back only where the file still holds what sagent last wrote.
A file someone else changed since is listed with its diff and left alone unless the caller names it in
`overwrite`; a file sagent's calls never changed (an Edit that failed) is never touched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sagent.agent.agent import Agent
from sagent.agent.checkpoints import FileCheckpoints
from sagent.agent.rewind import rewind, rewind_change, user_turns
from sagent.agent.session import SessionLog, peek_state
from sagent.providers.scripted import RoutedModel, ScriptedModel, text_turn, tool_turn
from sagent.tools import AgentSpawn, Edit, Read, Write
from sagent.types import ToolCall


@pytest.fixture(autouse=True)
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return tmp_path / "data"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "app.py").write_text("print('v1')\n")
    return root


async def run(agent: Agent, prompt: str) -> None:
    async for _ in agent.run(prompt):
        pass


async def agent_after(project: Path, steps: list, prompts: list[str], ephemeral: bool = False) -> Agent:
    log = None if ephemeral else SessionLog.create(project, {"provider": "scripted", "model": "scripted"})
    tools = [Read(), Write(), Edit()]
    agent = Agent(ScriptedModel(steps), tools=tools, session=log, cwd=project, hooks=[FileCheckpoints()])
    for prompt in prompts:
        await run(agent, prompt)
    return agent


EDIT_V2 = [
    tool_turn(("Read", {"path": "app.py"})),
    tool_turn(("Edit", {"path": "app.py", "old_string": "v1", "new_string": "v2"})),
    text_turn("it prints v2"),
]


@pytest.mark.parametrize("ephemeral", [False, True])
async def test_a_file_an_edit_failed_on_is_never_touched(project: Path, ephemeral: bool) -> None:
    steps = [
        tool_turn(("Read", {"path": "app.py"})),
        tool_turn(("Edit", {"path": "app.py", "old_string": "not there", "new_string": "x"})),
        text_turn("that edit failed"),
    ]
    agent = await agent_after(project, steps, ["change app.py"], ephemeral)
    assert (project / "app.py").read_text() == "print('v1')\n"  # the Edit failed: sagent changed nothing
    with (project / "app.py").open("a") as f:
        f.write("print('mine')\n")  # the user's own line, by hand

    (turn,) = user_turns(agent)
    assert turn.files == () and turn.changed == ()  # nothing to put back: "0 files changed since"
    event = rewind(agent, turn)

    assert (project / "app.py").read_text() == "print('v1')\nprint('mine')\n"
    assert event.restored == () and event.deleted == () and event.left == ()


async def test_a_file_changed_by_hand_after_sagents_edit_is_left_alone_and_listed(project: Path) -> None:
    agent = await agent_after(project, EDIT_V2, ["print v2"])
    app = project / "app.py"
    assert app.read_text() == "print('v2')\n"
    with app.open("a") as f:
        f.write("print('mine')\n")

    (turn,) = user_turns(agent)
    assert turn.files == (app,) and turn.changed == (app,)
    change = rewind_change(agent, turn, app)
    assert change is not None and change.state == "changed"
    assert change.current == b"print('v2')\nprint('mine')\n" and change.put_back == b"print('v1')\n"
    diff = change.diff()
    assert "-print('mine')" in diff and "-print('v2')" in diff and "+print('v1')" in diff

    event = rewind(agent, turn)  # no overwrite: the user's line stays, and the event says so

    assert app.read_text() == "print('v2')\nprint('mine')\n"
    assert event.restored == () and event.left == (str(app),)
    assert "left as it is" in event.line()
    assert agent.session.path is not None
    logged = [json.loads(line) for line in agent.session.path.read_text().splitlines()]
    assert any(r.get("event", {}).get("left") == [str(app)] for r in logged)  # the log records it too


async def test_overwrite_puts_back_a_file_changed_since_when_the_caller_says_so(project: Path) -> None:
    agent = await agent_after(project, EDIT_V2, ["print v2"])
    app = project / "app.py"
    app.write_text("print('v2')\nprint('mine')\n")
    (turn,) = user_turns(agent)
    event = rewind(agent, turn, overwrite=[app])
    assert app.read_text() == "print('v1')\n" and event.restored == (str(app),) and event.left == ()


async def test_files_still_as_sagent_wrote_them_are_put_back_beside_one_left_alone(project: Path) -> None:
    steps = [
        tool_turn(("Write", {"path": "notes.md", "content": "# notes\n"})),
        tool_turn(("Write", {"path": "todo.md", "content": "- one\n"})),
        *EDIT_V2,
    ]
    agent = await agent_after(project, steps, ["notes, todo and v2"])
    (project / "todo.md").write_text("- one\n- two, by hand\n")
    (turn,) = user_turns(agent)
    assert set(turn.files) == {project / "notes.md", project / "todo.md", project / "app.py"}
    assert turn.changed == (project / "todo.md",)

    event = rewind(agent, turn)

    assert not (project / "notes.md").exists()  # created by sagent and untouched since: deleted
    assert (project / "app.py").read_text() == "print('v1')\n"
    assert (project / "todo.md").read_text() == "- one\n- two, by hand\n"  # created by sagent, then edited
    assert event.left == (str(project / "todo.md"),)
    change = rewind_change(agent, user_turns(agent)[0], project / "todo.md") if user_turns(agent) else None
    assert change is None  # the conversation went: that message is no longer there to go back to


async def test_a_file_deleted_by_hand_since_is_not_brought_back_unasked(project: Path) -> None:
    agent = await agent_after(project, EDIT_V2, ["print v2"])
    app = project / "app.py"
    app.unlink()
    (turn,) = user_turns(agent)
    assert turn.changed == (app,)
    change = rewind_change(agent, turn, app)
    assert change is not None and change.current is None and "(no file now)" in change.diff()
    rewind(agent, turn, conversation=False)
    assert not app.exists()
    rewind(agent, user_turns(agent)[0], overwrite=[app])
    assert app.read_text() == "print('v1')\n"


async def test_a_file_already_as_it_was_is_neither_listed_nor_written(project: Path) -> None:
    agent = await agent_after(project, EDIT_V2, ["print v2"])
    (project / "app.py").write_text("print('v1')\n")  # the user undid it by hand
    (turn,) = user_turns(agent)
    assert turn.files == ()
    event = rewind(agent, turn)
    assert event.restored == () and event.left == ()


async def test_a_rewind_after_a_rewind_knows_what_the_first_one_put_back(project: Path) -> None:
    steps = [
        *EDIT_V2,
        tool_turn(("Read", {"path": "app.py"})),
        tool_turn(("Edit", {"path": "app.py", "old_string": "v2", "new_string": "v3"})),
        text_turn("v3"),
    ]
    agent = await agent_after(project, steps, ["to v2", "to v3"])
    rewind(agent, user_turns(agent)[1], conversation=False)  # files only: app.py holds v2 again
    assert (project / "app.py").read_text() == "print('v2')\n"
    turn = user_turns(agent)[0]
    assert turn.changed == ()  # v2 is what sagent last wrote there (the rewind did): no question
    rewind(agent, turn)
    assert (project / "app.py").read_text() == "print('v1')\n"


async def test_an_index_from_before_the_after_lines_asks_rather_than_guesses(project: Path) -> None:
    agent = await agent_after(project, EDIT_V2, ["print v2"])
    folder = agent.session.session_dir
    assert folder is not None
    index = folder / "checkpoints" / "index.jsonl"
    lines = [line for line in index.read_text().splitlines() if '"after"' not in line]
    index.write_text("\n".join(lines) + "\n")  # as an older sagent wrote it
    await agent.aclose()
    assert agent.session.path is not None
    resumed = Agent.resume(agent.session.path, ScriptedModel([]), tools=[Edit()], hooks=[FileCheckpoints()])
    (turn,) = user_turns(resumed)
    assert turn.changed == (project / "app.py",)  # sagent cannot tell its v2 from the user's
    event = rewind(resumed, turn)
    assert event.left == (str(project / "app.py"),) and (project / "app.py").read_text() == "print('v2')\n"
    assert peek_state(resumed.session.path).history == []  # the conversation went back all the same
    await resumed.aclose()


async def test_a_write_the_user_refused_is_no_change_to_put_back(project: Path) -> None:
    from sagent.agent.hooks import Ask, Deny, Hook, ToolDecision

    class AskEdits(Hook):
        async def before_tool(self, agent: Agent, call: ToolCall) -> ToolDecision:
            return Ask("edits are asked about")

    async def refuse(agent: Agent, call: ToolCall, reason: str) -> Deny:
        return Deny("no")

    steps = [
        tool_turn(("Write", {"path": "app.py", "content": "print('overwritten')\n"})),
        text_turn("it was refused"),
    ]
    log = SessionLog.create(project, {"provider": "scripted", "model": "scripted"})
    hooks = [AskEdits(), FileCheckpoints()]
    agent = Agent(ScriptedModel(steps), tools=[Write()], session=log, cwd=project, hooks=hooks, approver=refuse)
    await run(agent, "overwrite app.py")
    (project / "app.py").write_text("print('v1')\nprint('mine')\n")
    (turn,) = user_turns(agent)
    assert turn.files == ()
    rewind(agent, turn)
    assert (project / "app.py").read_text() == "print('v1')\nprint('mine')\n"


async def test_overwrite_takes_paths_relative_to_the_project(project: Path) -> None:
    agent = await agent_after(project, EDIT_V2, ["print v2"])
    (project / "app.py").write_text("print('v2') # and mine\n")
    (turn,) = user_turns(agent)
    change = rewind_change(agent, turn, Path("app.py"))
    assert change is not None and change.state == "changed"
    event = rewind(agent, turn, overwrite=[Path("app.py")])
    assert event.restored == (str(project / "app.py"),) and (project / "app.py").read_text() == "print('v1')\n"


async def test_a_sub_agents_write_changed_by_hand_is_left_alone_too(project: Path) -> None:
    model = RoutedModel(
        {
            "main": [tool_turn(("AgentSpawn", {"prompt": "write the notes", "label": "w"})), text_turn("done")],
            "w": [tool_turn(("Write", {"path": "notes.md", "content": "by w\n"})), text_turn("written")],
        }
    )
    log = SessionLog.create(project, {"provider": "scripted", "model": "scripted"})
    agent = Agent(model, tools=[AgentSpawn(), Write()], session=log, cwd=project, hooks=[FileCheckpoints()])
    await run(agent, "have w write notes")
    (project / "notes.md").write_text("by w\nand by me\n")
    (turn,) = user_turns(agent)
    assert turn.changed == (project / "notes.md",)
    event = rewind(agent, turn)
    assert (project / "notes.md").read_text() == "by w\nand by me\n" and event.left == (str(project / "notes.md"),)
    await agent.aclose()
