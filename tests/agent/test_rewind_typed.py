"""Rewind and fork put back exactly what the user typed: a message keeps its typed text beside the files
attached to it, through the session log; a message logged without it (an older session) reads as typed
without the attachment blocks, even those an older rewind had put back into the text itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sagent.agent.agent import Agent
from sagent.agent.checkpoints import FileCheckpoints
from sagent.agent.rewind import as_typed, fork, rewind, user_turns
from sagent.agent.session import SessionLog, peek_state
from sagent.attachments import shell_context, typed_text, without_blocks
from sagent.providers.scripted import ScriptedModel, text_turn
from sagent.repl.mentions import compose
from sagent.types import TextPart, UserMessage, message_from_dict, to_dict


@pytest.fixture(autouse=True)
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return tmp_path / "data"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "docs").mkdir(parents=True)
    (root / "app.py").write_text("print('v1')\n")
    (root / "docs" / "a.md").write_text("# a\n")
    return root


async def talked(project: Path, messages: list[UserMessage]) -> Agent:
    log = SessionLog.create(project, {"provider": "scripted", "model": "scripted"})
    steps = [text_turn(f"answer {n}") for n in range(len(messages))]
    agent = Agent(ScriptedModel(steps), session=log, cwd=project, hooks=[FileCheckpoints()])
    for message in messages:
        async for _ in agent.run(message):
            pass
    return agent


@pytest.mark.parametrize(
    "typed",
    ["explain @app.py", "compare @app.py and @docs", 'see @"docs/a.md" and @app.py, @app.py again', "explain @nothing"],
)
async def test_a_rewind_gives_back_what_was_typed_not_the_attached_files(project: Path, typed: str) -> None:
    agent = await talked(project, [compose(typed, project).message, UserMessage.of("next")])
    turns = user_turns(agent)
    assert [t.text for t in turns] == [typed, "next"]
    event = rewind(agent, turns[0])
    assert event.prompt == typed and "<file" not in event.prompt


async def test_rewinding_again_after_sending_it_again_adds_no_copy(project: Path) -> None:
    typed = "explain @app.py"
    agent = await talked(project, [compose(typed, project).message])
    for _ in range(3):
        (turn,) = user_turns(agent)
        rewind(agent, turn)
        async for _ in agent.run(compose(turn.text, project).message):  # sent again as it came back
            pass
    (turn,) = user_turns(agent)
    assert turn.text == typed
    sent = agent.history[0]
    assert isinstance(sent, UserMessage) and sent.text.count("<file") == 1


async def test_the_typed_text_survives_the_log_and_a_fork(project: Path) -> None:
    typed = "explain @app.py"
    message = compose(typed, project, (shell_context("make", "ok"),)).message
    assert message.typed == typed and message.content[0] == TextPart(typed)
    agent = await talked(project, [message, UserMessage.of("more")])
    assert agent.session.path is not None
    resumed = peek_state(agent.session.path).history
    assert isinstance(resumed[0], UserMessage) and resumed[0].typed == typed
    path = fork(agent, user_turns(agent)[1])
    forked = Agent.resume(path, ScriptedModel([]))
    assert [t.text for t in user_turns(forked)] == [typed]
    await forked.aclose()
    await agent.aclose()


def test_a_message_without_attachments_is_logged_as_before() -> None:
    plain = to_dict(UserMessage.of("hello"))
    assert plain == {"content": [{"text": "hello", "type": "text"}], "role": "user"}  # no "typed": null
    assert message_from_dict(plain) == UserMessage.of("hello")
    typed = UserMessage((TextPart("x"), TextPart("<file>")), typed="x")
    assert message_from_dict(json.loads(json.dumps(to_dict(typed)))) == typed


async def test_an_older_session_without_the_typed_text_still_rewinds_to_what_was_typed(project: Path) -> None:
    block = '<file path="app.py" lines="1">\nprint(\'v1\')\n</file>'
    image = '<image path="shot.png" type="image/png" bytes="68"/>'
    old = UserMessage((TextPart("explain @app.py"), TextPart(block)))  # as older sagent logged it
    copied = UserMessage((TextPart("explain @app.py" + block), TextPart(block)))  # after an older rewind
    pictured = UserMessage((TextPart("look @shot.png"), TextPart(image)))
    agent = await talked(project, [old, copied, pictured])
    assert [t.text for t in user_turns(agent)] == ["explain @app.py", "explain @app.py", "look @shot.png"]
    rewind(agent, user_turns(agent)[1])
    assert len(agent.history) == 2


def test_only_whole_blocks_are_taken_out_of_typed_text() -> None:
    assert without_blocks('keep <file path="x"> as typed') == 'keep <file path="x"> as typed'
    assert without_blocks('a <directory path="d">\nx/\ny\n</directory>b') == "a b"
    assert without_blocks('run <shell command="ls">\nThe user ran\nout\n</shell>') == "run "
    assert as_typed(UserMessage.of("/review app.py")) == "/review app.py"
    assert typed_text(UserMessage((TextPart("expanded prompt"),), typed="/review app.py")) == "/review app.py"
