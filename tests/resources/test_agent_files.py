"""Agent files as Claude Code users write them: the front matter's forms, precedence, broken and untrusted files."""

from __future__ import annotations

from pathlib import Path

from sagent.cli.trust import config_dir, trust
from sagent.resources.agent_files import load_agent_files
from sagent.tools import AgentSpawn

REVIEWER = """---
name: reviewer
description: Reviews a change for bugs; use after editing code.
tools: Read, Grep, Glob
model: sonnet
color: red
---
You are a careful reviewer.
"""


def _project(tmp_path: Path, trusted: bool = True) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    if trusted:
        trust(root)
    return root


def _write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_the_claude_code_forms_are_read(tmp_path: Path) -> None:
    root = _project(tmp_path)
    _write(root / ".claude" / "agents", "reviewer.md", REVIEWER)
    listed = "---\nname: lister\ndescription: 'Lists: files'\ntools:\n  - LS\n  - Read\nmodel: inherit\n---\nList.\n"
    _write(root / ".claude" / "agents", "lister.md", listed)
    stem = "---\ndescription: no name given\npermissionMode: plan\nisolation: worktree\n---\nBody.\n"
    _write(root / ".sagent" / "agents", "from-stem.md", stem)
    _write(root / ".claude" / "agents" / "review", "deep.md", REVIEWER.replace("name: reviewer", "name: deep"))
    _write(root / ".claude" / "agents", "README.md", "# Our agents\n")
    found = load_agent_files(root, home=tmp_path / "home")
    by_name = {a.name: a for a in found.agents}
    assert sorted(by_name) == ["deep", "from-stem", "lister", "reviewer"]
    reviewer = by_name["reviewer"]
    assert reviewer.tools == ("Read", "Grep", "Glob")
    assert reviewer.model == "sonnet"
    assert reviewer.system == "You are a careful reviewer."
    assert reviewer.origin == ".claude"
    assert by_name["lister"].tools == ("LS", "Read")
    assert by_name["lister"].description == "Lists: files"
    assert by_name["from-stem"].permission_mode == "plan"
    assert by_name["from-stem"].isolation == "worktree"
    assert by_name["from-stem"].tools is None  # absent: all of the parent's
    assert found.broken == () and found.untrusted_note is None


def test_the_project_wins_over_the_user_and_broken_files_are_named(tmp_path: Path) -> None:
    root = _project(tmp_path)
    home = tmp_path / "home"
    _write(home / ".claude" / "agents", "reviewer.md", REVIEWER.replace("careful", "user's"))
    _write(config_dir() / "agents", "helper.md", "---\nname: helper\ndescription: helps\n---\nHelp.\n")
    _write(root / ".sagent" / "agents", "reviewer.md", REVIEWER.replace("careful", "project's"))
    _write(root / ".claude" / "agents", "nodesc.md", "---\nname: nodesc\n---\nBody.\n")
    _write(root / ".claude" / "agents", "badmode.md", "---\ndescription: x\npermissionMode: yolo\n---\nBody.\n")
    _write(root / ".claude" / "agents", "open.md", "---\ndescription: x\nBody.\n")
    _write(root / ".sagent" / "agents", "twin.md", REVIEWER.replace("careful", "twin's"))
    found = load_agent_files(root, home=home)
    by_name = {a.name: a for a in found.agents}
    assert sorted(by_name) == ["helper", "reviewer"]
    assert "project's" in by_name["reviewer"].system
    problems = {Path(path).name: problem for path, problem in found.broken}
    assert set(problems) == {"nodesc.md", "badmode.md", "open.md", "twin.md"}
    assert "'reviewer' is taken by reviewer.md" in problems["twin.md"]
    assert "description" in problems["nodesc.md"]
    assert "yolo" in problems["badmode.md"]
    assert any("nodesc.md" in line for line in found.notes())


def test_an_untrusted_project_is_not_read_and_says_how_to_trust_it(tmp_path: Path) -> None:
    root = _project(tmp_path, trusted=False)
    _write(root / ".claude" / "agents", "reviewer.md", REVIEWER)
    found = load_agent_files(root, home=tmp_path / "home")
    assert found.agents == ()
    assert found.untrusted_note is not None and f"sagent trust {root}" in found.untrusted_note
    assert any("not trusted" in line for line in found.notes())


def test_agentspawn_lists_the_agents_only_when_there_are_some(tmp_path: Path) -> None:
    root = _project(tmp_path)
    _write(root / ".claude" / "agents", "reviewer.md", REVIEWER)
    plain, offered = AgentSpawn(), AgentSpawn(load_agent_files(root, home=tmp_path / "home").agents)
    assert "agent" not in plain.input_schema["properties"]
    assert "reviewer" not in plain.description
    assert "- reviewer: Reviews a change for bugs" in offered.description
    assert offered.input_schema["properties"]["agent"]["enum"] == ["reviewer"]
    assert offered.description.startswith(plain.description)
    assert AgentSpawn.description == plain.description  # the class is left as it was


def test_agents_given_as_data_and_what_is_wrong_with_them() -> None:
    from sagent.resources.agent_files import definitions_from_mapping

    given = {
        "ok": {"description": "fine", "prompt": "Do it.", "tools": ["Read"], "model": "haiku", "skills": ["x"]},
        "noprompt": {"description": "no prompt"},
        "nodesc": {"prompt": "Do it."},
        "two words": {"description": "d", "prompt": "p"},
        "notobject": "text",
    }
    found, problems = definitions_from_mapping(given, "--agents")
    assert [(a.name, a.tools, a.model, a.system) for a in found] == [("ok", ("Read",), "haiku", "Do it.")]
    assert len(problems) == 4 and all(p.startswith("--agents agent") for p in problems)
    assert definitions_from_mapping([1], "--agents") == ([], ["--agents: agents must be an object of name: definition"])
