"""Session lists: ids cut only as far as they stay distinct, titles, forks under their parent, search."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sagent.agent.session import SessionInfo, SessionLog, list_sessions
from sagent.agent.session_list import listed_sessions, session_tree, short_ids


@pytest.fixture(autouse=True)
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return tmp_path / "data"


def test_ids_are_cut_to_the_second_and_four_characters_or_as_far_as_needed_to_differ() -> None:
    ids = ["20261123-153012-4c1d9a2b", "20261123-153012-4c1e0000", "20261123-153019-77aa0000", "20261123-15301"]
    shown = short_ids(ids)
    assert shown["20261123-153019-77aa0000"] == "20261123-153019-77aa"
    assert shown["20261123-153012-4c1d9a2b"] == "20261123-153012-4c1d"
    assert shown["20261123-153012-4c1e0000"] == "20261123-153012-4c1e"
    assert shown["20261123-15301"] == "20261123-15301"  # shorter than the cut: whole
    clash = short_ids(["20261123-153012-4c1d9a2b", "20261123-153012-4c1d9a2c"])
    assert set(clash.values()) == {"20261123-153012-4c1d9a2b", "20261123-153012-4c1d9a2c"}


def info(name: str, modified: float, parent: str = "") -> SessionInfo:
    return SessionInfo(name, Path(f"{name}.jsonl"), modified, f"prompt of {name}", "", parent)


def test_forks_come_under_their_session_and_the_newest_tree_first() -> None:
    sessions = [
        info("old", 1),
        info("root", 2),
        info("fork-a", 3, parent="root"),
        info("fork-b", 5, parent="root"),
        info("fork-of-a", 4, parent="fork-a"),
        info("orphan", 0, parent="gone"),
        info("loop-1", 0.5, parent="loop-2"),
        info("loop-2", 0.4, parent="loop-1"),
    ]
    order = [(s.id, depth) for s, depth in session_tree(sessions)]
    assert order[:5] == [("root", 0), ("fork-b", 1), ("fork-a", 1), ("fork-of-a", 2), ("old", 0)]
    assert ("orphan", 0) in order and {"loop-1", "loop-2"} <= {name for name, _ in order}
    assert len(order) == len(sessions)


def test_a_listing_shows_the_stored_title_and_the_parent_and_searches_them(tmp_path: Path) -> None:
    plain = SessionLog.create(tmp_path, {"provider": "p", "model": "m"})
    titled = SessionLog.create(tmp_path, {"provider": "p", "model": "m", "title": "Release  checklist"})
    child = SessionLog.create(tmp_path, {"provider": "p", "model": "m", "forked_from": plain.id})
    for log in (plain, titled, child):
        log.close()
    found = {s.id: s for s in list_sessions(tmp_path)}
    assert found[titled.id].label == "Release checklist" and found[child.id].parent == plain.id
    rows = listed_sessions(tmp_path)
    assert [r.depth for r in rows if r.info.id == child.id] == [1]
    assert [r.info.id for r in rows if r.matches("release CHECK")] == [titled.id]
    assert [r.info.id for r in rows if r.matches(titled.id[-6:])] == [titled.id]
    assert all(r.matches(r.when[:10]) for r in rows)


def test_a_header_that_cannot_be_read_lists_without_a_title(tmp_path: Path) -> None:
    log = SessionLog.create(tmp_path, {"provider": "p", "model": "m"})
    log.close()
    assert log.path is not None
    log.path.write_text(json.dumps(["not", "an", "object"]) + "\n")
    (listed,) = list_sessions(tmp_path)
    assert listed.title == "" and listed.parent == ""


def test_sagent_sessions_prints_whole_ids_titles_and_forks_under_their_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from sagent.cli.commands import list_session_files
    from sagent.events import MessageAdded
    from sagent.types import UserMessage

    parent = SessionLog.create(tmp_path, {"provider": "p", "model": "m"})
    parent.record(MessageAdded(UserMessage.of("fix the   flaky test")))
    child = SessionLog.create(tmp_path, {"provider": "p", "model": "m", "forked_from": parent.id})
    child.record(MessageAdded(UserMessage.of("fix the flaky test")))
    for log in (parent, child):
        log.close()
    assert list_session_files([str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(parent.id) and lines[0].endswith("  fix the flaky test")
    assert lines[1].startswith(child.id) and lines[1].endswith("  └ fix the flaky test")
