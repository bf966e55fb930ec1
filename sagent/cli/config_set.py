"""One key of a settings file changed: `sagent config set|unset` and the REPL's `/config set|unset` both
come here, so a key is read, a value parsed, checked and written the same way from either.

A KEY is a settings key (`model`) or `OBJECT.MEMBER`, one member of an object merged key by key across the
files (`permissions.defaultMode`, `env.NAME`, `sandbox.network`). A change is checked before anything is
written: the key's value on its own (its shape, its flag's type and choices and ranges), then the settings
files as a run would read them with the change in place (a project's checked in full, trusted or not).
A change they refuse is a SettingsError starting "not saved:" and the file is untouched. Only a settings
configuration that was already refused before the change may still be refused after it (a file with two
bad keys is mended one key at a time); `Change.still` says so. `write_settings` is the one writer.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import shutil
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from sagent.cli.settings_files import (
    KEYS,
    MERGED,
    SCOPES,
    Loaded,
    SettingsError,
    check_value,
    nearest_key,
    read_file,
    settings_files,
)

DEFAULT_SCOPE = "user"
"""Where a change goes without `--scope`, from the CLI and the REPL alike: the user's file, so a setting
asked for (`set model ...`) holds in every project; `--scope project` or `--scope local` keeps it to one."""

SET_USAGE = """\
usage: sagent config set KEY VALUE [--scope user|project|local]
       sagent config unset KEY [--scope user|project|local]

Writes KEY in one settings file, keeping its other keys: the user's file by default
($XDG_CONFIG_HOME/sagent/settings.json), or the project's .sagent/settings.json (project) or
.sagent/settings.local.json (local). KEY is a settings key, or OBJECT.MEMBER for one member of env,
permissions, hooks, mcpServers or sandbox (permissions.defaultMode, env.LOG_LEVEL). VALUE is read as
JSON when it is JSON (100, true, '["Read"]', '{"allow": ["Bash(git diff:*)"]}'), else as the text given:
`sagent config set model gpt-5.4`; a key that takes names takes Read,Grep too.
The value is checked on its own and with every settings file as a run reads them; a key no setting has,
or a change a run would refuse, is an error (exit 2) and nothing is written. Keys: docs/settings.md.
"""


class Change(NamedTuple):
    """What `set_key` or `unset_key` did."""

    key: str
    scope: str
    path: Path
    value: Any
    """The value written (None for an unset)."""
    changed: bool
    """False when an unset found nothing to remove (and nothing was written)."""
    warnings: list[str]
    """What the key's check warns of (an unknown `permissions` member, say)."""
    still: str | None
    """A problem the settings had before the change and still have after it; None when they are sound."""


def split_key(key: str) -> tuple[str, str | None]:
    """`permissions.defaultMode` as ("permissions", "defaultMode"); a plain key with no member."""
    top, dot, member = key.partition(".")
    return (top, member) if dot else (key, None)


def known_key(key: str) -> str:
    """`key` when it is a settings key or `OBJECT.MEMBER` of a merged one; SettingsError naming the nearest
    key otherwise (`modle`: did you mean "model"?)."""
    top, member = split_key(key)
    if top in KEYS and (member is None or (top in MERGED and member)):
        return key
    if top in MERGED and member is not None:
        raise SettingsError(f'unknown settings key "{key}": name one member after the dot ({top}.NAME), or {top}')
    if top in KEYS and member is not None:
        objects = ", ".join(sorted(MERGED))
        raise SettingsError(f'unknown settings key "{key}": OBJECT.MEMBER names a member of one of {objects}')
    near = nearest_key(top, KEYS)
    if near is not None and member is not None:
        near = f"{near}.{member}" if near in MERGED else None
    hint = f'; did you mean "{near}"?' if near else ""
    raise SettingsError(f'unknown settings key "{key}"{hint} (the keys: docs/settings.md)')


def parse_value(key: str, text: str) -> Any:
    """VALUE as the key's JSON: a number, true/false, a list or an object when it reads as one; the text as
    given for a key that takes text (quotes optional); a comma-separated list (or `none`) for a key that
    takes names; always text for an `env` member."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested past what Python parses: the text as given
        value = text
    top, member = split_key(key)
    shape = KEYS[top].shape if member is None else ("text" if top == "env" else "json")
    if shape in ("string", "text") and not isinstance(value, str):
        return text
    if shape == "names" and isinstance(value, str):
        return [] if value.strip().lower() == "none" else [n.strip() for n in value.split(",") if n.strip()]
    return value


def scope_path(cwd: Path, scope: str) -> Path:
    """The settings file of `scope` (one of SCOPES) for a run in `cwd`."""
    if scope not in SCOPES:
        raise SettingsError(f"--scope takes one of {', '.join(SCOPES)}, not {scope!r}")
    return dict(settings_files(cwd))[scope]


def set_key(cwd: Path, scope: str, key: str, text: str) -> Change:
    """Write KEY = VALUE (`text`, parsed by `parse_value`) in `scope`'s file, once checked; SettingsError
    for an unknown key or a refused change (nothing written then)."""
    key = known_key(key)
    value = parse_value(key, text)
    top, member = split_key(key)

    def edit(data: dict[str, Any]) -> bool:
        if member is None:
            data[top] = value
            return True
        holder = data.setdefault(top, {})
        if not isinstance(holder, dict):
            raise SettingsError(f'not saved: the file\'s "{top}" is not an object; fix it by hand')
        holder[member] = value
        return True

    return _save(cwd, scope, key, value, edit, setting=True)


def unset_key(cwd: Path, scope: str, key: str) -> Change:
    """Remove KEY from `scope`'s file, once the settings without it are checked; `changed` is False when
    the file did not have it."""
    key = known_key(key)
    top, member = split_key(key)

    def edit(data: dict[str, Any]) -> bool:
        holder = data if member is None else data.get(top)
        name = top if member is None else member
        if isinstance(holder, dict) and name in holder:
            del holder[name]
            if member is not None and not holder:
                del data[top]  # `env.NAME` was its only member: no `"env": {}` left behind
            return True
        return False

    return _save(cwd, scope, key, None, edit, setting=False)


def _save(cwd: Path, scope: str, key: str, value: Any, edit: Callable[[dict[str, Any]], bool], setting: bool) -> Change:
    """`edit` made to a copy of `scope`'s file, checked (the value on its own when `setting`, then the
    whole settings), then written."""
    path = scope_path(cwd, scope)
    top, _ = split_key(key)
    try:
        data = copy.deepcopy(read_file(path) or {})
    except SettingsError as error:
        raise SettingsError(f"not saved: {error}") from None
    warnings: list[str] = []
    if not edit(data):
        return Change(key, scope, path, value, False, warnings, None)
    if setting:
        problem = _alone(cwd, path, top, data[top], warnings)
        if problem:
            raise SettingsError(f"not saved: {problem}")
    still = _whole(cwd, {path: data})
    if still is not None and _whole(cwd, {}) is None:  # the change is what a run would refuse
        raise SettingsError(f"not saved: {still}")
    try:
        write_settings(path, data)
    except OSError as error:
        raise SettingsError(f"not saved: {path}: cannot write it ({error.strerror or error})") from None
    return Change(key, scope, path, value, True, warnings, still)


def _alone(cwd: Path, path: Path, name: str, value: Any, warnings: list[str]) -> str | None:
    """What a run in `cwd` would refuse in `name`'s `value` as the file at `path` gives it, with no other
    setting: its shape, its flag's type and choices, its range (`--max-tokens must be at least 1`), a
    permission rule or mode, a sandbox member."""
    from sagent.cli.flags import build_parser
    from sagent.cli.settings_files import Sources, defaults

    parser = build_parser()
    try:
        value = check_value(path, name, value, warnings, parser)
        alone = Loaded()
        alone.values, alone.origins = {name: value}, {name: path}
        if name in MERGED:
            alone.origins.update({f"{name}.{member}": path for member in value})
        if name == "permissions":
            alone.permissions = [(path, value)]
        parser.set_defaults(**defaults(alone, parser))
    except SettingsError as error:
        return str(error)
    args = parser.parse_args([])
    args.settings_files = Sources(alone, frozenset(), os.environ.copy())
    return _checked(args, cwd)


def _whole(cwd: Path, pending: Mapping[Path, dict[str, Any]]) -> str | None:
    """What a run in `cwd` would refuse in the settings files, `pending` read in place of the files it
    names; a project's files are checked in full, trusted or not. None when a run would take them."""
    try:
        return _checked(namespace(cwd, trusted=True, pending=pending), cwd)
    except SettingsError as error:
        return str(error)


def _checked(args: argparse.Namespace, cwd: Path) -> str | None:
    """What a run in `cwd` would refuse in `args` before it starts: the flags' checks, the permission
    rules and mode, the sandbox's members, the MCP servers' entries. Not a variable unset now (`apiKeyEnv`,
    a server's `${VAR}`): it may be exported later, or in another shell, and a run says so when it is still
    missing; nor whether the sandbox can start on this machine."""
    from sagent.cli.flags import checked
    from sagent.cli.permission_settings import PermissionsError, from_args
    from sagent.cli.sandbox_settings import SandboxSettingsError, sandbox_policy
    from sagent.mcp.config import McpConfigError, parse_servers

    args.api_key_env = None
    problem = checked(args)
    if problem is None:
        origins = {k.removeprefix("mcpServers."): str(v) for k, v in args.settings_files.loaded.origins.items()}
        try:
            from_args(args, cwd)
            sandbox_policy(args)
            parse_servers(dict(getattr(args, "mcp_servers", None) or {}), "settings", [], origins, expand_vars=False)
        except (PermissionsError, SandboxSettingsError, McpConfigError) as error:
            problem = str(error)
    return problem


def namespace(
    cwd: Path,
    flags: Mapping[str, Any] | None = None,
    environ_before: Mapping[str, str] | None = None,
    trusted: bool | None = None,
    pending: Mapping[Path, dict[str, Any]] | None = None,
) -> argparse.Namespace:
    """The arguments a run started in `cwd` now would get: the settings files as they are (`pending` in
    place of the files it names), under `flags` (argparse destinations a command line gave). `trusted` as
    `settings_files.load` takes it. SettingsError for a file that cannot be used."""
    from sagent.cli.flags import build_parser
    from sagent.cli.settings_files import Sources, defaults, load

    parser = build_parser()
    loaded = load(cwd, trusted, pending)
    values = defaults(loaded, parser)
    for dest in ("env", "permissions", "hooks", "mcp_servers", "sandbox_settings"):
        values.setdefault(dest, {})
    parser.set_defaults(**values)
    args = parser.parse_args([])
    for dest, value in (flags or {}).items():
        setattr(args, dest, value)
    before = dict(os.environ) if environ_before is None else environ_before
    args.settings_files = Sources(loaded, frozenset(flags or {}), before)
    return args


def write_settings(path: Path, data: dict[str, Any]) -> None:
    """The one writer of a settings file: `data` written whole or not at all (a temporary file renamed over
    the old one, so a crash leaves the old file), keeping the file's permissions (a file kept private
    because its `env` holds a key stays private); through a symbolic link to the file it names. A
    `settings.local.json` in a git repository goes into its exclude list (`sagent.cli.git_exclude`)."""
    if path.is_symlink():
        path = path.resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        partial.write_bytes((json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
        if path.exists():
            shutil.copymode(path, partial)
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    if path.name == "settings.local.json":  # this machine's file: git is told not to offer it for a commit
        from sagent.cli.git_exclude import exclude_from_git

        exclude_from_git(path)


SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.IGNORECASE)
"""An environment variable whose name says it holds a secret: its value is never printed."""


def shown_env(name: str, value: str) -> str:
    """An `env` value as it is printed: hidden when the name says it is a secret, else as it is (with the
    secrets sagent knows redacted)."""
    from sagent.redaction import redact

    return f"(hidden, {len(value)} characters)" if SECRET_NAME.search(name) else redact(value)


def shown_value(key: str, value: Any) -> str:
    """`key`'s value as JSON for a person to read: an `env` secret hidden (a whole `env` object's too)."""
    top, member = split_key(key)
    if top == "env" and member:
        value = shown_env(member, str(value))
    elif top == "env" and isinstance(value, dict):
        value = {name: shown_env(name, str(inner)) for name, inner in value.items()}
    return json.dumps(value, ensure_ascii=False)


def said(change: Change) -> str:
    """The line that says what a change did."""
    where = f"{change.path} ({change.scope})"
    if not change.changed:
        return f"{change.key} is not set in {where}; nothing changed"
    if change.value is None:
        return f"{change.key} removed from {where}"
    return f"{change.key} = {shown_value(change.key, change.value)} saved in {where}"


def still_line(change: Change) -> str | None:
    """The warning for settings a run refuses before and after the change; None when they are sound."""
    return None if change.still is None else f"saved, but a run still refuses the settings: {change.still}"


def set_command(argv: list[str], unset: bool = False) -> int:
    """`sagent config set|unset`: 0 after writing (or finding nothing to unset); 2 for bad usage, an
    unknown key, a refused change or a file that cannot be used."""
    if any(arg in ("-h", "--help") for arg in argv):
        sys.stdout.write(SET_USAGE)
        return 0
    scope, words = _scope(argv)
    if scope is None or len(words) != (1 if unset else 2) or any(w.startswith("--") for w in words[:1]):
        sys.stderr.write(SET_USAGE)
        return 2
    cwd = Path.cwd()
    try:
        change = unset_key(cwd, scope, words[0]) if unset else set_key(cwd, scope, words[0], words[1])
    except SettingsError as error:
        sys.stderr.write(f"sagent: error: {error}\n")
        return 2
    for warning in change.warnings + [line for line in [still_line(change)] if line]:
        sys.stderr.write(f"sagent: warning: {warning}\n")
    print(said(change))
    if scope != "user" and change.changed and not unset:
        from sagent.cli.settings_files import project_root
        from sagent.cli.trust import is_trusted

        root = project_root(cwd)
        if not is_trusted(root):
            print(f"{root} is not trusted, so this file does not apply yet: `sagent trust {root}` (docs/settings.md)")
    return 0


def _scope(argv: list[str]) -> tuple[str | None, list[str]]:
    scope, words, rest = DEFAULT_SCOPE, [], list(argv)
    while rest:
        word = rest.pop(0)
        if word == "--scope" or word.startswith("--scope="):
            scope = word.partition("=")[2] if "=" in word else (rest.pop(0) if rest else "")
            if scope not in SCOPES:
                return None, []
        else:
            words.append(word)
    return scope, words
