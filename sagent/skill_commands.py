"""Skills as slash commands: `/name args` loads the skill `name` for the user, in the REPL, headless
(`sagent -p "/name args"`), over ACP and for the Claude Agent SDK, through the same path as the custom
commands (`sagent.custom_commands`): every surface asks `load_prompt_commands(cwd)` instead of
`load_commands(cwd)` and expands what it finds the same way.

The prompt sent is what the Skill tool returns to the model (`SkillFile.content`), the arguments put in or
appended as a last `ARGUMENTS:` line. A skill wins over a custom command of the same name (as in Claude
Code); a built-in command wins over both. A skill's `allowed-tools` and `model` do not apply to its run:
loading a skill changes no permission (docs/security.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sagent.custom_commands import CustomCommand, load_commands
from sagent.resources.skills import SkillFile, Skills, load_skills


@dataclass(frozen=True, slots=True)
class SkillCommand(CustomCommand):
    """A skill offered as `/name`: expanding it gives the skill's content."""

    skill: SkillFile | None = None

    def expand(self, arguments: str) -> str:
        assert self.skill is not None
        return self.skill.content(arguments)

    def summary(self) -> str:
        return f"{self.description} (skill, {self.skill.origin if self.skill else self.scope})"


def skill_command(skill: SkillFile) -> SkillCommand:
    """`skill` as the slash command `/NAME`."""
    return SkillCommand(
        skill.name,
        skill.path,
        "project" if skill.scope == "project" else "user",
        skill.body,
        description=skill.summary(),
        argument_hint=skill.argument_hint,
        skill=skill,
    )


def load_prompt_commands(cwd: Path, skills: Skills | None = None) -> tuple[dict[str, CustomCommand], dict[str, str]]:
    """The custom commands and the skills in reach from `cwd` as slash commands, by name (a skill wins over a
    command of the same name), and by name what cannot be used, each with a line saying why: a broken
    command or skill, a skill in a folder not trusted, a skill only the model may load."""
    from sagent.cli.settings_files import project_root

    found, problems = load_commands(cwd)
    skills = load_skills(cwd) if skills is None else skills
    for name, path in skills.untrusted.items():
        if name not in found:
            trust = f"`sagent trust {project_root(cwd)}` to use it"
            problems.setdefault(name, f"{path}: this folder is not trusted; {trust}")
    for name, problem in skills.problems.items():
        if name not in found:
            problems[name] = problem
    for name, skill in skills.found.items():
        if skill.user_invocable:
            found[name] = skill_command(skill)
            problems.pop(name, None)
        elif name not in found:
            problems[name] = f"the skill {name} is for the model only (user-invocable: false)"
    return dict(sorted(found.items())), dict(sorted(problems.items()))
