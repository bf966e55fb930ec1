"""Notifications from the REPL: when a turn ends or a permission question waits while the terminal is not
focused, the terminal is asked to tell the user (a desktop notification or the bell), and the settings'
`Notification` hooks run.

The channel is the `notifications` setting (or Claude Code's `preferredNotifChannel`):

    osc9     ESC ] 9 ; message BEL                 iTerm2, WezTerm, Ghostty
    osc777   ESC ] 777 ; notify ; title ; body BEL  Ghostty, WezTerm, foot, urxvt, some VTE terminals
    osc99    ESC ] 99 ; ; message ESC \\            kitty
    bell     BEL                                    every terminal
    off      nothing
    auto     the one the terminal is known to take (from the variables it sets), else the bell

Inside tmux an escape sequence is wrapped in tmux's passthrough (`ESC P tmux; ... ESC \\`; tmux 3.3 and
later pass it only with `set -g allow-passthrough on`); the bell needs no wrapping.

Focus: the REPL turns on the terminal's focus reports (`CSI ? 1004 h`) and reads `CSI I` (focus in) and
`CSI O` (focus out). Until the terminal has sent one, focus is unknown and taken as focused, so a terminal
that never reports focus never beeps at someone who is looking at it (in tmux: `set -g focus-events on`).
The `Notification` hooks run at each such moment whatever the focus, with `terminal_focused` (true, false or
null) in their input, as Claude Code runs its hooks for every notification.
"""

from __future__ import annotations

import os
import re
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sagent.repl.terminal_settings import channel_of

if TYPE_CHECKING:
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

    from sagent.repl.host import ReplHost
    from sagent.types import ToolCall
    from sagent.userhooks.notification import NotificationType

FOCUS_REPORTS_ON = "\x1b[?1004h"
FOCUS_REPORTS_OFF = "\x1b[?1004l"
FOCUS_IN = "\x1b[I"
FOCUS_OUT = "\x1b[O"
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def auto_channel(environ: dict[str, str] | os._Environ[str] = os.environ) -> str:
    """The channel a terminal is known to take, from the variables it sets; "bell" for any other."""
    program = environ.get("TERM_PROGRAM", "")
    term = environ.get("TERM", "")
    if program == "iTerm.app" or "ITERM_SESSION_ID" in environ or environ.get("LC_TERMINAL") == "iTerm2":
        return "osc9"
    if "KITTY_WINDOW_ID" in environ or term == "xterm-kitty":
        return "osc99"
    if program in ("ghostty", "WezTerm") or "GHOSTTY_RESOURCES_DIR" in environ or "WEZTERM_PANE" in environ:
        return "osc777"
    if term.startswith(("rxvt", "foot")) or "VTE_VERSION" in environ:
        return "osc777"
    return "bell"


def sequence(channel: str, title: str, body: str, in_tmux: bool = False) -> str:
    """What to write to the terminal for a notification on `channel` ("osc9+bell": both)."""
    title, body = _UNSAFE.sub(" ", title), _UNSAFE.sub(" ", body)
    out = ""
    for part in channel.split("+"):
        if part == "bell":
            out += "\a"
            continue
        if part == "osc9":
            code = f"\x1b]9;{title}: {body}\a"
        elif part == "osc777":
            code = f"\x1b]777;notify;{title.replace(';', ',')};{body}\a"
        elif part == "osc99":
            code = f"\x1b]99;;{title}: {body}\x1b\\"
        else:
            continue
        out += tmux_passthrough(code) if in_tmux else code
    return out


def tmux_passthrough(code: str) -> str:
    """`code` wrapped so tmux hands it to the terminal it runs in."""
    return "\x1bPtmux;" + code.replace("\x1b", "\x1b\x1b") + "\x1b\\"


@dataclass
class Notifier:
    """One REPL's notifications: the channel, and the terminal's focus as last reported."""

    channel: str
    focused: bool | None = None
    """True or False once the terminal reported focus; None until then (taken as focused)."""
    sent: int = 0

    def wanted(self) -> bool:
        return self.channel != "off" and self.focused is False


_BY_HOST: weakref.WeakKeyDictionary[object, Notifier] = weakref.WeakKeyDictionary()


def notifier_of(host: ReplHost) -> Notifier:
    """The REPL's notifier, its channel from the settings it started with."""
    found = _BY_HOST.get(host)
    if found is None:
        launch = host.state.launch
        values = launch.sources.loaded.values if launch is not None and launch.sources is not None else {}
        channel = channel_of(values)
        found = _BY_HOST[host] = Notifier(auto_channel() if channel == "auto" else channel)
    return found


def turn_ended(host: ReplHost) -> None:
    """The agent finished its work and waits for the user."""
    from sagent.userhooks.notification import waiting_message

    _notify(host, waiting_message(), "idle_prompt")


def question_waits(host: ReplHost, call: ToolCall) -> None:
    """A permission question about `call` waits for the user."""
    from sagent.userhooks.notification import permission_message

    _notify(host, permission_message(call.name), "permission_prompt")


def _notify(host: ReplHost, message: str, kind: NotificationType) -> None:
    from sagent.userhooks.notification import TITLE, start_notification_hooks

    notifier = notifier_of(host)
    start_notification_hooks(host.agent, message, kind, {"terminal_focused": notifier.focused})
    if not notifier.wanted() or host.app is None:
        return
    title = f"{TITLE} · {host.agent.context.cwd.name}" if host.agent.context.cwd.name else TITLE
    _write(host, sequence(notifier.channel, title, message, in_tmux="TMUX" in os.environ))
    notifier.sent += 1


def _write(host: ReplHost, data: str) -> None:
    """Write straight to the terminal, past the screen's own drawing (these sequences draw nothing)."""
    app = host.app
    if app is None:
        return
    try:
        app.output.write_raw(data)
        app.output.flush()
    except Exception:  # no terminal (a closed pty): nothing to tell
        return


def start(host: ReplHost) -> None:
    """Turn on the terminal's focus reports (the REPL is drawn)."""
    _write(host, FOCUS_REPORTS_ON)


def stop(host: ReplHost) -> None:
    """Turn the focus reports off again (the REPL is leaving)."""
    _write(host, FOCUS_REPORTS_OFF)


def add_keys(keys: KeyBindings, host: ReplHost) -> None:
    """Read the terminal's focus reports. prompt_toolkit does not know them, so they are taught to its
    input parser as two keys no keyboard sends (Ctrl+Shift+F11 and F12 in xterm's encoding, read as
    `c-f23` and `c-f24`); without this a report would arrive as Esc and two letters."""
    from prompt_toolkit.input.ansi_escape_sequences import ANSI_SEQUENCES
    from prompt_toolkit.keys import Keys

    ANSI_SEQUENCES[FOCUS_IN] = Keys.ControlF23
    ANSI_SEQUENCES[FOCUS_OUT] = Keys.ControlF24

    @keys.add(Keys.ControlF23)
    def _focus_in(event: KeyPressEvent) -> None:
        notifier_of(host).focused = True

    @keys.add(Keys.ControlF24)
    def _focus_out(event: KeyPressEvent) -> None:
        notifier_of(host).focused = False


def status_rows(host: ReplHost) -> list[tuple[str, str]]:
    """`/status`'s rows for the status line command and the notifications."""
    from sagent.repl.status_command import status_command_of

    found = status_command_of(host)
    notifier = notifier_of(host)
    focus = {True: "in", False: "out", None: "not reported yet (taken as in)"}[notifier.focused]
    channel = "off" if notifier.channel == "off" else f"{notifier.channel} when the terminal is not focused"
    return [
        ("status line", found.setting.command if found is not None else "sagent's own (no statusLine setting)"),
        ("notifications", f"{channel}; focus {focus}"),
    ]
