"""Replay: a coding session run on the Anthropic fake server, replayed on the OpenAI fake server in a git
worktree at the commit it started from, with tools live and with recorded results served; the original
working tree is left exactly as it was."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response
from tests.fakes.openai_responses_server import FakeResponses, responses_text, responses_tools


def sagent(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sagent.cli.main", *args],
        capture_output=True, text=True, env=env, cwd=cwd, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def git(project: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=project,
        check=True,
        capture_output=True,
    )


def tree_of(root: Path) -> dict[str, bytes]:
    """Every file of the working tree (the repository's own folder aside) and its bytes."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.parts
    }


@pytest.fixture
def original(tmp_path: Path) -> tuple[Path, dict[str, str], Path]:
    """A repository, and a session in it that read an untracked file and rewrote app.py."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text("x = 1\n")
    git(project, "init", "-q")
    git(project, "add", "app.py")
    git(project, "commit", "-q", "-m", "start")
    (project / "notes.txt").write_text("the plan: raise x\n")  # never committed
    (tmp_path / "scratch").mkdir()
    env = {
        **os.environ,
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "HOME": str(tmp_path),
        "TMPDIR": str(tmp_path / "scratch"),  # where replays make their scratch trees
        "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests-0001",
        "OPENAI_API_KEY": "sk-openai-fake-key-for-tests-0002",
    }
    steps = [
        tool_use_response([("Bash", {"command": "cat notes.txt"})]),
        tool_use_response([("Read", {"path": "app.py"})]),
        tool_use_response([("Write", {"path": "app.py", "content": "x = 2\n"})]),
        text_response("x is now 2."),
    ]
    with FakeAnthropic(steps) as fake:
        out = sagent(
            ["-p", "raise x as the notes say", "--max-tokens", "1500"], {**env, "ANTHROPIC_BASE_URL": fake.url}, project
        )
    assert out.returncode == 0, out.stderr
    (log,) = (tmp_path / "data" / "sagent" / "sessions").glob("*/*.jsonl")
    header = json.loads(log.read_bytes().splitlines()[0])
    assert len(header["git_commit"]) == 40 and header["git_root"] == str(project.resolve())
    return project, env, log


def replay_steps() -> list:
    return [
        responses_tools([("Bash", {"command": "cat notes.txt"})]),
        responses_tools([("Read", {"path": "app.py"})]),
        responses_tools([("Write", {"path": "app.py", "content": "x = 3\n"})]),
        responses_text("x is now 3."),
    ]


def tool_outputs(body: dict) -> list[str]:
    return [item["output"] for item in body["input"] if item.get("type") == "function_call_output"]


@pytest.mark.parametrize("mode", ["live", "recorded"])
def test_replay_on_another_provider_in_a_worktree_at_the_start(mode: str, original) -> None:
    project, env, log = original
    before = tree_of(project)
    assert before["app.py"] == b"x = 2\n"
    effort = ["--effort", "low"] if mode == "recorded" else []  # instead of the recorded one
    with FakeResponses(replay_steps()) as fake:
        out = sagent(
            ["replay", log.stem, "--provider", "openai", "--model", "gpt-5.4", "--tools", mode, "--base-url", fake.url,
             *effort],
            env,
            project,
        )  # fmt: skip
        bodies = fake.bodies()
    assert out.returncode == 0, out.stderr + out.stdout
    assert tree_of(project) == before  # the original working tree is untouched

    first = out.stdout.splitlines()[0]
    assert first.startswith(f"replayed {log.stem} (1 turn) on openai/gpt-5.4: session ")
    new = log.parent / f"{first.rsplit(' ', 1)[1]}.jsonl"
    header = json.loads(new.read_bytes().splitlines()[0])
    assert header["replay_of"] == log.stem and header["replay_tools"] == mode
    assert header["replay_tree"] == "git worktree" and header["provider"] == "openai"
    scratch = Path(header["cwd"])
    assert scratch.is_relative_to(Path(env["TMPDIR"]).resolve())
    assert scratch != project.resolve() and (scratch / "app.py").read_text() == "x = 3\n"
    assert not (scratch / "notes.txt").exists()  # the tree as committed: the untracked file is not there

    # The same prompt went to the other model; the tree it saw was the one at the start (x = 1).
    user = [i for i in bodies[0]["input"] if i.get("role") == "user"]
    assert user[0]["content"][0]["text"] == "raise x as the notes say"
    cat, read, wrote = tool_outputs(bodies[3])
    assert "x = 1" in read and "x = 2" not in read and "app.py" in wrote
    if mode == "recorded":
        assert cat == "the plan: raise x\n" or cat.strip() == "the plan: raise x"  # served from the original
        assert "2 recorded results served" in out.stdout  # cat and Read; the Write differs, so it ran
    else:
        assert "No such file" in cat  # run for real in the scratch tree
    # Sent with the sampling settings the original recorded (its response length), the effort as asked.
    recorded = next(json.loads(line)["manifest"] for line in log.read_bytes().splitlines() if b'"manifest"' in line)
    assert recorded["max_tokens"] == 1500 and all(b["max_output_tokens"] == 1500 for b in bodies)
    assert "sampling as recorded: max tokens 1500" in out.stdout
    if mode == "recorded":
        assert "instead: effort low" in out.stdout and all(b["reasoning"]["effort"] == "low" for b in bodies)
    compared = sagent(["compare", str(log), str(new), "--json"], env, project)
    data = json.loads(compared.stdout)
    assert data["a"]["model"].startswith("anthropic/") and data["b"]["model"] == "openai/gpt-5.4"
    assert data["b"]["files_changed"] == {"app.py": {"added": 1, "removed": 0}}


def test_replay_refuses_bad_input(original) -> None:
    project, env, log = original
    assert sagent(["replay", log.stem], env, project).returncode == 2  # no model named
    out = sagent(["replay", "nope", "--model", "gpt-5.4"], env, project)
    assert out.returncode == 2 and "no session 'nope'" in out.stderr
    out = sagent(["replay", log.stem, "--model", "gpt-5.4", "--tools", "maybe"], env, project)
    assert out.returncode == 2 and "usage: sagent replay" in out.stderr
    for bad in (["--effort", "loud"], ["--max-tokens", "0"]):
        out = sagent(["replay", log.stem, "--model", "gpt-5.4", *bad], env, project)
        assert out.returncode == 2 and "usage: sagent replay" in out.stderr, bad
