"""`--name` for a session, `--session PATH` starting one at a new path, and `--log-level`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_sessions_cli import env_for, sagent, session_files
from tests.fakes.anthropic_server import FakeAnthropic, text_response


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


def test_a_named_session_is_listed_by_name_and_continued_by_it(project: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    with FakeAnthropic([text_response("First."), text_response("Second.")]) as fake:
        env = env_for(fake, data)
        done = sagent(["--name", "login bug", "-p", "look at the login"], env, project)
        assert done.returncode == 0, done.stderr
        listing = sagent(["sessions"], env, project)
        assert "login bug" in listing.stdout
        again = sagent(["--session", "login bug", "-p", "go on"], env, project)
        assert again.returncode == 0, again.stderr
        sent = fake.requests[-1]["body"]["messages"]
    first = sent[0]["content"]
    assert (first[0]["text"] if isinstance(first, list) else first) == "look at the login"
    assert len(sent) == 3  # the first prompt, its answer, and the one that continued it
    assert len(session_files(data)) == 1
    refused = sagent(["--name", "x", "--continue", "-p", "hi"], env, project)
    assert refused.returncode == 2 and "--name names a new session" in refused.stderr


def test_session_with_a_new_path_starts_the_session_there(project: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    target = tmp_path / "kept" / "review-1.jsonl"
    target.parent.mkdir()
    with FakeAnthropic([text_response("Started."), text_response("Continued.")]) as fake:
        env = env_for(fake, data)
        done = sagent(["--session", str(target), "-p", "start here"], env, project)
        assert done.returncode == 0, done.stderr
        header = json.loads(target.read_text().splitlines()[0])
        assert header["kind"] == "header" and header["session_id"] == "review-1"
        again = sagent(["--session", str(target), "-p", "and on"], env, project)
        assert again.returncode == 0 and "Continued." in again.stdout
    assert session_files(data) == []
    missing = sagent(["--session", str(tmp_path / "nowhere" / "a.jsonl"), "-p", "hi"], env, project)
    assert missing.returncode == 2 and "does not exist" in missing.stderr
    bad = sagent(["--session", str(tmp_path / "kept" / "a b.jsonl"), "-p", "hi"], env, project)
    assert bad.returncode == 2 and "letters, digits" in bad.stderr


def test_log_level_writes_the_libraries_log_lines_to_stderr_only(project: Path, tmp_path: Path) -> None:
    with FakeAnthropic([text_response("Logged."), text_response("Quiet.")]) as fake:
        env = env_for(fake, tmp_path / "data")
        done = sagent(["--log-level", "debug", "-p", "hi"], env, project)
        assert done.returncode == 0 and done.stdout.strip() == "Logged."
        assert "sagent: log:" in done.stderr and "DEBUG" in done.stderr
        quiet = sagent(["-p", "hi"], env, project)
        assert "sagent: log:" not in quiet.stderr
    bad = sagent(["-p", "hi"], {**env, "SAGENT_LOG_LEVEL": "loud"}, project)
    assert bad.returncode == 2 and "SAGENT_LOG_LEVEL=loud" in bad.stderr
