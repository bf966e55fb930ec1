"""A `Permissions` from the settings files and the command line, each rule remembering where it came from.

Settings files (user, project, local; see docs/settings.md) each may hold

    "permissions": {"allow": [...], "ask": [...], "deny": [...], "defaultMode": "acceptEdits",
                    "additionalDirectories": ["../shared"], "headlessDefault": "deny"}

Rule lists add up across the files (a project's deny list cannot be undone by a user's file), then the
flags' rules join them (`--allowedTools`, `--disallowedTools`). The mode is `--permission-mode`, else the
last file's `defaultMode`, else `default`; `--add-dir` adds to the files' `additionalDirectories`.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sagent.permissions.modes import MODES, HeadlessDefault, parse_mode
from sagent.permissions.policy import Permissions
from sagent.permissions.rules import Rule, RuleError, parse_rule


class PermissionsError(ValueError):
    """Permission settings that cannot be used; one line naming the file or flag and the value."""


def split_rules(values: Iterable[str | list[str]] | None) -> list[str]:
    """Rules as given to a flag: repeated, and comma- or space-separated outside parentheses
    (`--allowedTools "Bash(git diff:*),Read" Edit`)."""
    out: list[str] = []
    flat = [v for value in values or () for v in (value if isinstance(value, list) else [value])]
    for value in flat:
        depth, current = 0, list[str]()
        for ch in value:
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth = max(depth - 1, 0)
            if ch in ", " and depth == 0:
                if "".join(current).strip():
                    out.append("".join(current).strip())
                current = []
                continue
            current.append(ch)
        if "".join(current).strip():
            out.append("".join(current).strip())
    return out


def file_permissions(args: argparse.Namespace) -> list[tuple[str, dict[str, Any]]]:
    """Each settings file's `permissions` object, with the file's path, in merge order: as the settings
    loader kept it, so a folder that is not trusted gives only its deny and ask rules (and
    `headlessDefault: "deny"`)."""
    sources = getattr(args, "settings_files", None)
    if sources is None:
        return []
    return [(str(path), section) for path, section in sources.loaded.permissions]


def from_args(args: argparse.Namespace, cwd: Path) -> Permissions:
    """The run's policy; PermissionsError for a rule, mode or folder that cannot be used."""
    root = str(cwd.resolve())
    rules: dict[str, list[Rule]] = {"allow": [], "ask": [], "deny": []}
    mode, mode_origin = "default", "default"
    headless: HeadlessDefault = "allow"
    dirs: list[tuple[str, str]] = []
    for path, section in file_permissions(args):
        for which in rules:
            for text in section.get(which) or ():
                rules[which].append(_rule(text, path, root, f'{path}: key "permissions.{which}"'))
        if isinstance(section.get("defaultMode"), str):
            mode, mode_origin = section["defaultMode"], path
            _mode(mode, f'{path}: key "permissions.defaultMode"')
        value = section.get("headlessDefault")
        if value is not None:
            if value not in ("allow", "deny"):
                raise PermissionsError(f'{path}: key "permissions.headlessDefault": must be "allow" or "deny"')
            headless = value
        extra = section.get("additionalDirectories")
        if extra is not None:
            if not isinstance(extra, list) or not all(isinstance(d, str) and d for d in extra):
                raise PermissionsError(f'{path}: key "permissions.additionalDirectories": must be a list of folders')
            dirs += [(d, path) for d in extra]
    for text in split_rules(getattr(args, "allowed_tools", None)):
        rules["allow"].append(_rule(text, "--allowedTools", root, "--allowedTools"))
    for text in split_rules(getattr(args, "disallowed_tools", None)):
        rules["deny"].append(_rule(text, "--disallowedTools", root, "--disallowedTools"))
    if getattr(args, "permission_mode", None):
        mode, mode_origin = args.permission_mode, "--permission-mode"
    if getattr(args, "refuse_unasked", False):  # --permission-mode dontAsk: what would ask is refused
        headless = "deny"
    dirs += [(d, "--add-dir") for d in getattr(args, "add_dir", None) or ()]
    roots = []
    for folder, origin in dirs:
        resolved = (Path(root) / Path(folder).expanduser()).resolve()
        if not resolved.is_dir():
            raise PermissionsError(f"{origin}: {folder} is not a folder")
        roots.append(str(resolved))
    chosen = _mode(mode, mode_origin)
    return Permissions(
        chosen,
        tuple(rules["allow"]),
        tuple(rules["ask"]),
        tuple(rules["deny"]),
        tuple(roots),
        headless,
        mode_origin,
        chosen == "bypassPermissions" or bool(getattr(args, "allow_dangerously_skip_permissions", False)),
    )


def _rule(text: object, origin: str, root: str, where: str) -> Rule:
    if not isinstance(text, str):
        raise PermissionsError(f"{where}: rules are strings")
    try:
        return parse_rule(text, origin, root)
    except RuleError as error:
        raise PermissionsError(f"{where}: {error}") from None


def _mode(text: str, where: str) -> Any:
    try:
        return parse_mode(text)
    except ValueError:
        raise PermissionsError(f"{where}: {text!r} is not a permission mode ({', '.join(MODES)})") from None
