"""What the REPL was started with beyond its agent: the settings files read, the flags given, where the key
comes from. /status and /config read it; a REPL built without it (a test, the library) reads the settings
files again instead."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sagent.cli.settings_files import Sources


@dataclass(frozen=True)
class Launch:
    """The command line's part of a REPL: read once at start, never changed."""

    sources: Sources | None = None
    """The settings files read at start (with their trust) and the destinations the command line set."""
    flags: Mapping[str, Any] = field(default_factory=dict)
    """The values the command line gave, by argparse destination (`model`, `max_tokens`, ...)."""
    api_key_env: str | None = None
    """`--api-key-env` (or the settings' `apiKeyEnv`): the variable the key is read from."""
    base_url: str | None = None
    """`--base-url` (or the settings' `baseUrl`)."""


def launch_of(args: argparse.Namespace) -> Launch:
    """The launch a parsed command line describes."""
    sources: Sources | None = getattr(args, "settings_files", None)
    given = sources.flags if sources is not None else frozenset()
    flags = {dest: getattr(args, dest) for dest in given if hasattr(args, dest)}
    return Launch(sources, flags, getattr(args, "api_key_env", None), getattr(args, "base_url", None))
