"""`/skills`: the skills in reach (name, where each comes from, description), and the ones that cannot be used
(a broken SKILL.md, a project folder not trusted) with why. `/NAME [args]` loads one (sagent.skill_commands)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sagent.repl.commands import COMMANDS, columns, command

if TYPE_CHECKING:
    from sagent.repl.host import ReplHost

MAX_SHOWN_DESCRIPTION = 100
"""A description longer than this is cut in the list (the model is told more: docs/skills.md)."""


@command("skills", "the skills in reach; /NAME loads one", "/skills")
def _skills(repl: ReplHost, arg: str) -> list[str]:
    from sagent.resources.skills import load_skills

    c = repl.renderer.c
    skills = load_skills(repl.agent.context.cwd)
    if not (skills.found or skills.problems or skills.untrusted):
        return [
            "no skills: a skill is a folder with a SKILL.md in .sagent/skills/, .claude/skills/ or .agents/skills/ "
            "(of the project or your home), or in sagent's config folder (docs/skills.md)"
        ]
    rows = []
    for name, skill in skills.found.items():
        description = skill.summary()
        if len(description) > MAX_SHOWN_DESCRIPTION:
            description = description[: MAX_SHOWN_DESCRIPTION - 1] + "…"
        notes = []
        if name in COMMANDS:
            notes.append(f"/{name} runs the built-in command; the model can still load it")
        if not skill.model_invocable:
            notes.append("only you load it: the model is not told of it")
        if not skill.user_invocable:
            notes.append("for the model only")
        if skill.allowed_tools:
            notes.append(f"allowed-tools, not a grant: {', '.join(skill.allowed_tools)}")
        where = f"{skill.scope}, {skill.origin}" if skill.origin else skill.scope
        text = c("dim", f"[{where}] ") + description + (c("yellow", f" ({'; '.join(notes)})") if notes else "")
        rows.append((f"/{name}" + (f" {skill.argument_hint}" if skill.argument_hint else ""), text))
    rows += [(f"/{name}", c("yellow", f"cannot be used: {problem}")) for name, problem in skills.problems.items()]
    rows += [(f"/{name}", c("yellow", "not read: the project folder is not trusted")) for name in skills.untrusted]
    lines = [c("bold", "skills") + c("dim", " (the model sees each name and description; /NAME loads one for you)")]
    lines += columns(rows)
    if skills.untrusted_note:
        lines.append(c("yellow", skills.untrusted_note))
    return lines


def banner_lines(repl: ReplHost) -> list[str]:
    """What the REPL says at start about skills that cannot be used (nothing when all can)."""
    from sagent.resources.skills import load_skills

    problems = load_skills(repl.agent.context.cwd).problems
    if not problems:
        return []
    names = ", ".join(problems)
    return [repl.renderer.c("yellow", f"skills that cannot be used: {names} (/skills says why)")]
