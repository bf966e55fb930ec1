"""Sub-agents defined in files, in Claude Code's shape: a Markdown file per agent in `.claude/agents/` or
`.sagent/agents/` (of the project, of the home folder, of sagent's config folder, of an enabled plugin), or in
a subfolder of one (a README is not an agent):

    ---
    name: reviewer
    description: Reviews a change for bugs; use after editing code.
    tools: Read, Grep, Glob        # or a YAML list; absent: all of the parent's tools
    model: sonnet                  # an id, provider:model, or inherit / sonnet / opus / haiku
    permissionMode: plan           # optional; only as strict as the parent's or stricter
    isolation: worktree            # optional: its own git worktree and branch
    ---
    You are a careful reviewer. ...  (the body: its system prompt)

    from sagent.resources.agent_files import load_agent_files

    found = load_agent_files(Path.cwd())
    agent = Agent(model, tools=[*builtin_tools(fleet=False), AgentSpawn(agents=found.agents)])

A later place wins for the same name (the project's over the user's over a plugin's). A file that cannot be
used is reported by name in `broken`, never dropped silently; a project that is not trusted is not read,
and `untrusted_note` says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sagent.resources import Place, places
from sagent.resources.front_matter import ResourceError, names_field, read_markdown, text_field
from sagent.tools.base import Tool
from sagent.tools.runtime import AgentDefinition

__all__ = ["AgentFiles", "definitions_from_mapping", "load_agent_files", "read_agent_file", "with_agent_files"]


@dataclass(frozen=True, slots=True)
class AgentFiles:
    """The sub-agents defined in files in reach from a folder."""

    agents: tuple[AgentDefinition, ...]
    """The usable ones, by name (sorted), each the one of highest precedence for its name."""
    broken: tuple[tuple[str, str], ...] = ()
    """(file, what is wrong) for each file that could not be used."""
    untrusted_note: str | None = None
    """Which project folders were not read because the project is not trusted, and how to trust it."""

    def broken_lines(self) -> list[str]:
        """One line per file that cannot be used, naming it and what is wrong."""
        return [f"agent file {path}: {problem}" for path, problem in self.broken]

    def notes(self) -> list[str]:
        """One line per broken file, and the untrusted note: what to tell the user at start."""
        lines = self.broken_lines()
        if self.untrusted_note:
            lines.append(f"agent files not read: {self.untrusted_note}")
        return lines


def load_agent_files(cwd: Path | str, *, home: Path | None = None) -> AgentFiles:
    """The agent files in reach from `cwd` (see the module's docstring); `home` stands in for the user's
    home folder (tests)."""
    found = places("agents", Path(cwd), home=home)
    by_name: dict[str, AgentDefinition] = {}
    broken: list[tuple[str, str]] = []
    for place in found.found:
        here: dict[str, Path] = {}
        for path in _agent_paths(place.folder):
            try:
                agent = read_agent_file(path, place)
            except ResourceError as error:
                text = str(error)
                prefix = f"{path}: "
                broken.append((str(path), text[len(prefix) :] if text.startswith(prefix) else text))
                continue
            if agent.name in here:  # two files of one folder with one name: the first keeps it
                taken = here[agent.name].relative_to(place.folder)
                broken.append((str(path), f"the name {agent.name!r} is taken by {taken} in the same folder"))
                continue
            here[agent.name] = path
            by_name[agent.name] = agent
    agents = tuple(by_name[name] for name in sorted(by_name))
    return AgentFiles(agents, tuple(broken), found.untrusted_note())


def _agent_paths(folder: Path) -> list[Path]:
    """The Markdown files of an agents folder and of its subfolders (Claude Code reads those too; a file's
    place there does not change its name), but a folder's README."""
    return sorted(p for p in folder.rglob("*.md") if p.name.lower() != "readme.md" and p.is_file())


def read_agent_file(path: Path, place: Place | None = None) -> AgentDefinition:
    """One agent file; ResourceError naming the file and what is wrong when it cannot be used."""
    meta, body = read_markdown(path)
    if not text_field(meta, "name", path):
        meta["name"] = path.stem
    origin = place.origin if place is not None else str(path.parent)
    return _definition(meta, body, path, origin, place.namespace if place is not None else "")


def _definition(meta: dict[str, object], body: str, path: Path | str, origin: str, namespace: str) -> AgentDefinition:
    name = text_field(meta, "name", path) or ""
    if not name or any(c.isspace() for c in name) or "/" in name:
        raise ResourceError(f"{path}: `name` must be one word (letters, digits, '-'), got {name!r}")
    description = text_field(meta, "description", path)
    if description is None:
        raise ResourceError(f"{path}: `description` is missing: the model picks an agent by it")
    system = body.strip()
    if not system:
        raise ResourceError(f"{path}: the body (its system prompt) is empty")
    isolation = text_field(meta, "isolation", path)
    if isolation is not None and isolation.lower() not in ("worktree", "none"):
        raise ResourceError(f"{path}: `isolation` must be 'worktree', got {isolation!r}")
    mode = text_field(meta, "permissionMode", path)
    if mode is not None:
        from sagent.permissions.subagent import mode_named

        if mode_named(mode) is None:
            raise ResourceError(f"{path}: `permissionMode` {mode!r} is not a permission mode")
    return AgentDefinition(
        name=f"{namespace}{name}",
        description=description,
        system=system,
        tools=names_field(meta, "tools", path),
        disallowed_tools=names_field(meta, "disallowedTools", path) or (),
        model=text_field(meta, "model", path),
        permission_mode=mode,
        isolation="worktree" if isolation is not None and isolation.lower() == "worktree" else None,
        origin=origin,
        path=str(path) if isinstance(path, Path) else "",
    )


def definitions_from_mapping(given: object, origin: str) -> tuple[list[AgentDefinition], list[str]]:
    """Agents given as data rather than files, as the Claude Agent SDK's `agents` option and Claude Code's
    `--agents` JSON give them: `{name: {"description", "prompt", "tools", "disallowedTools", "model",
    "permissionMode"}}`; the usable ones, and one line for each that is not (other keys are ignored)."""
    if not isinstance(given, dict):
        return [], [f"{origin}: agents must be an object of name: definition"]
    found: list[AgentDefinition] = []
    problems: list[str] = []
    for name, fields in given.items():
        where = f"{origin} agent {name!r}"
        if not isinstance(fields, dict):
            problems.append(f"{where}: not an object")
            continue
        try:
            meta = {"name": name, **{k: v for k, v in fields.items() if k != "name"}}
            prompt = fields.get("prompt")
            if not isinstance(prompt, str):
                raise ResourceError(f"{where}: `prompt` (its system prompt) is missing")
            found.append(_definition(meta, prompt, where, origin, ""))
        except ResourceError as error:
            problems.append(str(error))
    return found, problems


def with_agent_files(tools: Sequence[Tool], agents: Sequence[AgentDefinition]) -> list[Tool]:
    """`tools` with its AgentSpawn replaced by one that can start `agents` (unchanged without an AgentSpawn
    or without agents)."""
    from sagent.tools.agents import AgentSpawn

    if not agents:
        return list(tools)
    return [AgentSpawn(agents) if isinstance(t, AgentSpawn) else t for t in tools]
