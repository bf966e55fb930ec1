"""Session logs in a storage the application plugs in: kept, continued, checked, and a failing one stops
the run before it acts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sagent import Agent, AgentError, ScriptedModel
from sagent.agent.session import SessionLog
from sagent.agent.session_check import SessionCorrupt
from sagent.agent.storage import MemoryStorage, SessionStorage
from sagent.providers.scripted import text_turn, tool_turn
from sagent.tools import Read


async def test_a_session_in_memory_is_continued_by_another_agent(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("ship on Friday\n")
    store = MemoryStorage("notes-session")
    assert isinstance(store, SessionStorage) and not isinstance(tmp_path, SessionStorage)
    first = ScriptedModel([tool_turn(("Read", {"path": "notes.md"})), text_turn("Friday.")])
    agent = Agent(first, tools=[Read()], cwd=tmp_path, session=SessionLog.in_storage(store, cwd=tmp_path))
    await agent.run("when do we ship?")
    await agent.aclose()
    assert store.closed and len(store.lines) > 4
    assert all(json.loads(line)["seq"] == n for n, line in enumerate(store.lines))
    second = ScriptedModel([text_turn("Still Friday.")])
    again = Agent.resume(store, second, tools=[Read()])
    await again.run("and now?")
    assert again.session_id == agent.session_id and again.context.cwd == tmp_path.resolve()
    texts = str(second.requests[-1].messages)
    assert "when do we ship?" in texts and "ship on Friday" in texts and "and now?" in texts
    with pytest.raises(ValueError, match="holds a session log already"):
        SessionLog.in_storage(store)


async def test_a_changed_record_is_refused_when_the_session_is_continued() -> None:
    store = MemoryStorage()
    agent = Agent(ScriptedModel([text_turn("one")]), session=SessionLog.in_storage(store))
    await agent.run("hello")
    await agent.aclose()
    (at,) = [n for n, line in enumerate(store.lines) if b'"hello"' in line]
    store.lines[at] = store.lines[at].replace(b'"hello"', b'"HELLO"')
    with pytest.raises(SessionCorrupt, match=f"line {at + 1}"):
        Agent.resume(store, ScriptedModel([]))


class FullStorage(MemoryStorage):
    def append(self, line: bytes) -> None:
        if len(self.lines) >= 2:
            raise OSError(28, "No space left on device")
        super().append(line)


async def test_a_storage_that_fails_stops_the_run_before_it_acts(tmp_path: Path) -> None:
    store = FullStorage()
    model = ScriptedModel([tool_turn(("Read", {"path": "x"})), text_turn("never")])
    agent = Agent(model, tools=[Read()], cwd=tmp_path, session=SessionLog.in_storage(store, cwd=tmp_path))
    with pytest.raises(AgentError, match=r"could not be written \(No space left on device\)"):
        await agent.run("go")
    assert len(model.requests) <= 1 and len(store.lines) == 2
