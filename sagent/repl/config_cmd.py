"""`/config`: the settings in the REPL. Alone it lists every key's value and where it came from, as `sagent
config` does; `/config get KEY` shows one; `/config set KEY VALUE [--scope user|project|local]` writes it to a
settings file (checked as a run checks it, and put back when refused) and, where it can, applies it now;
`/config unset KEY [--scope ...]` removes it. `OBJECT.MEMBER` names one member of a merged object
(`env.NAME`, `permissions.defaultMode`); a secret kept in `env` is never printed."""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sagent.repl.commands import CommandError, command

if TYPE_CHECKING:
    from sagent.repl.host import ReplHost
    from sagent.repl.launch import Launch

USAGE = "/config [get KEY | set KEY VALUE | unset KEY] [--scope user|project|local]"
DEFAULT_SCOPE = "local"
"""Where `/config set` writes without `--scope`: this project on this machine only (as `sagent mcp add`
does), so no other project and no teammate is changed by it."""
LIVE = (
    "model",
    "provider",
    "effort",
    "thinkingBudget",
    "maxTokens",
    "maxToolRounds",
    "maxBudgetUsd",
    "backgroundAfter",
)
"""The keys a change applies to at once; the others apply from the next start."""


@command("config", "view and change settings (alone: every key and where it came from)", USAGE)
def _config(repl: ReplHost, arg: str) -> list[str]:
    from sagent.cli.settings_files import SettingsError

    cwd = repl.agent.context.cwd
    launch = repl.state.launch
    arg, scope = _scope(arg)
    action, _, rest = arg.partition(" ")
    key, _, value = rest.strip().partition(" ")
    try:
        if not action:
            from sagent.cli.config_cmd import as_text

            lines = as_text(report(cwd, launch)).rstrip("\n").split("\n")
            return [*lines, repl.renderer.c("dim", f"/config set KEY VALUE changes one ({DEFAULT_SCOPE} by default)")]
        if action == "get" and key and not value:
            return [_get(cwd, launch, key)]
        if action == "set" and key and value.strip():
            return set_key(repl, key, value.strip(), scope or DEFAULT_SCOPE)
        if action == "unset" and key and not value:
            return unset_key(repl, key, scope or DEFAULT_SCOPE)
    except SettingsError as error:
        raise CommandError(str(error)) from None
    raise CommandError(f"usage: {USAGE}")


def _scope(arg: str) -> tuple[str, str | None]:
    """`arg` without its `--scope S` (or `--scope=S`), and S; CommandError for a scope that is none of the three."""
    from sagent.cli.settings_files import SCOPES

    found = re.search(r"(?:^|\s)--scope(?:=|\s+)(\S*)", arg)
    if found is None:
        return arg.strip(), None
    scope = found.group(1)
    if scope not in SCOPES:
        raise CommandError(f"--scope takes one of {', '.join(SCOPES)}, not {scope!r}")
    return (arg[: found.start()] + arg[found.end() :]).strip(), scope


def namespace(cwd: Path, launch: Launch | None, trusted: bool | None = None) -> argparse.Namespace:
    """The arguments a run started now would get: the settings files as they are now, under the flags the
    REPL was started with. `trusted` as `settings_files.load` takes it (True checks a project's files in
    full even where they do not apply). SettingsError for a file that cannot be used."""
    from sagent.cli.flags import build_parser
    from sagent.cli.settings_files import Sources, defaults, load

    parser = build_parser()
    loaded = load(cwd, trusted)
    values = defaults(loaded, parser)
    for dest in ("env", "permissions", "hooks", "mcp_servers", "sandbox_settings"):
        values.setdefault(dest, {})
    parser.set_defaults(**values)
    args = parser.parse_args([])
    flags = dict(launch.flags) if launch is not None else {}
    for dest, value in flags.items():
        setattr(args, dest, value)
    before = launch.sources.environ_before if launch is not None and launch.sources is not None else dict(os.environ)
    args.settings_files = Sources(loaded, frozenset(flags), before)
    return args


def report(cwd: Path, launch: Launch | None) -> dict[str, Any]:
    """`sagent config`'s report for this REPL: every key, its value and where it came from."""
    from sagent.cli.config_cmd import effective

    found = effective(namespace(cwd, launch))
    for name, item in found["env"].items():
        item["value"] = shown_env(name, item["value"])
    return found


SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.IGNORECASE)
"""An environment variable whose name says it holds a secret: its value is never printed."""


def shown_env(name: str, value: str) -> str:
    """An `env` value as /config prints it: hidden when the name says it is a secret, else as it is (with
    the secrets sagent knows redacted)."""
    from sagent.redaction import redact

    return f"(hidden, {len(value)} characters)" if SECRET_NAME.search(name) else redact(value)


def _get(cwd: Path, launch: Launch | None, key: str) -> str:
    top, member = _split(_known(key))
    if member is None:
        item = report(cwd, launch)["settings"][top]
        return f"{key} = {json.dumps(item['value'], ensure_ascii=False)}  (from {item['from']})"
    args = namespace(cwd, launch)
    from sagent.cli.settings_files import KEYS

    merged = getattr(args, KEYS[top].dest, None) or {}
    if member not in merged:
        return f"{key} is not set by a settings file"
    value = merged[member]
    if top == "env":
        value = shown_env(member, str(value))  # a key kept in a settings file's env is not printed
    return f"{key} = {json.dumps(value, ensure_ascii=False)}  (from {args.settings_files.origin(key)})"


def _split(key: str) -> tuple[str, str | None]:
    """`permissions.defaultMode` as ("permissions", "defaultMode"); a plain key with no member."""
    top, dot, member = key.partition(".")
    return (top, member) if dot else (key, None)


def _known(key: str) -> str:
    """`key` when it is a settings key, or `OBJECT.MEMBER` of one merged member by member (`env.NAME`,
    `permissions.defaultMode`, `sandbox.mode`); CommandError naming the nearest key otherwise."""
    from sagent.cli.settings_files import KEYS, MERGED

    top, member = _split(key)
    if top in KEYS and (member is None or (top in MERGED and member)):
        return key
    close = difflib.get_close_matches(top, list(KEYS), n=1)
    hint = f"; did you mean {close[0]}?" if close and member is None else "; /config lists them"
    raise CommandError(f"unknown settings key {key!r}{hint}")


def parse_value(key: str, text: str) -> Any:
    """VALUE as the key's JSON: a number, true/false, a list or an object when it reads as one; words for a
    string key (quotes optional); a comma-separated list for a key that takes names."""
    from sagent.cli.settings_files import KEYS

    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        value = text
    top, member = _split(key)
    shape = KEYS[top].shape if member is None else ("text" if top == "env" else "json")
    if shape in ("string", "text") and not isinstance(value, str):
        return text
    if shape == "names" and isinstance(value, str):
        return [] if value.strip().lower() == "none" else [n.strip() for n in value.split(",") if n.strip()]
    return value


def set_key(repl: ReplHost, key: str, text: str, scope: str) -> list[str]:
    key = _known(key)
    value = parse_value(key, text)
    top, member = _split(key)

    def change(data: dict[str, Any]) -> None:
        if member is None:
            data[top] = value
            return
        holder = data.setdefault(top, {})
        if not isinstance(holder, dict):
            raise CommandError(f'the file\'s "{top}" is not an object; fix it by hand')
        holder[member] = value

    path = _rewrite(repl, scope, change, key)
    shown = json.dumps(shown_env(member, str(value)) if top == "env" and member else value, ensure_ascii=False)
    return [f"{key} = {shown} saved in {path} ({scope})", *_effect(repl, key, path, scope)]


def unset_key(repl: ReplHost, key: str, scope: str) -> list[str]:
    key = _known(key)
    top, member = _split(key)
    removed = False

    def change(data: dict[str, Any]) -> None:
        nonlocal removed
        holder = data if member is None else data.get(top)
        name = top if member is None else member
        if isinstance(holder, dict) and name in holder:
            del holder[name]
            removed = True

    path = _rewrite(repl, scope, change)
    if not removed:
        return [f"{key} is not set in {path} ({scope}); nothing changed"]
    return [f"{key} removed from {path} ({scope}); it applies from the next start"]


def _rewrite(repl: ReplHost, scope: str, change: Any, key: str | None = None) -> Path:
    """Change the scope's settings file with `change(data)`, then check it as a run would (and `key`'s value
    in it on its own, even where another file or a flag wins over it); a change they refuse is put back and
    raised as a CommandError. The file's path."""
    from sagent.cli.settings_files import SettingsError, read_file, settings_files

    cwd = repl.agent.context.cwd
    path = dict(settings_files(cwd))[scope]
    before = path.read_bytes() if path.is_file() else None
    data = read_file(path) or {}
    change(data)
    path.parent.mkdir(parents=True, exist_ok=True)
    _replace(path, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    try:
        problem = _problem(cwd, repl.state.launch, path, key, data.get(key) if key else None)
    except SettingsError as error:
        problem = str(error)
    if problem:
        if before is None:
            path.unlink()
        else:
            _replace(path, before)
        raise CommandError(f"not saved: {problem}")
    return path


def _replace(path: Path, content: bytes) -> None:
    """Write `path` whole or not at all (a crash leaves the old file), keeping its permissions: a file kept
    private because its `env` holds a key stays private."""
    partial = path.with_name(path.name + ".partial")
    partial.write_bytes(content)
    if path.exists():
        shutil.copymode(path, partial)
    os.replace(partial, path)


def _problem(cwd: Path, launch: Launch | None, path: Path, key: str | None, value: Any) -> str | None:
    """What a run would refuse in the settings files now (a project's checked in full, trusted or not), or
    in `key`'s `value` as `path` gives it; None when all is well. SettingsError for a file it cannot use."""
    from sagent.cli.flags import build_parser, checked
    from sagent.cli.settings_files import KEYS, Loaded, Sources, defaults

    args = namespace(cwd, launch, trusted=True)
    problem = checked(args)
    if problem or key is None or key not in KEYS:
        return problem
    alone = Loaded()
    alone.values, alone.origins = {key: value}, {key: path}
    for dest, converted in defaults(alone, build_parser()).items():  # the flag's own type and choices
        setattr(args, dest, converted)
    sources: Sources = args.settings_files
    sources.loaded.origins[key] = path
    args.settings_files = Sources(sources.loaded, sources.flags - {KEYS[key].dest}, sources.environ_before)
    return checked(args)  # the ranges (`--max-tokens must be at least 1`), told as this file's key


def _effect(repl: ReplHost, key: str, path: Path, scope: str) -> list[str]:
    """What the change does now: applied, overridden by a flag or a later file, or from the next start."""
    from sagent.cli.settings_files import KEYS

    args = namespace(repl.agent.context.cwd, repl.state.launch)
    origin = args.settings_files.origin(key)
    loaded = args.settings_files.loaded
    if scope != "user" and not loaded.trusted:
        trust = f"`sagent trust {loaded.root}` to use it, or --scope user for every project"
        return [f"this folder is not trusted, so {path.name} does not apply here: {trust}"]
    if origin == "flag" and key in KEYS:
        return [
            f"--{KEYS[key].dest.replace('_', '-')} on the command line wins in this REPL; the file applies next start"
        ]
    if origin != str(path):
        return [f"{origin} sets {key} too and wins over this file"]
    if key not in LIVE:
        return ["it applies from the next start"]
    return [_apply(repl, key, getattr(args, KEYS[key].dest))]


def _apply(repl: ReplHost, key: str, value: Any) -> str:
    """Put a LIVE key's new value to work in this REPL's agent; the line saying what happened."""
    agent = repl.agent
    if key in ("model", "provider"):
        if repl.switch is None:
            return "switching is not available here; it applies from the next start"
        return repl.switch(agent, value if key == "provider" else None, value if key == "model" else None)
    if key == "maxBudgetUsd":
        from sagent.agent.spending import set_budget

        try:
            set_budget(agent, value)
        except ValueError as error:
            return f"not applied now: {error}"
    else:
        dest = {
            "effort": "effort",
            "thinkingBudget": "thinking_budget",
            "maxTokens": "max_tokens",
            "maxToolRounds": "max_tool_rounds",
            "backgroundAfter": "background_after",
        }[key]
        agent.configure(**{dest: None if value == "none" else value})
    return f"{key} is {json.dumps(value)} in this REPL now"
