"""`--settings FILE|JSON` and `--setting-sources`: the settings a program gives on the command line (the
Claude Agent SDKs' `settings`), and which of the settings files are read (their `setting_sources`).

The `--settings` object is one more layer over the three files (user, project, local), below the flags:
it is checked and merged as a file is, and named `--settings` (or its path) in messages."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

SOURCES = ("user", "project", "local")


class FlagSettingsError(ValueError):
    """`--settings` or `--setting-sources` cannot be used."""


def setting_sources(value: str | None) -> frozenset[str] | None:
    """The scopes `--setting-sources` names (None: all of them; empty: none)."""
    if value is None:
        return None
    names = {n.strip() for n in value.split(",") if n.strip()}
    unknown = sorted(names - set(SOURCES))
    if unknown:
        raise FlagSettingsError(f"--setting-sources: unknown source(s) {', '.join(unknown)} (use {', '.join(SOURCES)})")
    return frozenset(names)


def flag_settings(
    value: str | None, cwd: Path, read: Callable[[Path], dict[str, Any] | None]
) -> tuple[Path, dict[str, Any]] | None:
    """Where `--settings` came from (its file, read with `read`, or `--settings` for JSON text) and its
    object; None without the flag. A file's path is relative to the working directory."""
    if value is None:
        return None
    text = value.strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as error:
            raise FlagSettingsError(f"--settings: not valid JSON ({getattr(error, 'msg', error)})") from None
        if not isinstance(data, dict):
            raise FlagSettingsError("--settings: must be a JSON object")
        return Path("--settings"), data
    path = cwd / Path(text).expanduser()
    data = read(path)
    if data is None:
        raise FlagSettingsError(f"--settings {value}: no such file")
    return path, data
