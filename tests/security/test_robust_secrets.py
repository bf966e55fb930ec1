"""Secrets never reach a session's files in part: every place that cuts a long output (Bash's streaming
capture, every tool's head and tail, Read's long lines) redacts before it cuts, so a key split by the cut
is neither stored, nor spilled, nor sent to the model. Session folders are 0700 all the way down, and
their files 0600."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from sagent.agent.agent import Agent
from sagent.agent.session import SessionLog, data_dir, sessions_dir
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.tools.base import MAX_OUTPUT, tool
from sagent.tools.files import MAX_LINE, Read
from sagent.tools.shell import Bash

# 108 characters, as long as the key the issue saw cut (106 of them reached the session log).
KEY = "sk-ant-api03-b8oYsfroDrsehrD50AlpcZRzAQYUFAB1hgxTrAsWdl4BA3VyQC9fHRLQY9OBmNwLlwydVmZKNzo6zQ4ZgpImpyzQut8h-JV"
PIECE = 10  # no run of this many of the key's characters may show anywhere


def leaked(text: str) -> list[str]:
    return [KEY[i : i + PIECE] for i in range(len(KEY) - PIECE + 1) if KEY[i : i + PIECE] in text]


@pytest.fixture(autouse=True)
def key_and_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


@tool
def dump(pad: int) -> str:
    """Print the key many times after `pad` characters, as a tool whose output holds a secret would.

    Args:
        pad: characters before the first key
    """
    return "x" * pad + os.environ["ANTHROPIC_API_KEY"] * (3 * MAX_OUTPUT // len(KEY))


# The key, repeated end to end, fills the output: wherever the head and the tail are cut, the cut splits
# one of them unless it falls exactly between two, and the pads move the cut by a few characters each.
PADS = (0, 1, 37, 71)
BASH = [
    f"python3 -c \"import os, sys; sys.stdout.write('x' * {pad} + os.environ['ANTHROPIC_API_KEY'] * 900)\""
    for pad in PADS
]


def _files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()]


async def _run(tmp_path: Path, calls: list[tuple[str, dict]]) -> tuple[Agent, ScriptedModel, SessionLog]:
    log = SessionLog.create(tmp_path, {"provider": "scripted", "model": "scripted"})
    model = ScriptedModel([tool_turn(*calls), text_turn("done")])
    agent = Agent(model, tools=[Bash(), Read(), dump], session=log, cwd=tmp_path)
    async for _ in agent.run("show me"):
        pass
    log.close()
    return agent, model, log


def _everything_written(tmp_path: Path, model: ScriptedModel, log: SessionLog) -> dict[str, str]:
    assert log.path is not None and log.session_dir is not None
    seen = {"session log": log.path.read_text(), "model input": repr(model.requests[-1].messages)}
    for path in _files(log.session_dir):
        seen[str(path)] = path.read_text(errors="replace")
    return seen


async def test_a_key_cut_by_bash_head_and_tail_is_redacted_everywhere(tmp_path: Path) -> None:
    _, model, log = await _run(tmp_path, [("Bash", {"command": c}) for c in BASH])
    seen = _everything_written(tmp_path, model, log)
    assert len(seen) == 2 + len(BASH)  # a spill file per call: each output was cut
    for where, text in seen.items():
        assert not leaked(text), f"part of the key in {where}"
    results = [m for m in model.requests[-1].messages if getattr(m, "call_id", None)]
    assert all("[redacted]" in r.text and "characters cut" in r.text for r in results)


async def test_a_key_cut_by_any_tools_head_and_tail_is_redacted_everywhere(tmp_path: Path) -> None:
    _, model, log = await _run(tmp_path, [("dump", {"pad": pad}) for pad in PADS])
    seen = _everything_written(tmp_path, model, log)
    assert len(seen) == 2 + len(PADS)
    for where, text in seen.items():
        assert not leaked(text), f"part of the key in {where}"


@pytest.mark.parametrize("after", [100, 70_000], ids=["long line", "line longer than Read holds"])
async def test_a_key_cut_by_reads_long_line_limit_is_redacted(tmp_path: Path, after: int) -> None:
    (tmp_path / "config.txt").write_text("x" * (MAX_LINE - 50) + KEY + "y" * after + "\nshort line\n")
    _, model, log = await _run(tmp_path, [("Read", {"path": "config.txt"})])
    for where, text in _everything_written(tmp_path, model, log).items():
        assert not leaked(text), f"part of the key in {where}"


async def test_short_outputs_still_reach_the_model_whole(tmp_path: Path) -> None:
    """Only what is cut is redacted: a short output is what the tool gave (the log redacts it)."""
    _, model, log = await _run(tmp_path, [("Bash", {"command": "echo $ANTHROPIC_API_KEY"})])
    assert KEY in repr(model.requests[-1].messages)
    assert log.path is not None and KEY not in log.path.read_text()


async def test_session_folders_are_0700_all_the_way_down_and_files_0600(tmp_path: Path) -> None:
    _, _, log = await _run(tmp_path, [("Bash", {"command": BASH[0]})])
    assert log.path is not None and log.session_dir is not None
    folders = [data_dir(), data_dir() / "sessions", sessions_dir(tmp_path), log.session_dir]
    folders += [p for p in log.session_dir.rglob("*") if p.is_dir()]
    assert len(folders) >= 5  # the outputs folder too
    for folder in folders:
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    files = [log.path, *_files(log.session_dir)]
    assert len(files) >= 2
    for file in files:
        assert stat.S_IMODE(file.stat().st_mode) == 0o600, file


def test_folders_an_earlier_version_left_open_are_closed(tmp_path: Path) -> None:
    (data_dir() / "sessions").mkdir(parents=True, mode=0o755)
    os.chmod(data_dir(), 0o755)
    os.chmod(data_dir().parent, 0o755)  # XDG_DATA_HOME: the user's, not sagent's
    slug = sessions_dir(tmp_path)
    slug.mkdir(mode=0o755)
    SessionLog.create(tmp_path, {}).close()
    for folder in (data_dir(), data_dir() / "sessions", slug):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    assert stat.S_IMODE(data_dir().parent.stat().st_mode) == 0o755  # not sagent's: left as it was
