"""The Skill tool: the model is told each skill's name and description from the first request, and a call
`{"skill": NAME}` brings that skill's instructions into the conversation, with where its other files are.

    from sagent.tools import Skill

    agent = Agent(model, tools=[Read(), Bash(), Skill.from_folders(Path("~/.claude/skills").expanduser())])

The tool is given its skills when it is built (`Skill(skills)`, `Skill.from_folders(...)`); the CLI builds
it from every folder in reach (`sagent.resources.skills.load_skills`). A skill's body is text: the tool
only returns it, and whatever the instructions ask for runs through the agent's other tools, under the
permission policy and the sandbox.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sagent.resources.skills import SkillFile, Skills, skills_in
from sagent.tools.base import AnyOrder, ToolContext, ToolError

MAX_DESCRIPTION_CHARS = 250
"""A skill's description is cut to this many characters in the tool's description."""
MAX_LISTING_CHARS = 8_000
"""The skills listed with their descriptions stop here (about 2,000 tokens); the rest are named only."""
MAX_NAMES_CHARS = 2_000
"""The skills named without descriptions stop here; the tool still loads any skill it has by name."""

_INTRO = (
    "Load a skill: instructions for a kind of task, written by the user, the project or a plugin. When the "
    "task matches a skill's description, call this tool with its name before doing the task, then follow the "
    "instructions it returns (they name the skill's other files, to Read when needed). Do not call it for a "
    "skill already loaded in this conversation.\n\nAvailable skills:"
)


class Skill(AnyOrder):
    """The Skill tool over a fixed set of skills (an agent without skills should not be given it)."""

    name = "Skill"
    may_background = False
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "skill": {"type": "string", "description": "the skill's name, as listed"},
            "args": {"type": "string", "description": "optional arguments for the skill"},
        },
        "required": ["skill"],
    }

    def __init__(self, skills: Iterable[SkillFile] = ()) -> None:
        self.skills: dict[str, SkillFile] = {s.name: s for s in skills}
        self.description = describe_skills(self.skills.values())

    @classmethod
    def from_folders(cls, *folders: Path | str) -> Skill:
        """The skills of `folders`, each holding `<name>/SKILL.md` folders (a later folder wins for a name).
        A skill file that cannot be used is left out; `sagent.resources.skills.skills_in` says why. `~` is
        the user's home."""
        return cls.from_skills(skills_in(*(Path(f).expanduser() for f in folders)))

    @classmethod
    def from_skills(cls, skills: Skills) -> Skill:
        """The tool over what `load_skills(cwd)` or `skills_in(...)` found."""
        return cls(skills.found.values())

    @property
    def offered(self) -> list[SkillFile]:
        """The skills the model may load (not those marked `disable-model-invocation`)."""
        return [s for s in self.skills.values() if s.model_invocable]

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        # `skill` as the schema says; `name` or `command` (older shapes of this tool) from a model that remembers them
        given = arguments.get("skill") or arguments.get("name") or arguments.get("command") or ""
        name = str(given).strip().lstrip("/")
        args = arguments.get("args") or ""
        if not isinstance(args, str):
            raise ToolError("args is text (the arguments the skill takes)")
        skill = self.skills.get(name)
        if skill is None or not skill.model_invocable:
            known = ", ".join(s.name for s in self.offered) or "none"
            what = f"no skill named {name!r}" if name else "name the skill to load"
            raise ToolError(f"{what}; the skills are: {known}")
        return skill.content(args)


def describe_skills(skills: Iterable[SkillFile]) -> str:
    """The tool's description: the skills the model may load, one line each (`name: description`, the
    description cut to MAX_DESCRIPTION_CHARS), until MAX_LISTING_CHARS; the rest by name only."""
    lines: list[str] = []
    size = 0
    rest: list[str] = []
    for skill in skills:
        if not skill.model_invocable:
            continue
        summary = skill.summary()
        if len(summary) > MAX_DESCRIPTION_CHARS:
            summary = summary[: MAX_DESCRIPTION_CHARS - 1].rstrip() + "…"
        line = f"- {skill.name}: {summary}"
        if rest or size + len(line) > MAX_LISTING_CHARS:
            rest.append(skill.name)
            continue
        lines.append(line)
        size += len(line) + 1
    text = "\n".join([_INTRO, *lines]) if lines else f"{_INTRO}\n(none)"
    if rest:
        named: list[str] = []
        left = size = 0
        for name in rest:
            if size + len(name) > MAX_NAMES_CHARS:
                left += 1
            else:
                named.append(name)
                size += len(name) + 2
        text += f"\nMore skills (load one to read what it is for): {', '.join(named)}"
        if left:
            text += f", and {left} more not listed here"
    return text
