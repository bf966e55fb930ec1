"""Recall and Memory as a user meets them: a fact from an older session found (by the Recall tool and by
`sagent sessions search`), the index kept up to date incrementally, facts saved to memory and read by the
next session, and `--ephemeral` leaving no file behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from sagent.evidence.recall import RecallIndex, index_path, query_of
from sagent.tools.base import ToolContext, ToolError
from sagent.tools.memory_tools import Memory, Recall, remember
from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response


def sagent(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sagent.cli.main", *args],
        capture_output=True, text=True, env=env, cwd=cwd, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip


@pytest.fixture
def homes(tmp_path: Path) -> dict[str, Path]:
    found = {name: tmp_path / name for name in ("data", "config", "cache", "state", "project")}
    for folder in found.values():
        folder.mkdir()
    return found


def env_for(fake: FakeAnthropic, homes: dict[str, Path]) -> dict[str, str]:
    return {
        **os.environ,
        "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests-0001",
        "ANTHROPIC_BASE_URL": fake.url,
        "XDG_DATA_HOME": str(homes["data"]),
        "XDG_CONFIG_HOME": str(homes["config"]),
        "XDG_CACHE_HOME": str(homes["cache"]),
        "XDG_STATE_HOME": str(homes["state"]),
        "HOME": str(homes["project"].parent),
    }


def tool_results(body: dict) -> list[str]:
    found = []
    for message in body["messages"]:
        for part in message["content"] if isinstance(message["content"], list) else []:
            if part.get("type") == "tool_result":
                content = part["content"]
                found.append(content if isinstance(content, str) else "".join(c.get("text", "") for c in content))
    return found


def test_recall_finds_a_fact_from_an_older_session(homes: dict[str, Path]) -> None:
    project = homes["project"]
    with FakeAnthropic([text_response("Noted: staging listens on port 8377.")]) as fake:
        first = sagent(["-p", "we decided the staging server uses port 8377"], env_for(fake, homes), project)
    assert first.returncode == 0, first.stderr
    (old,) = (homes["data"] / "sagent" / "sessions").glob("*/*.jsonl")

    steps = [tool_use_response([("Recall", {"query": "staging port"})]), text_response("It is 8377.")]
    with FakeAnthropic(steps) as fake:
        second = sagent(["-p", "which port does staging use?"], env_for(fake, homes), project)
        bodies = fake.bodies()
    assert second.returncode == 0, second.stderr
    (found,) = tool_results(bodies[1])
    assert f"{old.stem}  turn 1  user: we decided the [staging] server uses [port] 8377" in found
    assert "Noted" in found  # the answer of that turn matched too
    assert "which port" not in found  # the session asking is left out

    out = sagent(["sessions", "search", "8377"], env_for(fake, homes), project)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert any(line.startswith(f"{old.stem}  turn 1  user: ") and "[8377]" in line for line in lines)
    assert any("It is [8377]" in line for line in lines)  # the newer session is found too
    as_json = json.loads(sagent(["sessions", "search", "8377", "--json"], env_for(fake, homes), project).stdout)
    assert {hit["session"] for hit in as_json} == {old.stem, *(h["session"] for h in as_json)}
    assert all(set(hit) == {"session", "turn", "role", "ts", "snippet", "path"} for hit in as_json)
    missing = sagent(["sessions", "search", "kubernetes"], env_for(fake, homes), project)
    assert missing.returncode == 1 and "no session of this project mentions 'kubernetes'" in missing.stdout
    assert sagent(["sessions", "search", "--limit", "0", "x"], env_for(fake, homes), project).returncode == 2


def test_the_index_reads_only_what_was_appended_and_can_be_rebuilt(tmp_path: Path) -> None:
    from sagent.agent.session import SessionLog
    from sagent.events import MessageAdded
    from sagent.types import UserMessage

    sessions = tmp_path / "sessions"
    log = SessionLog.create(tmp_path, {"provider": "p", "model": "m"}, directory=sessions)
    log.record(MessageAdded(UserMessage.of("the cache lives in redis")))
    with RecallIndex(sessions, sessions / "search.sqlite") as index:
        stats = index.update()
        assert (stats.logs, stats.read, stats.entries) == (1, 1, 1)
        assert index.update().read == 0  # nothing new: nothing read
        assert log.path is not None
        before = log.path.stat().st_size
        log.record(MessageAdded(UserMessage.of("and the queue in rabbitmq")))
        stats = index.update()
        assert (stats.read, stats.entries, stats.bytes_read) == (1, 1, log.path.stat().st_size - before)
        (hit,) = index.search("rabbitmq")
        assert (hit.turn, hit.role, hit.snippet) == (2, "user", "and the queue in [rabbitmq]")
        assert index.search('redis" OR "x') == index.search("redis x") == []  # no query syntax obeyed
        assert [h.turn for h in index.search("redis")] == [1]
    log.close()
    (sessions / "search.sqlite").write_bytes(b"not a database")  # the index is never the source of truth
    with RecallIndex(sessions, sessions / "rebuilt.sqlite") as index:
        assert index.rebuild().entries == 2
    assert query_of("a-b c") == '"a" "b" "c"'


async def test_memory_saves_a_fact_under_its_heading_and_refuses_what_it_must(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "sub").mkdir()
    (repo / "AGENTS.md").write_text("# Rules\nRun the tests with make test.")
    ctx = ToolContext(cwd=repo / "sub")
    said = await Memory().run({"fact": "the staging   port is\n8377"}, ctx)
    assert str(repo / "AGENTS.md") in said
    today = date.today().isoformat()
    assert (repo / "AGENTS.md").read_text() == (
        f"# Rules\nRun the tests with make test.\n\n## Remembered\n\n- the staging port is 8377 ({today})\n"
    )
    await Memory().run({"fact": "deploys go out on Tuesdays"}, ctx)
    assert (repo / "AGENTS.md").read_text().count("## Remembered") == 1
    await Memory().run({"fact": "I like short answers", "scope": "user"}, ctx)
    assert "I like short answers" in (tmp_path / "config" / "sagent" / "AGENTS.md").read_text()
    # Read into the next session's instructions.
    from sagent.agent.memory import memory_files, memory_prompt

    prompt = memory_prompt(memory_files(repo / "sub"))
    assert "deploys go out on Tuesdays" in prompt and "I like short answers" in prompt
    for arguments, why in (
        ({"fact": "x" * 501}, "at most 500"),
        ({"fact": " "}, "give the fact"),
        ({"fact": "a", "scope": "team"}, "scope is"),
    ):
        with pytest.raises(ToolError, match=why):
            await Memory().run(arguments, ctx)
    with pytest.raises(ToolError, match="ephemeral"):
        await Memory().run({"fact": "kept nowhere"}, ToolContext(cwd=repo, ephemeral=True))
    remember(tmp_path / "new.md", "first fact")
    assert (tmp_path / "new.md").read_text() == f"## Remembered\n\n- first fact ({today})\n"


def listing(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_ephemeral_leaves_no_file_behind(homes: dict[str, Path]) -> None:
    project = homes["project"]
    (project / ".git").mkdir()
    before = {name: listing(folder) for name, folder in homes.items()}
    steps = [
        tool_use_response([("Memory", {"fact": "ephemeral facts are kept nowhere"}), ("Recall", {"query": "port"})]),
        text_response("done"),
    ]
    with FakeAnthropic(steps) as fake:
        out = sagent(["--ephemeral", "-p", "remember this and look back"], env_for(fake, homes), project)
        bodies = fake.bodies()
    assert out.returncode == 0, out.stderr
    memory_said, recall_said = tool_results(bodies[1])
    assert "ephemeral: nothing is saved" in memory_said
    assert "no past session" in recall_said
    after = {name: listing(folder) for name, folder in homes.items()}
    assert after == before  # no session, no memory, no index, no input history
    assert not index_path(project).exists()
    env = env_for(fake, homes)
    assert sagent(["sessions", "search", "--ephemeral", "anything"], env, project).returncode == 1
    assert {name: listing(folder) for name, folder in homes.items()} == before


async def test_recall_tool_refuses_bad_arguments(tmp_path: Path) -> None:
    ctx = ToolContext(cwd=tmp_path, ephemeral=True)
    with pytest.raises(ToolError, match="give the words"):
        await Recall().run({"query": " "}, ctx)
    with pytest.raises(ToolError, match="limit"):
        await Recall().run({"query": "x", "limit": 0}, ctx)
