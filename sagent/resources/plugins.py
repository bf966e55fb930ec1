"""Plugins in Claude Code's layout: a folder with `.claude-plugin/plugin.json` and, beside it, `commands/`,
`agents/`, `skills/`, `hooks/hooks.json` and `.mcp.json`. This module says which plugins are enabled for a
working directory and where each keeps each kind of resource."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sagent.resources import Kind


@dataclass(frozen=True, slots=True)
class Plugin:
    """One installed plugin."""

    name: str
    root: Path
    """The plugin's folder (the one holding `.claude-plugin/`)."""

    def folders(self, kind: Kind) -> list[Path]:
        """The plugin's folders holding `kind`, those that exist."""
        folder = self.root / kind
        return [folder] if folder.is_dir() else []


def enabled_plugins(cwd: Path) -> list[Plugin]:
    """The plugins enabled for `cwd`, in the order their resources are read."""
    return []
