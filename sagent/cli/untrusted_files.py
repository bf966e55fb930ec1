"""What a project keeps back while its folder is not trusted, beyond its settings files: the files only a
trusted folder's runs read, named so the REPL's trust question and the headless notice can say what was
left out (`sagent.cli.settings_files.load` adds them to what it skipped)."""

from __future__ import annotations

from pathlib import Path

from sagent.cli.settings_read import SettingsError, read_file


def untrusted_extras(root: Path) -> list[Path]:
    """The project's files beyond its settings that only a trusted folder's runs read: `.mcp.json`,
    the command folders that hold a command, the agent-file folders that hold an agent, each skills folder
    holding a skill, and Claude Code's settings files when they enable plugins."""
    found = []
    if (root / ".mcp.json").exists():
        found.append(root / ".mcp.json")
    for claude in (root / ".claude" / "settings.json", root / ".claude" / "settings.local.json"):
        try:
            if "enabledPlugins" in (read_file(claude) or {}):
                found.append(claude)
        except SettingsError:
            pass  # read by nothing in an untrusted folder, so nothing to say
    for name in (".claude", ".sagent"):  # the command folders (sagent.resources.PROJECT_FOLDERS)
        commands = root / name / "commands"
        try:
            if commands.is_dir() and next(commands.rglob("*.md"), None) is not None:
                found.append(commands)
        except OSError:
            found.append(commands)
    found += untrusted_agent_files(root)
    for name in (".agents", ".claude", ".sagent"):  # the skills folders (sagent.resources.PROJECT_FOLDERS)
        skills = root / name / "skills"
        if name != ".sagent" and root.resolve() == Path.home().resolve():
            continue  # run in the home folder: ~/.claude/skills are the user's own, read in every project
        try:
            if skills.is_dir() and next(skills.glob("*/SKILL.md"), None) is not None:
                found.append(skills)
        except OSError:
            found.append(skills)
    return found


def untrusted_agent_files(root: Path) -> list[Path]:
    """The project's agent-file folders (`.claude/agents/`, `.sagent/agents/`) that hold an agent."""
    folders = [root / name / "agents" for name in (".claude", ".sagent")]  # sagent.resources.PROJECT_FOLDERS
    try:
        return [f for f in folders if f.is_dir() and next(f.rglob("*.md"), None) is not None]
    except OSError:
        return folders
