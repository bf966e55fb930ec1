"""A plugin folder in Claude Code's layout, written for a test, and `sagent` run as a user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def write_plugin(folder: Path, name: str = "plug", **manifest: Any) -> Path:
    """A plugin `name` at `folder`: plugin.json (with `manifest`'s fields) and one command, commands/hi.md."""
    (folder / ".claude-plugin").mkdir(parents=True, exist_ok=True)
    (folder / ".claude-plugin" / "plugin.json").write_text(
        json.dumps({"name": name, "version": "1.2.0", "description": "a test plugin", **manifest})
    )
    (folder / "commands").mkdir(exist_ok=True)
    (folder / "commands" / "hi.md").write_text("---\ndescription: greet\n---\nGreet $ARGUMENTS from the plugin.\n")
    return folder


def user_env(tmp_path: Path, **more: str) -> dict[str, str]:
    """The environment of a user whose config, data and home folders are the test's own."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {
        **os.environ,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        **more,
    }


def sagent(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sagent.cli.main", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        timeout=180,
    )


def installed(tmp_path: Path) -> list[str]:
    """The entries of the plugins folder (a staging folder left behind shows up here too)."""
    folder = tmp_path / "config" / "sagent" / "plugins"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
