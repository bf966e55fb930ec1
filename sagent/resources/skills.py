"""Skills in the SKILL.md format Claude Code, Codex, Gemini CLI, opencode and pi share: a folder holding a
`SKILL.md` (YAML front matter, then Markdown instructions) and, when it needs them, `scripts/`,
`references/` and `assets/`.

    .sagent/skills/release-notes/SKILL.md        (also .claude/skills/, .agents/skills/; project and user)
    ---
    name: release-notes
    description: Write release notes from the git log. Use when the user asks for release notes.
    allowed-tools: Bash(git log:*) Read
    ---
    Read the log since the last tag, group the changes, ...

`name` defaults to the folder's name; `description` is required (a skill without one is reported, not
offered: the model picks a skill by its description). Other keys the format allows (`license`,
`metadata`, `compatibility`, `argument-hint`, `disable-model-invocation`, `user-invocable`, ...) are read
where sagent uses them and ignored otherwise. A skill is text: nothing in its folder runs except through the
agent's tools, under the permission policy and the sandbox (docs/skills.md, docs/security.md).

This module reads files and builds values only; `load_skills(cwd)` finds the folders through
`sagent.resources.places`, so folder trust decides which project skills are read.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sagent.resources.front_matter import ResourceError, names_field, read_markdown, text_field

if TYPE_CHECKING:
    from sagent.resources import Place, Scope

SKILL_FILE = "SKILL.md"
MAX_NAME_CHARS = 64
"""The format's limit on a name (lowercase letters, digits and hyphens there; see `valid_name`)."""
MAX_LISTED_FILES = 100
"""A skill's other files named in what a Skill call returns; a folder with more says how many were left out."""
MAX_WALKED_FILES = 5_000
"""Files counted in a skill's folder before the count stops (a skill with a dependency tree inside it)."""
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_ARGUMENT = re.compile(r"\$ARGUMENTS\[(\d+)\]")
_POSITIONAL = re.compile(r"\$(\d+)")


@dataclass(frozen=True, slots=True)
class SkillFile:
    """One skill, read: what the model is told of it (name, description) and what a call brings (body)."""

    name: str
    """The skill's name (`plugin:name` for a plugin's skill)."""
    description: str
    body: str
    """The Markdown instructions after the front matter."""
    path: Path
    """The SKILL.md file; its folder holds the skill's other files."""
    scope: Scope = "user"
    """Whose it is: `plugin`, `user` or `project`."""
    origin: str = ""
    """Where it was found, for lists: `.claude`, `~/.claude`, `sagent config`, `plugin NAME`."""
    allowed_tools: tuple[str, ...] | None = None
    """The skill's `allowed-tools`, shown to the user; never a grant (docs/security.md)."""
    argument_hint: str = ""
    argument_names: tuple[str, ...] = ()
    """The front matter's `arguments`: names for the arguments in order, each put in for `$NAME`."""
    model_invocable: bool = True
    """False when `disable-model-invocation: true`: only the user runs it (`/name`), the model is not told."""
    user_invocable: bool = True
    """False when `user-invocable: false`: the model may load it, `/name` does not."""

    @property
    def folder(self) -> Path:
        return self.path.parent

    def other_files(self, limit: int = MAX_LISTED_FILES) -> tuple[list[str], int]:
        """The skill folder's other files (relative paths, sorted, hidden ones and SKILL.md left out), at most
        `limit`, and how many more there are. Symlinked folders are not followed."""
        files: list[str] = []
        more = 0
        for top, dirs, names in os.walk(self.folder):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(names):
                relative = os.path.relpath(os.path.join(top, name), self.folder)
                if name.startswith(".") or relative == SKILL_FILE:
                    continue
                if len(files) < limit:
                    files.append(relative)
                else:
                    more += 1
            if len(files) + more >= MAX_WALKED_FILES:
                break
        return files, more

    def content(self, arguments: str = "") -> str:
        """What loading the skill puts in the conversation (the Skill tool's result, and the prompt `/name`
        sends): where its folder is, the instructions with the arguments put in, and its other files, to Read
        when needed. As in Claude Code: `$ARGUMENTS` is all of them; `$ARGUMENTS[0]`, `$0`, `$1`, ... one
        each (zero-based, quotes group words) and `$NAME` for each name the front matter's `arguments`
        lists, these only when arguments were given, so a body's shell `$1` stays as written otherwise;
        `${CLAUDE_SKILL_DIR}` is the skill's folder. Arguments a body names nowhere are appended as a last
        `ARGUMENTS:` line."""
        arguments = arguments.strip()
        body = self.body.strip()
        uses = "$ARGUMENTS" in body
        if arguments:
            words = _words(arguments)

            def word(index: int) -> str:
                return words[index] if index < len(words) else ""

            before = body
            body = _ARGUMENT.sub(lambda m: word(int(m.group(1))), body)
            body = _POSITIONAL.sub(lambda m: word(int(m.group(1))), body)
            for index, name in enumerate(self.argument_names):
                body = re.sub(rf"\${re.escape(name)}\b", word(index).replace("\\", "\\\\"), body)
            uses = uses or body != before
        body = body.replace("$ARGUMENTS", arguments)
        for variable in ("${CLAUDE_SKILL_DIR}", "${SAGENT_SKILL_DIR}"):
            body = body.replace(variable, str(self.folder))
        parts = [f'Skill "{self.name}". Base directory for this skill: {self.folder}', body]
        if arguments and not uses:
            parts.append(f"ARGUMENTS: {arguments}")
        if self.allowed_tools:
            listed = ", ".join(self.allowed_tools)
            parts.append(f"(The skill lists allowed-tools: {listed}. Not pre-approved: each call is checked as usual.)")
        files, more = self.other_files()
        if files:
            listed = "\n".join(f"- {f}" for f in files) + (f"\n- ... and {more} more" if more else "")
            parts.append(
                "The skill's other files (relative to its base directory; Read them when the instructions "
                f"call for them, run a script only through the usual tools):\n{listed}"
            )
        return "\n\n".join(p for p in parts if p)

    def summary(self) -> str:
        """The description on one line."""
        return " ".join(self.description.split())


@dataclass(frozen=True, slots=True)
class Skills:
    """The skills in reach from a working directory, and what could not be offered."""

    found: dict[str, SkillFile] = field(default_factory=dict)
    """The skills offered, by name (sorted)."""
    problems: dict[str, str] = field(default_factory=dict)
    """By name, the skill folders that could not be used, each with one line saying why."""
    untrusted: dict[str, Path] = field(default_factory=dict)
    """By name, the skills of a project folder not trusted (not read), with their SKILL.md."""
    untrusted_note: str | None = None
    """One line saying which folders were left out and how to trust them; None when none were."""


def _words(arguments: str) -> list[str]:
    """The arguments one by one: quotes group words, as in a shell; an unclosed quote leaves plain words."""
    import shlex

    try:
        return shlex.split(arguments)
    except ValueError:
        return arguments.split()


def valid_name(name: str) -> bool:
    """Whether `name` can be a skill's name: the format asks for lowercase letters, digits and hyphens (at
    most 64 characters); sagent also takes capitals, `_` and `.`, as Claude Code does, but never a space, a
    slash or a colon (a colon marks a plugin's skill)."""
    return len(name) <= MAX_NAME_CHARS and _NAME.match(name) is not None


def read_skill(path: Path, namespace: str = "", scope: Scope = "user", origin: str = "") -> SkillFile:
    """Read one SKILL.md; ResourceError naming the file when it cannot be offered."""
    meta, body = read_markdown(path)
    name = text_field(meta, "name", path) or path.parent.name
    if not valid_name(name):
        raise ResourceError(
            f"{path}: the name {name!r} is not a skill name (letters, digits, '-', '_' or '.', "
            f"at most {MAX_NAME_CHARS} characters)"
        )
    description = text_field(meta, "description", path)
    if not description:
        raise ResourceError(f"{path}: no `description` in the front matter: the model picks a skill by it")
    return SkillFile(
        name=f"{namespace}{name}",
        description=description,
        body=body,
        path=path,
        scope=scope,
        origin=origin,
        allowed_tools=names_field(meta, "allowed-tools", path),
        argument_hint=text_field(meta, "argument-hint", path) or "",
        argument_names=names_field(meta, "arguments", path) or (),
        model_invocable=not _flag(meta, "disable-model-invocation", False, path),
        user_invocable=_flag(meta, "user-invocable", True, path),
    )


def _flag(meta: dict[str, Any], key: str, default: bool, path: Path) -> bool:
    value = text_field(meta, key, path)
    if value is None:
        return default
    if value.lower() in ("true", "yes", "on", "1"):
        return True
    if value.lower() in ("false", "no", "off", "0"):
        return False
    raise ResourceError(f"{path}: `{key}` must be true or false, not {value!r}")


def skill_files(folder: Path) -> list[tuple[str, Path]]:
    """The `<name>/SKILL.md` files directly inside `folder` (a folder without one is not a skill), with the
    folder's name, sorted; hidden folders are left out."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return []
    found = []
    for entry in entries:
        if entry.name.startswith(".") or not entry.is_dir():
            continue
        path = Path(entry.path) / SKILL_FILE
        if os.path.lexists(path):
            found.append((entry.name, path))
    return found


def read_skills(places: Iterable[Place]) -> Skills:
    """The skills of `places` (lowest precedence first: a later place's skill of the same name wins, broken
    or not, so what counts is the file the user would expect)."""
    found: dict[str, SkillFile] = {}
    problems: dict[str, str] = {}
    for place in places:
        for folder_name, path in skill_files(place.folder):
            try:
                skill = read_skill(path, place.namespace, place.scope, place.origin)
            except ResourceError as error:
                name = f"{place.namespace}{folder_name}"
                found.pop(name, None)
                problems[name] = str(error)
                continue
            found[skill.name] = skill
            problems.pop(skill.name, None)
    return Skills(dict(sorted(found.items())), dict(sorted(problems.items())))


def skills_in(*folders: Path, scope: Scope = "user") -> Skills:
    """The skills of `folders` (each holding `<name>/SKILL.md` folders; a later folder wins for a name),
    read without any trust check: for a library user who chose the folders."""
    from sagent.resources import Place

    return read_skills(Place("skills", scope, Path(f), str(f)) for f in folders)


def load_skills(cwd: Path, *, home: Path | None = None) -> Skills:
    """The skills in reach from `cwd`: the enabled plugins' (named `plugin:name`), the user's and, when the
    project is trusted, the project's (see `sagent.resources.places`); a project's skills in a folder not
    trusted are named in `untrusted`, not read. `home` stands in for the user's home folder (tests)."""
    from dataclasses import replace

    from sagent.resources import places

    where = places("skills", cwd, home=home)
    skills = read_skills(where.found)
    untrusted = {
        name: path
        for folder in where.untrusted
        for name, path in skill_files(folder)
        if name not in skills.found and valid_name(name)
    }
    return replace(skills, untrusted=dict(sorted(untrusted.items())), untrusted_note=where.untrusted_note())
