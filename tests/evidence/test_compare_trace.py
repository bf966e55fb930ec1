"""`sagent compare` and `sagent trace` read from real session logs: two coding runs (one fixes the code and
its tests pass, the other does not) compared field by field, and a fleet's timeline drawn."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from sagent.agent.agent import Agent
from sagent.agent.session import SessionLog
from sagent.cli.main import main as cli
from sagent.providers.scripted import RoutedModel, ScriptedModel, text_turn, tool_turn
from sagent.tools import AgentSend, AgentSpawn, Bash, Edit, Read, Write
from sagent.types import Usage

PRICED = "claude-sonnet-4-6"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    (root / "bin").mkdir(parents=True)
    runner = root / "bin" / "pytest"  # a stand-in test runner: passes once fixed.txt exists
    runner.write_text('#!/bin/sh\nif [ -f fixed.txt ]; then echo "1 passed"; else echo "1 failed"; exit 1; fi\n')
    runner.chmod(runner.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{root / 'bin'}{os.pathsep}{os.environ['PATH']}")
    (root / "app.py").write_text("x = 1\ny = 2\n")
    return root


async def run(project: Path, folder: Path, steps: list, model: str) -> Path:
    log = SessionLog.create(project, {"provider": "anthropic", "model": model}, directory=folder)
    agent = Agent(
        ScriptedModel(steps, name=model, provider="anthropic"),
        tools=[Read(), Write(), Edit(), Bash()],
        session=log,
        cwd=project,
    )
    async for _ in agent.run("make the tests pass"):
        pass
    await agent.aclose()
    assert log.path is not None
    return log.path


def usage(cache: int = 0) -> Usage:
    return Usage(input_tokens=1000, output_tokens=100, cache_read_tokens=cache)


async def two_runs(project: Path, tmp_path: Path) -> tuple[Path, Path]:
    a = await run(
        project,
        tmp_path / "s",
        [
            tool_turn(("Read", {"path": "app.py"}), usage=usage()),
            tool_turn(
                ("Edit", {"path": "app.py", "old_string": "x = 1", "new_string": "x = 10\nz = 3"}), usage=usage(500)
            ),
            tool_turn(("Write", {"path": "fixed.txt", "content": "yes\n"}), usage=usage(900)),
            tool_turn(("Bash", {"command": "pytest -q"}), usage=usage(900)),
            text_turn("Fixed: x is 10 and the tests pass.", usage=usage(900)),
        ],
        PRICED,
    )
    b = await run(
        project.parent / "project",
        tmp_path / "s",
        [
            tool_turn(("Bash", {"command": "rm -f fixed.txt && pytest -q"}), usage=usage()),
            text_turn("The tests fail; I could not fix them.", usage=usage()),
        ],
        "claude-haiku-4-5",
    )
    return a, b


async def test_compare_two_runs_field_by_field(project: Path, tmp_path: Path, capsys) -> None:
    a, b = await two_runs(project, tmp_path)
    assert cli(["compare", str(a), str(b), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    left, right = data["a"], data["b"]
    assert (left["session"], right["session"]) == (a.stem, b.stem)
    assert (left["model"], right["model"]) == (f"anthropic/{PRICED}", "anthropic/claude-haiku-4-5")
    assert (left["user_turns"], right["user_turns"]) == (1, 1)
    assert (left["responses"], right["responses"]) == (5, 2)
    assert (left["tool_calls"], right["tool_calls"]) == (4, 1)
    assert left["tool_calls_by_name"] == {"Bash": 1, "Edit": 1, "Read": 1, "Write": 1}
    assert left["files_changed"] == {"app.py": {"added": 2, "removed": 1}, "fixed.txt": {"added": 1, "removed": 0}}
    assert (left["lines_added"], left["lines_removed"]) == (3, 1)
    assert right["files_changed"] == {}
    assert left["tests"] == [{"command": "pytest -q", "exit": 0, "passed": True}]
    assert right["tests"] == [{"command": "rm -f fixed.txt && pytest -q", "exit": 1, "passed": False}]
    assert (left["input_tokens"], right["input_tokens"]) == (5000, 2000)
    assert (left["output_tokens"], right["output_tokens"]) == (500, 200)
    assert (left["cache_read_tokens"], right["cache_read_tokens"]) == (3200, 0)
    assert left["cost_usd"] > right["cost_usd"] > 0
    assert left["wall_s"] >= 0 and right["wall_s"] >= 0
    assert left["final_answer"] == "Fixed: x is 10 and the tests pass."
    assert data["answers_agree"] is False and 0 <= data["answer_similarity"] < 1
    assert data["files_only_in_a"] == ["app.py", "fixed.txt"] and data["files_only_in_b"] == []

    assert cli(["compare", str(a), str(b)]) == 0
    text = capsys.readouterr().out
    for row in ("tool calls", "4", "diffstat", "+3 -1", "tests passed", "1/1", "0/1", "cache reads", "3,200"):
        assert row in text
    assert "final answers: differ" in text and "A app.py +2 -1" in text
    assert cli(["compare", str(a), str(a)]) == 0
    assert "final answers: the same" in capsys.readouterr().out

    page = tmp_path / "compare.html"
    assert cli(["compare", str(a), str(b), "--html", str(page)]) == 0
    content = page.read_text()
    assert content.startswith("<!doctype html>") and "+3 -1" in content and "Fixed: x is 10" in content
    assert "http://" not in content and "https://" not in content and "<script" not in content


def test_compare_and_trace_refuse_bad_input(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli(["compare", "only-one"]) == 2
    assert "usage: sagent compare" in capsys.readouterr().err
    assert cli(["compare", "nope", "nada"]) == 2
    assert "no session 'nope'" in capsys.readouterr().err
    assert cli(["trace"]) == 2
    damaged = tmp_path / "x.jsonl"
    damaged.write_text("not json\n")
    assert cli(["trace", str(damaged)]) == 1
    assert "is damaged at line 1" in capsys.readouterr().err


async def test_trace_draws_the_fleet(tmp_path: Path, capsys) -> None:
    model = RoutedModel(
        {
            "main": [tool_turn(("AgentSpawn", {"prompt": "explore a", "label": "a"})), text_turn("done")],
            "a": [tool_turn(("AgentSpawn", {"prompt": "dig", "label": "g"})), text_turn("a done")],
            "g": [text_turn("g done")],
        },
        name=PRICED,
        provider="anthropic",
    )
    log = SessionLog.create(tmp_path, {"provider": "anthropic", "model": PRICED}, directory=tmp_path / "s")
    main = Agent(model, tools=[AgentSpawn(), AgentSend()], session=log, cwd=tmp_path)
    async for _ in main.run("map"):
        pass
    await main.aclose()
    assert log.path is not None
    assert cli(["trace", str(log.path)]) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    assert lines[0].startswith(f"trace of {log.path.stem}: 3 agents, ")
    assert any("main: tool  AgentSpawn" in line for line in lines)
    assert any("  a: model claude-sonnet-4-6  " in line and line.endswith(tuple("0123456789")) for line in lines)
    assert any("main → a: spawn" in line for line in lines) and any("  a → g: spawn" in line for line in lines)
    assert any("g → a: result" in line for line in lines) and any("a → main: result" in line for line in lines)
    assert sum(" model " in line for line in lines) == 5  # main 2, a 2, g 1

    page = tmp_path / "trace.html"
    assert cli(["trace", str(log.path), "--html", str(page)]) == 0
    content = page.read_text()
    assert "<svg" in content and content.count("<rect") == 5 + 2  # responses and tool calls
    assert content.count('marker-end="url(#arrow)"') == 4  # two spawns, two results
    assert "http://www.w3.org/2000/svg" in content  # the SVG namespace: the only address on the page
    assert "<script" not in content and "https://" not in content and "src=" not in content
