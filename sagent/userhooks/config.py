"""The `hooks` settings key: its shape, checked strictly, read into a table of commands by event.

    "hooks": {
      "PreToolUse": [
        {"matcher": "Bash|Edit", "hooks": [{"type": "command", "command": "./check.sh", "timeout": 30}]}
      ]
    }

The shape is Claude Code's, so settings and scripts written for it work here. `matcher` selects tools by name
for `PreToolUse`, `PostToolUse`, `PostToolUseFailure` and `PermissionRequest` (the source, `startup` or
`resume`, for `SessionStart`; the agent type (an agent file's name, else `general-purpose`) for
`SubagentStart`; `manual` or `auto` for `PreCompact`): empty, absent or `*` matches everything; names and `|`
only (`Bash|Edit`) match those names exactly; anything else is a regular expression searched in the name
(`mcp__github__.*`, `Notebook.*`). Other events ignore it.

Only the standard library is imported here: `sagent config` checks settings files without loading the loop.
"""

from __future__ import annotations

import math
import re
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

from sagent.lib.json import json_kind

EVENTS = (
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "SessionStart",
    "SubagentStart",
    "PreCompact",
    "PermissionRequest",
)
"""The events sagent runs command hooks for."""
OTHER_CLAUDE_EVENTS = frozenset(
    {
        "Notification",
        "SessionEnd",
        "PermissionDenied",
        "PostToolBatch",
        "UserPromptExpansion",
        "StopFailure",
        "PostCompact",
        "PreModelSwitch",
        "PostModelSwitch",
        "Setup",
        "TeammateIdle",
        "TaskCreated",
        "TaskCompleted",
        "Elicitation",
        "ElicitationResult",
        "ConfigChange",
        "WorktreeCreate",
        "WorktreeRemove",
        "InstructionsLoaded",
        "CwdChanged",
        "FileChanged",
        "DirectoryAdded",
        "MessageDisplay",
        "PreSkillShellCommand",
    }
)
"""Events Claude Code has and sagent does not run: a settings file shared with it may name them (a warning)."""
DEFAULT_TIMEOUT = 60.0
"""Seconds a hook command may run when its entry gives no `timeout`."""
KNOWN_GROUP_KEYS = frozenset({"matcher", "hooks"})
KNOWN_COMMAND_KEYS = frozenset({"type", "command", "timeout"})
_NAMES = re.compile(r"[A-Za-z0-9_|]+")


class HookConfigError(ValueError):
    """A `hooks` value of the wrong shape; the message names the key at fault (`hooks.PreToolUse[0]...`)."""


class HookCommand(NamedTuple):
    """One command to run for an event: a shell command line and the seconds it may take."""

    command: str
    timeout: float = DEFAULT_TIMEOUT


class HookCallback(NamedTuple):
    """A hook that is a function of the program driving sagent (a Claude Agent SDK application's hook
    callback) rather than a shell command: `call(input, timeout)` gets the JSON object a command gets on
    stdin and returns the JSON object a command prints; an exception, or no answer in `timeout` seconds, is
    a failure. `block_on_failure`: a failure blocks what the hook guards (the SDK's `onFailure: "block"`)
    instead of counting as no decision."""

    name: str
    call: Callable[[dict[str, Any], float], Awaitable[Any]]
    timeout: float = DEFAULT_TIMEOUT
    block_on_failure: bool = False


HookEntry = HookCommand | HookCallback
"""One hook of a matcher entry: a command (settings files) or a callback (the Claude Agent SDK)."""


class HookGroup(NamedTuple):
    """The commands of one matcher entry."""

    matcher: str
    commands: tuple[HookEntry, ...]

    def matches(self, target: str) -> bool:
        """True when this entry applies to `target` (a tool name, or a session's source)."""
        return matches(self.matcher, target)


HookTable = dict[str, tuple[HookGroup, ...]]
"""The command hooks by event name, in the order configured."""


def matches(matcher: str, target: str) -> bool:
    """Claude Code's matcher rule: empty or `*` matches all; plain names joined by `|` match exactly;
    anything else is a regular expression searched in `target`."""
    if matcher in ("", "*"):
        return True
    if _NAMES.fullmatch(matcher):
        return target in matcher.split("|")
    try:
        return re.search(matcher, target) is not None
    except re.error:
        return False


def parse_hooks(value: Any, *, where: str = "") -> tuple[HookTable, list[str]]:
    """`value` (the `hooks` key's JSON) as a table, and warnings (an event sagent does not run, a member it
    does not know). HookConfigError, naming the key, for anything of the wrong shape. `where` prefixes the
    messages (`path: `)."""
    warnings: list[str] = []

    def bad(key: str, problem: str) -> HookConfigError:
        return HookConfigError(f'{where}key "{key}": {problem}')

    if not isinstance(value, dict):
        raise bad("hooks", f"must be an object of event names to lists, not {json_kind(value)}")
    table: HookTable = {}
    for event, groups in value.items():
        key = f"hooks.{event}"
        if event in OTHER_CLAUDE_EVENTS:
            warnings.append(f'{where}key "{key}": sagent does not run {event} hooks; they are ignored')
            continue
        if event not in EVENTS:
            raise bad(key, f"unknown event; the events are: {', '.join(EVENTS)}")
        if not isinstance(groups, list):
            raise bad(key, f"must be a list of {{matcher, hooks}} objects, not {json_kind(groups)}")
        parsed: list[HookGroup] = []
        for index, group in enumerate(groups):
            parsed.append(_group(group, f"{key}[{index}]", bad, warnings, where))
        table[event] = tuple(parsed)
    return table, warnings


def _group(group: Any, key: str, bad: Any, warnings: list[str], where: str) -> HookGroup:
    if not isinstance(group, dict):
        raise bad(key, f"must be an object with a hooks list, not {json_kind(group)}")
    for member in group:
        if member not in KNOWN_GROUP_KEYS:
            warnings.append(f'{where}key "{key}.{member}": unknown, ignored')
    matcher = group.get("matcher", "")
    if not isinstance(matcher, str):
        raise bad(f"{key}.matcher", f"must be a string (tool names, or a regular expression), not {json_kind(matcher)}")
    if matcher not in ("", "*") and not _NAMES.fullmatch(matcher):
        try:
            re.compile(matcher)
        except re.error as error:
            raise bad(f"{key}.matcher", f"not a valid regular expression: {error}") from None
    commands = group.get("hooks")
    if not isinstance(commands, list) or not commands:
        raise bad(f"{key}.hooks", f"must be a non-empty list of commands, not {json_kind(commands)}")
    out = []
    for index, entry in enumerate(commands):
        out.append(_command(entry, f"{key}.hooks[{index}]", bad, warnings, where))
    return HookGroup(matcher, tuple(out))


def _command(entry: Any, key: str, bad: Any, warnings: list[str], where: str) -> HookCommand:
    if not isinstance(entry, dict):
        raise bad(key, f'must be an object like {{"type": "command", "command": "..."}}, not {json_kind(entry)}')
    for member in entry:
        if member not in KNOWN_COMMAND_KEYS:
            warnings.append(f'{where}key "{key}.{member}": unknown, ignored')
    if entry.get("type") != "command":
        raise bad(f"{key}.type", f'must be "command" (the only kind sagent runs), not {json_kind(entry.get("type"))}')
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip() or "\0" in command:
        raise bad(f"{key}.command", f"must be a non-empty command line, not {json_kind(command)}")
    timeout = entry.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not math.isfinite(timeout):
        raise bad(f"{key}.timeout", f"must be a number of seconds, not {json_kind(timeout)}")
    if timeout <= 0:
        raise bad(f"{key}.timeout", f"must be more than 0 seconds, not {json_kind(timeout)}")
    return HookCommand(command, float(timeout))
