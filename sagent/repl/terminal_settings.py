"""The settings keys of the REPL's terminal extras, checked as settings files are read: `statusLine` (a
command whose first line the REPL shows) and `notifications` / `preferredNotifChannel` (how the REPL tells
an unfocused terminal that a turn ended or a question waits).

Only the standard library is imported here: `sagent config` checks settings files without the REPL.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

CHANNELS = ("auto", "osc9", "osc777", "osc99", "bell", "off")
"""sagent's names for the ways to notify (the `notifications` key)."""
CLAUDE_CHANNELS = {
    "auto": "auto",
    "iterm2": "osc9",
    "iterm2_with_bell": "osc9+bell",
    "terminal_bell": "bell",
    "kitty": "osc99",
    "ghostty": "osc777",
    "notifications_disabled": "off",
}
"""Claude Code's `preferredNotifChannel` values, as sagent's channels (`osc9+bell`: both)."""
DEFAULT_PADDING = 0


class StatusLineSetting:
    """A `statusLine` setting: the shell command to run, and the columns of space before its line."""

    __slots__ = ("command", "padding")

    def __init__(self, command: str, padding: int = DEFAULT_PADDING) -> None:
        self.command = command
        self.padding = padding


def check_status_line(value: Any) -> str | None:
    """What is wrong with a `statusLine` value, or None when it is right."""
    if not isinstance(value, dict):
        return 'must be an object like {"type": "command", "command": "~/bin/status.sh"}'
    if value.get("type", "command") != "command":
        return f'"type" must be "command", not {value.get("type")!r}'
    command = value.get("command")
    if not isinstance(command, str) or not command.strip():
        return '"command" must be a non-empty string'
    padding = value.get("padding", DEFAULT_PADDING)
    if isinstance(padding, bool) or not isinstance(padding, int) or not 0 <= padding <= 40:
        return '"padding" must be a whole number from 0 to 40'
    return None


def status_line_of(values: dict[str, Any]) -> StatusLineSetting | None:
    """The `statusLine` of merged settings values (already checked), or None when there is none."""
    value = values.get("statusLine")
    if not isinstance(value, dict) or check_status_line(value) is not None:
        return None
    return StatusLineSetting(value["command"], value.get("padding", DEFAULT_PADDING))


def check_channel(key: str, value: Any) -> str | None:
    """What is wrong with a `notifications` or `preferredNotifChannel` value, or None."""
    known = CHANNELS if key == "notifications" else tuple(CLAUDE_CHANNELS)
    if not isinstance(value, str) or value not in known:
        return "must be one of " + ", ".join(known)
    return None


def channel_of(values: dict[str, Any]) -> str:
    """The channel merged settings values choose: `notifications` wins over Claude Code's
    `preferredNotifChannel`; "auto" when neither is set (or a value is not known)."""
    if values.get("notifications") in CHANNELS:
        return str(values["notifications"])
    return CLAUDE_CHANNELS.get(str(values.get("preferredNotifChannel", "auto")), "auto")


def check_terminal_key(name: str, value: Any, error: Callable[[str], Exception]) -> None:
    """Raise `error(problem)` when `value` is wrong for the key `name` (one of this module's three)."""
    problem = check_status_line(value) if name == "statusLine" else check_channel(name, value)
    if problem is not None:
        raise error(problem)
