"""Where sagent keeps its files, by the XDG Base Directory specification: every place sagent reads an XDG
variable goes through here.

The specification says a variable holding a relative path is invalid and must be ignored: a relative
`XDG_DATA_HOME=data` would otherwise put session logs (and a relative `XDG_CONFIG_HOME` would take settings)
inside whatever folder sagent runs in, a repository included. An unset, empty or relative value gives the
default under the home folder.
"""

from __future__ import annotations

import os
from pathlib import Path

DEFAULTS = {
    "XDG_CONFIG_HOME": (".config",),
    "XDG_DATA_HOME": (".local", "share"),
    "XDG_CACHE_HOME": (".cache",),
    "XDG_STATE_HOME": (".local", "state"),
}
"""The base directories and their defaults under the home folder."""


def base_dir(variable: str) -> Path:
    """The base directory `variable` (one of `DEFAULTS`) names when it holds an absolute path, else its
    default under the home folder."""
    value = os.environ.get(variable, "")
    if value and os.path.isabs(value):
        return Path(value)
    return Path.home().joinpath(*DEFAULTS[variable])


def config_home() -> Path:
    """$XDG_CONFIG_HOME, default ~/.config."""
    return base_dir("XDG_CONFIG_HOME")


def data_home() -> Path:
    """$XDG_DATA_HOME, default ~/.local/share."""
    return base_dir("XDG_DATA_HOME")


def cache_home() -> Path:
    """$XDG_CACHE_HOME, default ~/.cache."""
    return base_dir("XDG_CACHE_HOME")


def state_home() -> Path:
    """$XDG_STATE_HOME, default ~/.local/state."""
    return base_dir("XDG_STATE_HOME")


def runtime_dir() -> Path | None:
    """$XDG_RUNTIME_DIR when it holds an absolute path; None otherwise (the specification gives no default)."""
    value = os.environ.get("XDG_RUNTIME_DIR", "")
    return Path(value) if value and os.path.isabs(value) else None
