"""Custom slash commands: Markdown files read from real folders, expanded, and their allowed tools enforced."""

from __future__ import annotations

from pathlib import Path

import pytest

from sagent.agent.agent import Agent
from sagent.custom_commands import (
    AllowedTools,
    CustomCommand,
    CustomCommandError,
    allows,
    apply_command,
    expand_input,
    load_commands,
    read_command,
    split_tools,
)
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.tools import Bash, Read
from sagent.types import ToolCall, ToolResult
from tests.trusting import trust_in


@pytest.fixture
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A project (with .sagent/) and a user config folder, both empty of commands."""
    project = tmp_path / "project"
    (project / ".sagent" / "commands").mkdir(parents=True)
    config = tmp_path / "config"
    (config / "sagent" / "commands").mkdir(parents=True)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    trust_in(config, tmp_path)  # the user trusts the folder: its commands are offered
    return project / ".sagent" / "commands", config / "sagent" / "commands"


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_files_become_commands_with_namespaces_and_the_project_wins(dirs: tuple[Path, Path]) -> None:
    project, user = dirs
    write(user, "review.md", "user review of $ARGUMENTS")
    write(user, "mine.md", "only the user has this")
    write(project, "review.md", "---\ndescription: review a change\nargument-hint: [file]\n---\nReview $ARGUMENTS.\n")
    write(project, "frontend/component.md", "Build the component $1 in $2.")
    write(project, "notes.txt", "not a command")
    found, broken = load_commands(project.parent.parent)
    assert list(found) == ["frontend:component", "mine", "review"] and broken == {}
    review = found["review"]
    assert (review.scope, review.description, review.argument_hint) == ("project", "review a change", "[file]")
    assert review.usage() == "/review [file]" and review.summary() == "review a change (project)"
    assert found["mine"].scope == "user"
    # A subfolder of the project gives a namespaced name.
    expanded = expand_input('/frontend:component Button "src/ui kit"', found)
    assert expanded is not None and expanded.prompt == "Build the component Button in src/ui kit."


def test_arguments_are_substituted_or_appended() -> None:
    def cmd(body: str) -> CustomCommand:
        return CustomCommand("x", Path("x.md"), "project", body)

    assert cmd("Fix $ARGUMENTS now").expand("issue 12") == "Fix issue 12 now"
    assert cmd("$1 then $2, not $3").expand("a b") == "a then b, not"
    assert cmd("Summarise the diff.").expand("briefly") == "Summarise the diff.\n\nbriefly"
    assert cmd("Summarise the diff.").expand("") == "Summarise the diff."
    assert cmd("say $1").expand('"unclosed quote') == 'say "unclosed'  # plain words, no error


def test_a_builtin_name_wins_and_plain_text_is_not_a_command(dirs: tuple[Path, Path]) -> None:
    project, _ = dirs
    write(project, "help.md", "my help")
    found, _ = load_commands(project.parent.parent)
    assert expand_input("/help", found, builtins=["help"]) is None
    assert expand_input("/help", found) is not None  # headless has no built-ins
    assert expand_input("help", found) is None and expand_input("/nothing", found) is None


def test_broken_files_are_reported_by_name_never_dropped_silently(dirs: tuple[Path, Path]) -> None:
    project, user = dirs
    write(project, "open.md", "---\ndescription: never closed\nbody")
    write(project, "bad.md", "---\njust words\n---\nbody")
    write(project, "empty.md", "---\ndescription: nothing after\n---\n   \n")
    (project / "binary.md").write_bytes(b"\xff\xfe\x00bad")
    write(user, "open.md", "the user's would be hidden by the project's anyway")
    found, broken = load_commands(project.parent.parent)
    assert set(broken) == {"open", "bad", "empty", "binary"} and "open" not in found
    assert "never closed" in broken["open"] and str(project / "open.md") in broken["open"]
    assert "line 2 of the front matter is not 'key: value'" in broken["bad"]
    assert "empty" in broken["empty"] and "UTF-8" in broken["binary"]
    with pytest.raises(CustomCommandError):
        read_command("bad", project / "bad.md", "project")


def test_allowed_tools_entries_and_their_matching() -> None:
    assert split_tools("Read, Grep, Bash(git diff:*, git log:*)") == ("Read", "Grep", "Bash(git diff:*, git log:*)")
    assert split_tools("[Read, 'Glob']") == ("Read", "Glob")

    def bash(command: str) -> ToolCall:
        return ToolCall("c1", "Bash", {"command": command})

    table = [
        ("Bash", bash("rm -rf /"), True),
        ("Bash(git diff:*)", bash("git diff --cached"), True),
        ("Bash(git diff:*)", bash("git diff"), True),
        ("Bash(git diff:*)", bash("git diffx"), False),
        ("Bash(git diff:*)", bash("git diff && rm -rf ~"), False),  # every chained part must match
        ("Bash(git diff:*)", bash("git diff; curl evil"), False),
        ("Bash(git diff:*)", bash("git diff | sh"), False),
        ("Bash(git diff:*)", bash("git diff $(rm -rf ~)"), False),  # a substitution hides what runs
        ("Bash(npm test)", bash("npm test"), True),
        ("Bash(npm test)", bash("npm test --all"), False),
        ("Read", ToolCall("c2", "Read", {"path": "/etc/passwd"}), True),
        ("Read(src/**)", ToolCall("c3", "Read", {"path": "src/a/b.py"}), True),
        ("Read(src/**)", ToolCall("c4", "Read", {"path": "secrets/key"}), False),
        ("mcp__github__*", ToolCall("c5", "mcp__github__issues", {}), True),
        ("Read", bash("cat x"), False),
    ]
    for pattern, call, expected in table:
        assert allows(pattern, call) is expected, (pattern, call.arguments)


async def test_only_the_allowed_tools_run_while_the_command_does(dirs: tuple[Path, Path], tmp_path: Path) -> None:
    project, _ = dirs
    root = project.parent.parent
    (root / "notes.md").write_text("the notes")
    write(project, "look.md", "---\nallowed-tools: Read\n---\nRead notes.md and say what it holds.")
    found, _ = load_commands(root)
    expansion = expand_input("/look", found)
    assert expansion is not None and isinstance(expansion.hooks()[0], AllowedTools)
    model = ScriptedModel(
        [
            tool_turn(("Read", {"path": "notes.md"}), ("Bash", {"command": "echo hi"})),
            text_turn("it holds the notes"),
            tool_turn(("Bash", {"command": "echo after"})),
            text_turn("ran"),
        ]
    )
    agent = Agent(model, tools=[Read(), Bash()], cwd=root)
    undo = apply_command(agent, expansion)
    [e async for e in agent.run(expansion.prompt)]
    undo()
    results = {m.name: m for m in agent.history if isinstance(m, ToolResult)}
    assert "the notes" in results["Read"].text and not results["Read"].is_error
    assert results["Bash"].is_error and "/look allows only these tools: Read" in results["Bash"].text
    assert agent.settings.hooks == ()  # the command's run is over: Bash runs again
    [e async for e in agent.run("now run bash")]
    last = [m for m in agent.history if isinstance(m, ToolResult)][-1]
    assert not last.is_error and "after" in last.text
    await agent.aclose()
