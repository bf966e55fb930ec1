"""Project resources in one place: where sagent finds the skills, agent files and command files of the user,
of the project and of the plugins the user enabled, in sagent's folder names and in the names other agents
use (`.claude/`, `.agents/`), so a team's existing folders work unchanged.

    from sagent.resources import places

    for place in places("skills", Path.cwd()).found:       # lowest precedence first
        print(place.scope, place.folder)

One discovery serves every kind, gated by folder trust in one place: a project's folders are offered only
when the user trusted the project (`sagent trust`); otherwise they are listed in `untrusted`, so a feature
can say why a file it might have used was left out. A later place wins over an earlier one for the same name:
plugins, then the user's folders, then the project's (`.sagent/` last, so sagent's own name wins).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from sagent.resources.front_matter import ResourceError, read_markdown

Kind = Literal["skills", "agents", "commands"]
Scope = Literal["plugin", "user", "project"]

PROJECT_FOLDERS: dict[Kind, tuple[str, ...]] = {
    "skills": (".agents", ".claude", ".sagent"),
    "agents": (".claude", ".sagent"),
    "commands": (".claude", ".sagent"),
}
"""The folders of a project (and of the user's home) that hold each kind, lowest precedence first."""

__all__ = ["PROJECT_FOLDERS", "Kind", "Place", "Places", "ResourceError", "Scope", "places", "read_markdown"]


@dataclass(frozen=True, slots=True)
class Place:
    """One folder that holds resources of one kind."""

    kind: Kind
    scope: Scope
    """Whose it is: a plugin's, the user's (in every project) or the project's (committed with its code)."""
    folder: Path
    origin: str
    """Where it comes from, for lists and messages: `.claude`, `~/.claude`, `sagent config`, `plugin NAME`."""
    namespace: str = ""
    """What names from here are prefixed with (`NAME:` for a plugin's), so two sources never clash."""


@dataclass(frozen=True, slots=True)
class Places:
    """The folders of one kind in reach from a working directory."""

    found: tuple[Place, ...]
    """The folders to read, lowest precedence first; folders that do not exist are left out."""
    untrusted: tuple[Path, ...]
    """The project's folders of this kind that exist but were not read: the project is not trusted."""
    root: Path
    """The project root (the nearest folder holding `.sagent/` or `.git`), for `sagent trust ROOT`."""

    def untrusted_note(self) -> str | None:
        """One line saying what was left out and how to use it; None when nothing was."""
        if not self.untrusted:
            return None
        folders = ", ".join(str(f) for f in self.untrusted)
        return f"{folders}: this folder is not trusted; `sagent trust {self.root}` to use what is there"


def places(kind: Kind, cwd: Path, *, home: Path | None = None) -> Places:
    """The folders holding `kind` in reach from `cwd`: the enabled plugins', the user's (sagent's config
    folder, then `~/.claude/`, `~/.agents/` where `kind` lives there) and, when the project is trusted,
    the project's. `home` stands in for the user's home folder (tests)."""
    from sagent.cli.settings_files import project_root
    from sagent.cli.trust import config_dir, is_trusted
    from sagent.resources.plugins import enabled_plugins

    root = project_root(cwd)
    trusted = is_trusted(root)
    home = Path.home() if home is None else home
    found: list[Place] = [
        Place(kind, "plugin", folder, f"plugin {plugin.name}", f"{plugin.name}:")
        for plugin in enabled_plugins(cwd)
        for folder in plugin.folders(kind)
    ]
    user = [(home / name / kind, f"~/{name}") for name in PROJECT_FOLDERS[kind] if name != ".sagent"]
    user.append((config_dir() / kind, "sagent config"))
    found += [Place(kind, "user", folder, origin) for folder, origin in user if folder.is_dir()]
    project = [(root / name / kind, name) for name in PROJECT_FOLDERS[kind]]
    existing = [(folder, origin) for folder, origin in project if folder.is_dir()]
    if trusted:
        found += [Place(kind, "project", folder, origin) for folder, origin in existing]
    users = {place.folder.resolve() for place in found}  # the home folder as the project: still the user's own
    untrusted = () if trusted else tuple(folder for folder, _ in existing if folder.resolve() not in users)
    return Places(tuple(_unique(found)), untrusted, root)


def _unique(found: list[Place]) -> list[Place]:
    """Each folder once (a home folder that is also the project root, a symlinked twin), at its last place."""
    seen: dict[Path, Place] = {}
    for place in found:
        key = place.folder.resolve()
        seen.pop(key, None)
        seen[key] = place
    return list(seen.values())
