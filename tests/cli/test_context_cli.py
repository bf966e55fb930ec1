"""The context options from the command line: project memory, --compact-at, --before-compaction."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from sagent.agent.agent import Agent
from sagent.agent.session import SessionLog
from sagent.providers.scripted import ScriptedModel, text_turn
from tests.cli.test_headless import env_for, run_sagent
from tests.fakes.anthropic_server import FakeAnthropic, Fault, text_response


def system_of(request: dict) -> str:
    return " ".join(block["text"] for block in request["body"]["system"])


def test_agents_md_reaches_the_system_prompt_unless_no_memory(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "AGENTS.md").write_text("Always run `make check` before you answer.")
    work = repo / "src"
    work.mkdir()
    with FakeAnthropic([text_response("ok"), text_response("ok")]) as fake:
        env = env_for(fake, tmp_path)
        assert run_sagent(["-p", "hi"], env, cwd=work).returncode == 0
        assert run_sagent(["-p", "hi", "--no-memory"], env, cwd=work).returncode == 0
    with_memory, without = (system_of(r) for r in fake.requests)
    assert "Always run `make check`" in with_memory and str(repo / "AGENTS.md") in with_memory
    assert "make check" not in without and "# Project memory" not in without


def test_compact_at_is_checked(tmp_path: Path) -> None:
    env = env_for(FakeAnthropic([]), tmp_path)
    for bad, says in (("1.5", "in (0, 1]"), ("lots", "not a fraction"), ("gpt-5=2", "in (0, 1]")):
        done = run_sagent(["-p", "hi", "--compact-at", bad], env, cwd=tmp_path)
        assert done.returncode == 2 and "--compact-at" in done.stderr and says in done.stderr
    done = run_sagent(["-p", "hi", "--before-compaction"], env, cwd=tmp_path)
    assert done.returncode == 2 and "needs --continue" in done.stderr


def test_continue_before_compaction_goes_on_from_the_full_history(tmp_path: Path, monkeypatch) -> None:
    project = tmp_path / "project"
    project.mkdir()
    env_dir = tmp_path / "data"

    async def compacted_session() -> Path:
        model = ScriptedModel([text_turn("The bug is in calc.py line 2."), text_turn("## Goal\nfix calc")])
        agent = Agent(model, session=SessionLog.create(project, {}), cwd=project)
        await agent.ask("where is the bug?")
        await agent.compact()
        await agent.aclose()
        assert agent.session.path is not None
        return agent.session.path

    monkeypatch.setenv("XDG_DATA_HOME", str(env_dir))
    original = asyncio.run(compacted_session())
    with FakeAnthropic([text_response("Line 2 it is.")]) as fake:
        args = ["-p", "which line?", "--continue", "--before-compaction", "--model", "claude-sonnet-4-6"]
        done = run_sagent([*args, "--output-format", "json"], env_for(fake, tmp_path), cwd=project)
    assert done.returncode == 0, done.stderr
    assert "from before its last compaction" in done.stderr
    sent = json.dumps(fake.requests[0]["body"]["messages"])
    assert "The bug is in calc.py line 2." in sent and "compacted" not in sent
    assert json.loads(done.stdout)["session_id"] != original.stem
    assert len(list(original.parent.glob("*.jsonl"))) == 2  # the fork beside the untouched original


def test_a_too_long_prompt_is_compacted_and_stream_json_shows_the_boundary(tmp_path: Path) -> None:
    too_long = Fault(400, "invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum")
    summary = text_response("## Goal\nSummarise the log.\n## User messages\n> summarise this log")
    with FakeAnthropic([too_long, summary, text_response("The log is fine.")]) as fake:
        done = run_sagent(
            ["-p", "summarise this log", "--output-format", "stream-json"], env_for(fake, tmp_path), cwd=tmp_path
        )
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    boundary = next(r for r in records if r.get("subtype") == "compact_boundary")
    assert boundary["compact_metadata"]["trigger"] == "overflow"
    assert boundary["compact_metadata"]["messages_summarised"] == 1 and boundary["compact_metadata"]["repaired"] == []
    assert records[-1]["type"] == "result" and records[-1]["result"] == "The log is fine."
    assert len(fake.requests) == 3
