"""The session log: persist-then-act, resume, the hash chain, file modes, no secrets."""

from __future__ import annotations

import json
import stat

import pytest

from sagent.agent.agent import Agent
from sagent.agent.session import (
    INTERRUPTED_TOOL,
    SessionLog,
    find_session,
    list_sessions,
    peek_state,
    sessions_dir,
    verify_chain,
)
from sagent.events import ToolFinished
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.tools.base import tool
from sagent.types import AssistantMessage, ToolResult, UserMessage


@pytest.fixture(autouse=True)
def data_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return tmp_path / "data"


@tool
def note(text: str) -> str:
    """Note something.

    Args:
        text: the note
    """
    return f"noted {text}"


async def run_all(agent: Agent, prompt: str) -> list:
    return [e async for e in agent.run(prompt)]


async def test_a_session_resumes_with_the_same_history(tmp_path) -> None:
    log = SessionLog.create(tmp_path, {"provider": "scripted", "model": "scripted"})
    model = ScriptedModel([tool_turn(("note", {"text": "a"})), text_turn("first done")])
    agent = Agent(model, tools=[note], session=log, cwd=tmp_path)
    await run_all(agent, "remember a")
    agent.session.close()

    assert log.path is not None and log.path.parent == sessions_dir(tmp_path)
    resumed = Agent.resume(log.path, ScriptedModel([text_turn("second done")]), tools=[note])
    assert resumed.history == agent.history
    assert resumed.session_id == agent.session_id
    await run_all(resumed, "and now?")
    sent = resumed.model.requests[0].messages  # type: ignore[attr-defined]
    assert sent[:4] == tuple(agent.history)
    assert sent[-1] == UserMessage.of("and now?")
    assert verify_chain(log.path)


async def test_killed_mid_tool_resumes_with_the_call_answered_as_interrupted(tmp_path) -> None:
    log = SessionLog.create(tmp_path, {})
    agent = Agent(ScriptedModel([tool_turn(("note", {"text": "x"}))]), tools=[note], session=log)
    # Run until the tool has started, then stop as a SIGKILL would: nothing after that point is written.
    async for event in agent.run("go"):
        if type(event).__name__ == "ToolStarted":
            break
    log.close()  # a killed process lets go of its session
    assert log.path is not None
    resumed = Agent.resume(log.path, ScriptedModel([text_turn("ok")]), tools=[note])
    call = next(m for m in resumed.history if isinstance(m, AssistantMessage)).tool_calls[0]
    answer = resumed.history[-1]
    assert isinstance(answer, ToolResult) and answer.call_id == call.id
    assert answer.is_error and answer.text == INTERRUPTED_TOOL
    # The answer was written too: a second resume finds nothing dangling.
    resumed.session.close()
    again = Agent.resume(log.path, ScriptedModel([]))
    assert again.history == resumed.history
    assert verify_chain(log.path)


def test_a_torn_last_record_is_dropped_and_the_chain_stays_whole(tmp_path) -> None:
    log = SessionLog.create(tmp_path, {})
    log.record(ToolFinished(ToolResult("c1", "note", ()), 1.0))
    log.close()
    assert log.path is not None
    with open(log.path, "ab") as f:
        f.write(b'{"seq": 2, "prev": "abc", "kind": "ev')  # killed mid-write
    reopened, _ = SessionLog.open(log.path)
    reopened.record(ToolFinished(ToolResult("c2", "note", ()), 1.0))
    reopened.close()
    assert verify_chain(log.path)
    assert len(log.path.read_text().splitlines()) == 3


def test_tampering_breaks_the_chain(tmp_path) -> None:
    log = SessionLog.create(tmp_path, {})
    for i in range(3):
        log.record(ToolFinished(ToolResult(f"c{i}", "note", ()), 1.0))
    log.close()
    assert log.path is not None and verify_chain(log.path)
    lines = log.path.read_text().splitlines()
    lines[1] = lines[1].replace('"c0"', '"cX"')
    log.path.write_text("\n".join(lines) + "\n")
    assert not verify_chain(log.path)


def test_session_files_are_private_and_hold_no_api_keys(tmp_path, monkeypatch) -> None:
    secret = "sk-ant-test-0123456789abcdef"
    monkeypatch.setenv("ANTHROPIC_API_KEY", secret)
    log = SessionLog.create(tmp_path, {})
    log.record(ToolFinished(ToolResult.of(_call(), f"env says {secret}"), 1.0))
    log.close()
    assert log.path is not None
    assert stat.S_IMODE(log.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(log.path.parent.stat().st_mode) == 0o700
    text = log.path.read_text()
    assert secret not in text and "[redacted]" in text


def test_listing_and_finding_sessions(tmp_path) -> None:
    first = SessionLog.create(tmp_path, {})
    first.record(_user("the first task"))
    first.close()
    second = SessionLog.create(tmp_path, {})
    second.close()
    found = list_sessions(tmp_path)
    assert {s.id for s in found} == {first.id, second.id}
    assert next(s for s in found if s.id == first.id).first_prompt == "the first task"
    assert find_session(first.id, tmp_path) == first.path
    assert find_session(str(first.path), tmp_path) == first.path
    with pytest.raises(FileNotFoundError):
        find_session("nope", tmp_path)


def test_ephemeral_sessions_write_nothing(tmp_path, data_home) -> None:
    log = SessionLog.ephemeral()
    log.record(_user("hello"))
    assert log.path is None and not data_home.exists()


def test_every_line_is_one_json_record(tmp_path) -> None:
    log = SessionLog.create(tmp_path, {"model": "m"})
    log.record(_user("x"))
    log.close()
    assert log.path is not None
    records = [json.loads(line) for line in log.path.read_text().splitlines()]
    assert [r["seq"] for r in records] == [0, 1]
    assert records[0]["kind"] == "header" and records[0]["model"] == "m"
    assert records[1]["event"]["type"] == "message_added"


def _call():
    from sagent.types import ToolCall

    return ToolCall("c1", "note", {})


def _user(text: str):
    from sagent.events import MessageAdded

    return MessageAdded(UserMessage.of(text))


async def test_compaction_replaces_the_history_with_a_summary_that_survives_resume(tmp_path) -> None:
    from sagent.agent.compaction import COMPACT_PREFIX
    from sagent.types import Usage

    summary = "Goal: fix add(). Done: found the sign bug in calc.py. Next: run the tests."
    steps = [text_turn("Looked at calc.py."), text_turn(summary, Usage(5000, 300)), text_turn("Tests pass.")]
    model = ScriptedModel(steps)
    log = SessionLog.create(tmp_path, {"model": "scripted"})
    agent = Agent(model, session=log, cwd=tmp_path)
    await agent.ask("fix add()")
    done = await agent.compact("the failing test")
    assert done is not None and done.replaced == 2
    ask = model.requests[1].messages[-1].text
    assert "write a summary of the conversation above" in ask and "the failing test" in ask
    # The summary has no "## Goal" section: the check adds the user's first message under one.
    assert done.repaired == ("goal",)
    assert [m.text for m in agent.history] == [
        f"{COMPACT_PREFIX}\n\n{summary}\n\n## Goal (the user's first message, kept by sagent)\n> fix add()"
    ]
    assert agent.cost.by_model["scripted"].responses == 2
    await agent.ask("go on")
    assert summary in model.requests[2].messages[0].text  # the next call starts from the summary
    await agent.aclose()

    state = peek_state(log.path)
    assert summary in state.history[0].text and len(state.history) == 3
    assert state.thread.user_messages == ("fix add()",)
    assert state.usage_by_model["scripted"][2] == 3
