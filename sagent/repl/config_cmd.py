"""`/config`: the settings in the REPL. Alone it lists every key's value and where it came from, as `sagent
config` does; `/config get KEY` shows one; `/config set KEY VALUE [--scope user|project|local]` writes it to a
settings file and `/config unset KEY [--scope ...]` removes it, both through sagent/cli/config_set.py (the
key, the value, the checks and the write are `sagent config set`'s), and here a change is applied now where
it can be. `OBJECT.MEMBER` names one member of a merged object (`env.NAME`, `permissions.defaultMode`); a
secret kept in `env` is never printed."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sagent.repl.commands import CommandError, command

if TYPE_CHECKING:
    from sagent.cli.config_set import Change
    from sagent.repl.host import ReplHost
    from sagent.repl.launch import Launch

USAGE = "/config [get KEY | set KEY VALUE | unset KEY] [--scope user|project|local]"
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
    from sagent.cli.config_set import DEFAULT_SCOPE
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


def namespace(cwd: Path, launch: Launch | None) -> argparse.Namespace:
    """The arguments a run started now would get: the settings files as they are now, under the flags the
    REPL was started with. SettingsError for a file that cannot be used."""
    from sagent.cli import config_set

    flags = dict(launch.flags) if launch is not None else {}
    before = launch.sources.environ_before if launch is not None and launch.sources is not None else None
    return config_set.namespace(cwd, flags, before)


def report(cwd: Path, launch: Launch | None) -> dict[str, Any]:
    """`sagent config`'s report for this REPL: every key, its value and where it came from."""
    from sagent.cli.config_cmd import effective
    from sagent.cli.config_set import shown_env

    found = effective(namespace(cwd, launch))
    for name, item in found["env"].items():
        item["value"] = shown_env(name, item["value"])
    return found


def _get(cwd: Path, launch: Launch | None, key: str) -> str:
    from sagent.cli.config_set import known_key, shown_value, split_key
    from sagent.cli.settings_files import KEYS

    top, member = split_key(known_key(key))
    if member is None:
        item = report(cwd, launch)["settings"][top]
        return f"{key} = {json.dumps(item['value'], ensure_ascii=False)}  (from {item['from']})"
    args = namespace(cwd, launch)
    merged = getattr(args, KEYS[top].dest, None) or {}
    if member not in merged:
        return f"{key} is not set by a settings file"
    return f"{key} = {shown_value(key, merged[member])}  (from {args.settings_files.origin(key)})"


def set_key(repl: ReplHost, key: str, text: str, scope: str) -> list[str]:
    """`/config set`: the key written by sagent.cli.config_set, then put to work here where it can."""
    from sagent.cli import config_set
    from sagent.cli.settings_files import SettingsError

    change = config_set.set_key(repl.agent.context.cwd, scope, key, text)
    try:
        effect = _effect(repl, change.key, change.path, scope)
    except SettingsError:  # the settings were refused before this change and still are (`_notes` says why)
        effect = ["it applies once the settings are mended"]
    return [config_set.said(change), *_notes(repl, change), *effect]


def unset_key(repl: ReplHost, key: str, scope: str) -> list[str]:
    """`/config unset`: the key removed by sagent.cli.config_set."""
    from sagent.cli import config_set

    change = config_set.unset_key(repl.agent.context.cwd, scope, key)
    if not change.changed:
        return [config_set.said(change)]
    return [f"{config_set.said(change)}; it applies from the next start", *_notes(repl, change)]


def _notes(repl: ReplHost, change: Change) -> list[str]:
    from sagent.cli.config_set import still_line

    still = still_line(change)
    return [repl.renderer.c("dim", line) for line in [*change.warnings, *([still] if still else [])]]


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
