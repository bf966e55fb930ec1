"""The Skill tool against the scripted model: names and descriptions from the first request and never a
body; a call brings the body, the folder and its other files; wrong names say which exist; hundreds of
skills stay within the listing's cap."""

from __future__ import annotations

from pathlib import Path

from sagent.agent.agent import Agent
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.tools import Skill, tools_by_name
from sagent.tools.base import ToolContext
from sagent.tools.skill import MAX_LISTING_CHARS, MAX_NAMES_CHARS
from sagent.types import ToolResult


def write_skill(folder: Path, name: str, description: str, body: str, **files: str) -> None:
    (folder / name).mkdir(parents=True, exist_ok=True)
    (folder / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}\n")
    for relative, text in files.items():
        path = folder / name / relative.replace("__", "/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


async def test_the_model_sees_names_first_and_a_call_brings_the_body_and_the_files(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    write_skill(
        skills,
        "changelog",
        "Write the changelog. Use for releases.",
        "SECRET-BODY: group commits by $ARGUMENTS.",
        scripts__collect_py="print('x')",
        references__style_md="# style",
    )
    write_skill(skills, "other", "Another skill.", "OTHER-BODY")
    (skills / "changelog" / ".hidden").write_text("x")
    model = ScriptedModel(
        [
            tool_turn(("Skill", {"skill": "changelog", "args": "area"})),
            tool_turn(("Skill", {"skill": "nope"})),
            text_turn("done"),
        ]
    )
    agent = Agent(model, tools=[Skill.from_folders(skills)], cwd=tmp_path)
    [e async for e in agent.run("write the changelog")]
    await agent.aclose()
    first = model.requests[0]
    spec = next(t for t in first.tools if t.name == "Skill")
    assert "- changelog: Write the changelog. Use for releases." in spec.description
    assert "- other: Another skill." in spec.description
    assert "SECRET-BODY" not in str(first) and "OTHER-BODY" not in str(first)
    loaded, unknown = [m for m in agent.history if isinstance(m, ToolResult)]
    assert not loaded.is_error and "SECRET-BODY: group commits by area." in loaded.text
    assert str(skills / "changelog") in loaded.text
    assert "scripts/collect_py" in loaded.text and "references/style_md" in loaded.text
    assert ".hidden" not in loaded.text and "OTHER-BODY" not in loaded.text
    assert unknown.is_error and "no skill named 'nope'" in unknown.text and "changelog, other" in unknown.text


async def test_arguments_without_a_placeholder_are_appended_and_model_only_flags_hold(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    write_skill(skills, "fmt", "Format code.", "Format the files.")
    (skills / "manual").mkdir()
    manual = "---\ndescription: Only by hand.\ndisable-model-invocation: true\n---\nx"
    (skills / "manual" / "SKILL.md").write_text(manual)
    tool = Skill.from_folders(skills)
    assert "manual" not in tool.description and [s.name for s in tool.offered] == ["fmt"]
    assert tool.skills["fmt"].content("src/").endswith("Format the files.\n\nARGUMENTS: src/")
    ctx = ToolContext(cwd=tmp_path)
    assert "Format the files." in await tool.run({"command": "/fmt"}, ctx)  # an older shape of the call
    model = ScriptedModel([tool_turn(("Skill", {"skill": "manual"})), text_turn("ok")])
    agent = Agent(model, tools=[tool], cwd=tmp_path)
    [e async for e in agent.run("go")]
    await agent.aclose()
    (result,) = [m for m in agent.history if isinstance(m, ToolResult)]
    assert result.is_error and "the skills are: fmt" in result.text


def test_hundreds_of_skills_stay_within_the_cap_and_each_can_still_be_loaded(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    for i in range(400):
        write_skill(skills, f"skill-{i:03d}", "A long description. " * 40, f"BODY {i}")
    tool = Skill.from_folders(skills)
    assert len(tool.description) < MAX_LISTING_CHARS + MAX_NAMES_CHARS + 1_000
    assert "- skill-000: A long description." in tool.description and "…" in tool.description
    assert "more not listed here" in tool.description
    assert "BODY 399" in tool.skills["skill-399"].content()


def test_the_tool_made_by_name_has_no_skills_until_given_some() -> None:
    (tool,) = tools_by_name(["Skill"])
    assert isinstance(tool, Skill) and tool.offered == []


def test_arguments_are_put_in_as_claude_code_does(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    (skills / "migrate").mkdir(parents=True)
    (skills / "migrate" / "SKILL.md").write_text(
        "---\ndescription: Migrate a component.\narguments: [component, source]\n---\n"
        "Move $0 from $1 ($ARGUMENTS[1]); $component from $source; awk '{print $2}' stays? Dir ${CLAUDE_SKILL_DIR}\n"
    )
    migrate = Skill.from_folders(skills).skills["migrate"]
    text = migrate.content('"my widget" React')
    assert "Move my widget from React (React); my widget from React; awk '{print }' stays?" in text
    assert f"Dir {skills / 'migrate'}" in text and "ARGUMENTS:" not in text
    plain = migrate.content()  # no arguments: a body's $1 stays as written
    assert "Move $0 from $1" in plain and "awk '{print $2}'" in plain
