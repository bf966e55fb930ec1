"""Checkpoints, rewind and fork: going back to a user's message puts back the files sagent wrote since, and
the session log resumes to the rewound history; a fork is a new session and leaves the original alone."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from sagent.agent.agent import Agent
from sagent.agent.checkpoints import FileCheckpoints, checkpoints_of
from sagent.agent.rewind import fork, rewind, user_turns
from sagent.agent.session import SessionLog, list_sessions, peek_state, verify_chain
from sagent.events import Rewound
from sagent.providers.scripted import RoutedModel, ScriptedModel, text_turn, tool_turn
from sagent.tools import AgentSpawn, Bash, Edit, Read, Write
from sagent.types import UserMessage


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


def three_turns(project: Path) -> list:
    """Turn 1 creates notes.md; turn 2 edits app.py; turn 3 only talks."""
    return [
        tool_turn(("Write", {"path": "notes.md", "content": "# notes\n"})),
        text_turn("created notes.md"),
        tool_turn(("Read", {"path": "app.py"})),
        tool_turn(("Edit", {"path": "app.py", "old_string": "v1", "new_string": "v2"})),
        text_turn("app.py prints v2 now"),
        text_turn("nothing to change"),
    ]


async def run(agent: Agent, prompt: str) -> None:
    async for _ in agent.run(prompt):
        pass


async def working_agent(project: Path, steps: list) -> Agent:
    log = SessionLog.create(project, {"provider": "scripted", "model": "scripted"})
    tools = [Read(), Write(), Edit(), Bash()]
    agent = Agent(ScriptedModel(steps), tools=tools, session=log, cwd=project, hooks=[FileCheckpoints()])
    for prompt in ("make notes", "print v2", "anything else?"):
        await run(agent, prompt)
    return agent


async def test_rewinding_to_a_message_drops_it_and_puts_back_the_files_written_since(project: Path) -> None:
    agent = await working_agent(project, three_turns(project))
    assert (project / "app.py").read_text() == "print('v2')\n" and (project / "notes.md").exists()
    turns = user_turns(agent)
    assert [t.text for t in turns] == ["make notes", "print v2", "anything else?"]
    assert set(turns[0].files) == {project / "notes.md", project / "app.py"}
    assert turns[1].files == (project / "app.py",) and turns[2].files == ()

    event = rewind(agent, turns[1])

    assert (project / "app.py").read_text() == "print('v1')\n"
    assert (project / "notes.md").read_text() == "# notes\n"  # written before that message: kept
    assert isinstance(event, Rewound) and event.prompt == "print v2"
    assert event.restored == (str(project / "app.py"),) and event.deleted == ()
    assert [m.text for m in agent.history if isinstance(m, UserMessage)] == ["make notes"]
    assert agent.history[-1].text == "created notes.md"  # type: ignore[union-attr]

    # The log says the same: a resumed session opens as rewound, and the log still checks out.
    assert agent.session.path is not None
    assert verify_chain(agent.session.path)
    assert peek_state(agent.session.path).history == agent.history

    # Further back: the file created in the first turn goes too.
    event = rewind(agent, user_turns(agent)[0])
    assert not (project / "notes.md").exists() and event.deleted == (str(project / "notes.md"),)
    assert agent.history == []


async def test_the_next_request_after_a_rewind_carries_the_rewound_history(project: Path) -> None:
    agent = await working_agent(project, [*three_turns(project), text_turn("a fresh answer")])
    rewind(agent, user_turns(agent)[1])
    await run(agent, "print v3 instead")
    sent = agent.model.requests[-1].messages  # type: ignore[attr-defined]
    assert [m.text for m in sent if isinstance(m, UserMessage)] == ["make notes", "print v3 instead"]
    await agent.aclose()
    assert agent.session.path is not None
    resumed = Agent.resume(agent.session.path, ScriptedModel([]))
    assert resumed.history == agent.history
    await resumed.aclose()


async def test_a_rewind_after_a_rewind_still_finds_how_each_file_was(project: Path) -> None:
    steps = [
        tool_turn(("Read", {"path": "app.py"})),
        tool_turn(("Edit", {"path": "app.py", "old_string": "v1", "new_string": "v2"})),
        text_turn("v2"),
        tool_turn(("Read", {"path": "app.py"})),
        tool_turn(("Edit", {"path": "app.py", "old_string": "v2", "new_string": "v3"})),
        text_turn("v3"),
        tool_turn(("Read", {"path": "app.py"})),
        tool_turn(("Edit", {"path": "app.py", "old_string": "v2", "new_string": "v9"})),
        text_turn("v9"),
    ]
    log = SessionLog.create(project, {"provider": "scripted", "model": "scripted"})
    agent = Agent(ScriptedModel(steps), tools=[Read(), Edit()], session=log, cwd=project, hooks=[FileCheckpoints()])
    await run(agent, "to v2")
    await run(agent, "to v3")
    rewind(agent, user_turns(agent)[1])
    assert (project / "app.py").read_text() == "print('v2')\n"
    await run(agent, "to v9")
    assert (project / "app.py").read_text() == "print('v9')\n"
    rewind(agent, user_turns(agent)[0])
    assert (project / "app.py").read_text() == "print('v1')\n"


async def test_checkpoints_are_kept_beside_the_log_for_the_user_alone(project: Path) -> None:
    agent = await working_agent(project, three_turns(project))
    folder = agent.session.session_dir
    assert folder is not None
    index = folder / "checkpoints" / "index.jsonl"
    records = [json.loads(line) for line in index.read_text().splitlines()]
    lines = [r for r in records if "blob" in r]  # the checkpoints; the other lines note what sagent wrote
    assert [(Path(r["path"]).name, r["blob"] is None) for r in lines] == [("notes.md", True), ("app.py", False)]
    written = [(Path(r["path"]).name, r["after"]) for r in records if "after" in r]
    assert [name for name, _ in written] == ["notes.md", "app.py"] and all(after for _, after in written)
    blob = folder / "checkpoints" / "blobs" / lines[1]["blob"]
    assert blob.read_bytes() == b"print('v1')\n"
    assert stat.S_IMODE(blob.stat().st_mode) == 0o600 and stat.S_IMODE(index.stat().st_mode) == 0o600
    assert stat.S_IMODE((folder / "checkpoints").stat().st_mode) == 0o700


async def test_files_changed_by_a_shell_command_are_not_tracked(project: Path) -> None:
    steps = [tool_turn(("Bash", {"command": "echo changed > app.py"})), text_turn("done"), text_turn("ok")]
    log = SessionLog.create(project, {"provider": "scripted", "model": "scripted"})
    agent = Agent(ScriptedModel(steps), tools=[Bash()], session=log, cwd=project, hooks=[FileCheckpoints()])
    await run(agent, "change it with the shell")
    await run(agent, "thanks")
    assert user_turns(agent)[0].files == ()
    event = rewind(agent, user_turns(agent)[0])
    assert event.restored == () and (project / "app.py").read_text() == "changed\n"


async def test_an_ephemeral_session_rewinds_its_files_too(project: Path) -> None:
    tools = [Read(), Write(), Edit()]
    agent = Agent(ScriptedModel(three_turns(project)), tools=tools, cwd=project, hooks=[FileCheckpoints()])
    for prompt in ("make notes", "print v2", "anything else?"):
        await run(agent, prompt)
    assert checkpoints_of(agent).folder is None
    rewind(agent, user_turns(agent)[0])
    assert (project / "app.py").read_text() == "print('v1')\n" and not (project / "notes.md").exists()


async def test_rewind_without_files_keeps_them(project: Path) -> None:
    agent = await working_agent(project, three_turns(project))
    event = rewind(agent, user_turns(agent)[1], files=False)
    assert event.restored == () and (project / "app.py").read_text() == "print('v2')\n"


async def test_rewinding_only_the_files_keeps_the_conversation_and_says_so_in_the_log(project: Path) -> None:
    agent = await working_agent(project, three_turns(project))
    history = list(agent.history)
    event = rewind(agent, user_turns(agent)[1], conversation=False)
    assert (project / "app.py").read_text() == "print('v1')\n"
    assert agent.history == history and event.dropped == 0 and event.kept == len(history)
    assert agent.session.path is not None and peek_state(agent.session.path).history == history


async def test_a_stale_turn_is_refused(project: Path) -> None:
    agent = await working_agent(project, three_turns(project))
    turns = user_turns(agent)
    rewind(agent, turns[1])
    with pytest.raises(ValueError, match=r"no message|no longer"):
        rewind(agent, turns[2])


async def test_a_fork_holds_the_conversation_before_the_message_and_the_original_is_untouched(project: Path) -> None:
    agent = await working_agent(project, three_turns(project))
    original = agent.session.path
    assert original is not None
    before = original.read_bytes()

    path = fork(agent, user_turns(agent)[1])

    assert original.read_bytes() == before and path != original and path.parent == original.parent
    assert verify_chain(path)
    state = peek_state(path)
    assert [m.text for m in state.history if isinstance(m, UserMessage)] == ["make notes"]
    assert state.header["forked_from"] == agent.session_id and state.header["fork_seq"] > 0
    assert (project / "app.py").read_text() == "print('v2')\n"  # a fork changes no file
    listed = {s.id: s for s in list_sessions(project)}
    assert listed[path.stem].parent == agent.session_id and listed[agent.session_id].parent == ""

    # The fork goes on as a session of its own, and can be rewound to before the fork point.
    await agent.aclose()
    forked = Agent.resume(path, ScriptedModel([]), tools=[Read(), Write()], hooks=[FileCheckpoints()])
    assert forked.history == state.history
    rewind(forked, user_turns(forked)[0])
    assert not (project / "notes.md").exists()
    assert original.read_bytes() == before


async def test_a_fork_now_holds_the_whole_conversation(project: Path) -> None:
    agent = await working_agent(project, three_turns(project))
    path = fork(agent)
    assert peek_state(path).history == agent.history


async def test_an_ephemeral_session_cannot_be_forked(project: Path) -> None:
    agent = Agent(ScriptedModel([text_turn("hi")]), cwd=project)
    await run(agent, "hello")
    with pytest.raises(ValueError, match="ephemeral"):
        fork(agent)


async def test_a_sub_agents_writes_are_put_back_with_its_parents_turn(project: Path) -> None:
    model = RoutedModel(
        {
            "main": [tool_turn(("AgentSpawn", {"prompt": "write the notes", "label": "w"})), text_turn("done")],
            "w": [tool_turn(("Write", {"path": "notes.md", "content": "by w\n"})), text_turn("written")],
        }
    )
    log = SessionLog.create(project, {"provider": "scripted", "model": "scripted"})
    tools = [AgentSpawn(), Write()]
    agent = Agent(model, tools=tools, session=log, cwd=project, hooks=[FileCheckpoints()])
    await run(agent, "have w write notes")
    assert (project / "notes.md").read_text() == "by w\n"
    (turn,) = user_turns(agent)
    assert turn.files == (project / "notes.md",)
    rewind(agent, turn)
    assert not (project / "notes.md").exists()
    await agent.aclose()
