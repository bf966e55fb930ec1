"""`sagent sessions export ID DIR`, `sessions verify DIR` and `sessions import DIR`: a fleet's session tree
(the main log, a sub-agent's log, a spilled output) travels as a folder and comes back whole in another
project. The hostile bundles are in tests/security/test_bundle_import.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sagent.agent.agent import Agent
from sagent.agent.session import SessionLog, sessions_dir
from sagent.cli.main import main as cli
from sagent.evidence.verify import verify_tree
from sagent.providers.scripted import RoutedModel, text_turn, tool_turn
from sagent.tools import AgentSend, AgentSpawn


async def fleet_session(project: Path) -> Path:
    """A session in `project`'s sessions folder whose agent spawned `a`, with a spilled output."""
    model = RoutedModel(
        {
            "main": [tool_turn(("AgentSpawn", {"prompt": "check a.py", "label": "a"})), text_turn("done")],
            "a": [text_turn("a.py is fine")],
        }
    )
    log = SessionLog.create(project, {"provider": "scripted", "model": "scripted"})
    agent = Agent(model, tools=[AgentSpawn(), AgentSend()], session=log, cwd=project)
    async for _ in agent.run("review the project"):
        pass
    await agent.aclose()
    assert log.path is not None and log.session_dir is not None
    (log.session_dir / "outputs").mkdir(parents=True, exist_ok=True)
    (log.session_dir / "outputs" / "bash-1.txt").write_text("a long output\n" * 100)
    return log.path


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    return one, two


async def test_a_session_tree_exports_verifies_and_imports_whole(world, tmp_path: Path, monkeypatch, capsys) -> None:
    one, two = world
    log = await fleet_session(one)
    tree = verify_tree(log)
    assert len(tree.sessions) == 2
    monkeypatch.chdir(one)
    bundle = tmp_path / "bundle"
    assert cli(["sessions", "export", log.stem[:15], str(bundle)]) == 0
    out = capsys.readouterr().out
    assert f"exported {log.stem} (2 sessions, 3 files" in out
    sha = out.splitlines()[-1].removeprefix("bundle sha256 ")
    manifest = json.loads((bundle / "bundle.json").read_text())
    names = sorted(f["path"] for f in manifest["files"])
    child = tree.sessions[1].relative_to(log.parent).as_posix()
    assert names == sorted([log.name, child, f"{log.stem}/outputs/bash-1.txt"])
    assert not any(n.endswith(".lock") for n in names)

    assert cli(["sessions", "verify", str(bundle)]) == 0
    out = capsys.readouterr().out
    assert "ok: 3 files as listed" in out and "2 sessions" in out and f"bundle sha256 {sha}" in out

    monkeypatch.chdir(two)
    assert cli(["sessions", "import", str(bundle)]) == 0
    out = capsys.readouterr().out
    imported = sessions_dir(two) / log.name
    assert f"imported {log.stem}" in out and str(imported) in out and f"bundle sha256 {sha}" in out
    assert imported.read_bytes() == log.read_bytes()
    assert (sessions_dir(two) / log.stem / "outputs" / "bash-1.txt").read_text() == "a long output\n" * 100
    again = verify_tree(imported)
    assert again.ok and again.paired == 2 and len(again.sessions) == 2
    assert oct(imported.stat().st_mode & 0o777) == "0o600"
    assert cli(["sessions", "verify", log.stem, "--tree"]) == 0  # found here by its id now
    capsys.readouterr()
    assert cli(["sessions"]) == 0 and log.stem in capsys.readouterr().out

    # A second import of the same session is refused, the first left as it was.
    assert cli(["sessions", "import", str(bundle)]) == 1
    assert f"a session {log.stem} is here already" in capsys.readouterr().err


async def test_export_refuses_what_it_cannot_write_whole(world, tmp_path: Path, monkeypatch, capsys) -> None:
    one, _ = world
    log = await fleet_session(one)
    monkeypatch.chdir(one)
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "x").write_text("mine")
    assert cli(["sessions", "export", log.stem, str(busy)]) == 2
    assert "exists and is not an empty folder" in capsys.readouterr().err
    assert cli(["sessions", "export", "nope", str(tmp_path / "b")]) == 2
    assert "no session 'nope'" in capsys.readouterr().err
    assert cli(["sessions", "export", log.stem]) == 2
    assert "usage: sagent sessions export" in capsys.readouterr().err
    assert cli(["sessions", "import"]) == 2 and cli(["sessions", "import", str(tmp_path / "none")]) == 2
    capsys.readouterr()

    without = tmp_path / "lean"
    (log.with_suffix("") / "checkpoints").mkdir()
    (log.with_suffix("") / "checkpoints" / "index.jsonl").write_text("{}\n")
    assert cli(["sessions", "export", log.stem, str(without), "--no-checkpoints"]) == 0
    assert "checkpoints left out" in capsys.readouterr().out
    assert not (without / log.stem / "checkpoints").exists()

    # A session whose log was changed is not exported.
    data = bytearray(log.read_bytes())
    data[data.index(b"review")] = ord("R")
    log.write_bytes(bytes(data))
    assert cli(["sessions", "export", log.stem, str(tmp_path / "c")]) == 1
    assert "does not check out" in capsys.readouterr().err
    assert not (tmp_path / "c").exists()
