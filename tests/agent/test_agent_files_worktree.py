"""`isolation: worktree`: each sub-agent works in its own git worktree on its own branch (real git in a
temporary folder); a clean one is removed at the end, one with changes is kept and reported."""

from __future__ import annotations

import subprocess
from pathlib import Path

from sagent.agent.agent import Agent
from sagent.events import Result, ToolFinished
from sagent.providers.scripted import RoutedModel, text_turn, tool_turn
from sagent.tools import AgentSpawn, Read, Write
from sagent.tools.runtime import AgentDefinition

ISOLATED = AgentDefinition("isolated", "works apart", "You work apart.", isolation="worktree")


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    (repo / "src" / "a.py").write_text("A = 1\n")
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")
    return repo


async def _spawn_texts(main: Agent) -> list[str]:
    events = [e async for e in main.run("go")]
    assert isinstance(events[-1], Result)
    return [e.result.text for e in events if isinstance(e, ToolFinished) and e.result.name == "AgentSpawn"]


async def test_parallel_sub_agents_edit_their_own_worktrees_and_the_changed_one_is_kept(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    spawn = [("AgentSpawn", {"agent": "isolated", "prompt": "edit a.py", "label": label}) for label in ("one", "two")]
    model = RoutedModel(
        {
            "main": [tool_turn(*spawn), text_turn("done")],
            # one writes the same relative file the other only reads: in its own tree
            "one": [
                tool_turn(("Read", {"path": "a.py"})),
                tool_turn(("Write", {"path": "a.py", "content": "A = 2\n"})),
                text_turn("changed a.py"),
            ],
            "two": [tool_turn(("Read", {"path": "a.py"})), text_turn("read a.py")],
        }
    )
    main = Agent(model, tools=[Read(), Write(), AgentSpawn([ISOLATED])], cwd=repo / "src")
    texts = await _spawn_texts(main)
    one = next(t for t in texts if t.startswith("one "))
    two = next(t for t in texts if t.startswith("two "))
    kept = repo / ".sagent" / "worktrees" / "one"
    assert "on branch sagent/one" in one and f"work kept on branch sagent/one in worktree {kept}" in one
    assert (kept / "src" / "a.py").read_text() == "A = 2\n"
    assert (repo / "src" / "a.py").read_text() == "A = 1\n"  # the user's tree is untouched
    assert "removed: no changes were made" in two
    assert not (repo / ".sagent" / "worktrees" / "two").exists()
    branches = _git(repo, "branch", "--list", "sagent/*")
    assert "sagent/one" in branches and "sagent/two" not in branches
    # The read in two saw the committed file from its own tree; git does not list the worktrees' folder.
    assert "A = 1" in model.requests("two")[-1].messages[-1].text
    assert ".sagent" not in _git(repo, "status", "--porcelain")
    await main.aclose()


async def test_outside_a_git_repository_the_spawn_says_so(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    model = RoutedModel({"main": [tool_turn(("AgentSpawn", {"agent": "isolated", "prompt": "x"})), text_turn("ok")]})
    main = Agent(model, tools=[Read(), AgentSpawn([ISOLATED])], cwd=folder)
    (text,) = await _spawn_texts(main)
    assert "isolation: worktree needs a git repository" in text and str(folder) in text
    await main.aclose()


async def test_a_persistent_sub_agent_keeps_its_worktree_until_it_stops(tmp_path: Path) -> None:
    from sagent.tools.runtime import SpawnRequest

    repo = _repo(tmp_path)
    model = RoutedModel({"main": [], "keeper": [text_turn("ready")]})
    main = Agent(model, tools=[Read(), AgentSpawn([ISOLATED])], cwd=repo)
    child = main.spawn(SpawnRequest("wait", label="keeper", persistent=True, agent=ISOLATED))
    assert child.worktree is not None and child.worktree.branch == "sagent/keeper"
    await child.wait()
    assert child.worktree.path.is_dir() and child.agent.context.cwd == child.worktree.path.resolve()
    await child.stop()
    assert "removed: no changes were made" in child.worktree_line and not child.worktree.path.exists()
    await main.aclose()


async def test_a_plugin_agents_name_makes_a_valid_branch(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    plugin = AgentDefinition("tools:isolated", "works apart", "You work apart.", isolation="worktree")
    model = RoutedModel(
        {
            "main": [tool_turn(("AgentSpawn", {"agent": plugin.name, "prompt": "x"})), text_turn("ok")],
            "tools:isolated": [text_turn("done")],
        }
    )
    main = Agent(model, tools=[Read(), AgentSpawn([plugin])], cwd=repo)
    (text,) = await _spawn_texts(main)
    assert "on branch sagent/tools-isolated" in text and "removed: no changes were made" in text
    await main.aclose()
