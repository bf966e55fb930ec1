"""The REPL's questions before a rewind, one per file changed since sagent wrote it: each shows the file's
diff, keeping is the first choice, and only the files answered yes are put back."""

from __future__ import annotations

from pathlib import Path

import pytest

from sagent.agent.agent import Agent
from sagent.agent.checkpoints import FileCheckpoints
from sagent.agent.session import SessionLog
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.repl.app import Repl
from sagent.repl.commands import run_command
from sagent.repl.render import Settings
from sagent.tools import Write


@pytest.fixture(autouse=True)
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return tmp_path / "data"


def choose(repl: Repl, value: bool) -> None:
    """Choose in the open list as Enter does: the list closes, then its choice runs."""
    picker = repl.state.picker
    assert picker is not None
    repl.state.picker = None
    picker.on_choose(value)


async def test_each_changed_file_is_asked_about_and_only_a_yes_puts_it_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    steps = [
        tool_turn(("Write", {"path": "a.py", "content": "a = 1\n"}), ("Write", {"path": "b.py", "content": "b = 1\n"})),
        text_turn("wrote both"),
    ]
    log = SessionLog.create(tmp_path, {"provider": "scripted", "model": "scripted"})
    agent = Agent(ScriptedModel(steps), tools=[Write()], session=log, cwd=tmp_path, hooks=[FileCheckpoints()])
    async for _ in agent.run("write a and b"):
        pass
    (tmp_path / "a.py").write_text("a = 1\na_mine = 2\n")
    (tmp_path / "b.py").write_bytes(b"b = 1\n\0binary now\n")
    repl = Repl(agent, new_agent=lambda path=None: agent, settings=Settings(width=100, color=False))

    await run_command(repl, "/rewind 1")

    picker = repl.state.picker
    assert picker is not None and picker.title == "a.py changed since sagent wrote it: put it back? (1 of 2)"
    assert [item.value for item in picker.items] == [False, True]  # keeping comes first
    out = capsys.readouterr().out
    assert f"! {tmp_path / 'a.py'} changed since sagent created it; the rewind would delete it:" in out
    assert "a_mine = 2" in out
    choose(repl, True)  # a.py: yes, put it back (created since: deleted)

    picker = repl.state.picker
    assert picker is not None and picker.title.endswith("(2 of 2)")
    assert "(a binary file: 18 bytes now, none put back)" in capsys.readouterr().out
    choose(repl, False)  # b.py: keep it

    assert repl.state.picker is None
    assert not (tmp_path / "a.py").exists()
    assert (tmp_path / "b.py").read_bytes() == b"b = 1\n\0binary now\n"
    out = capsys.readouterr().out
    assert f"deleted {tmp_path / 'a.py'} (created since)" in out
    assert f"left as it is (changed since sagent wrote it): {tmp_path / 'b.py'}" in out
    assert agent.history == []
    await agent.aclose()
