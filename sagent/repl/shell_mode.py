"""`!command` in the REPL: the user runs a shell command themselves, without the model and without a
permission question (they typed it). It runs as the Bash tool runs a command (the one spawn path): in its
OS sandbox, in the agent's working directory, with a timeout, every process it starts ended with it. Esc
cancels it. Its output is shown, and goes with the next message, so the model sees what the user saw.
"""

from __future__ import annotations

import asyncio
import re
from typing import TYPE_CHECKING

from sagent.attachments import shell_context
from sagent.lib.words import quantity

if TYPE_CHECKING:
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
    from prompt_toolkit.layout import Container

    from sagent.repl.host import ReplHost

TIMEOUT_S = 120
"""Seconds a `!command` may run before it and its processes are ended."""
SHOWN_LINES = 30
"""Lines of output shown on the screen; all of it (up to the Bash tool's limit) goes to the model."""
# Terminal escapes and other control characters a command may print: shown as nothing, so a command's
# colours or cursor moves cannot scramble the screen.
_CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b.?|[\x00-\x08\x0b-\x1f\x7f]")


def running(host: ReplHost) -> bool:
    """True while a `!command` runs."""
    return host.state.shell is not None and not host.state.shell.done()


def start(host: ReplHost, command: str) -> None:
    """Run `command` (the input after `!`) beside the REPL."""
    command = command.strip()
    if not command:
        host.commit([host.renderer.c("dim", "!command runs a shell command here, e.g. !git status")])
        return
    if running(host):
        host.commit([host.renderer.c("yellow", "a !command is still running: wait, or Esc to cancel it")])
        return
    host.state.shell = asyncio.ensure_future(_run(host, command))
    host.refresh()


async def _run(host: ReplHost, command: str) -> None:
    from sagent.tools.base import ToolError
    from sagent.tools.shell import Bash

    r = host.renderer
    host.commit([r.c("bold", "! ") + r.c("bold", command)])
    try:
        output = await Bash().run({"command": command, "timeout": TIMEOUT_S}, host.agent.context)
    except asyncio.CancelledError:
        host.commit([r.c("yellow", "  cancelled; nothing goes to the model")])
        return
    except ToolError as error:  # a timeout (with the output so far), or a working directory that is gone
        output = f"error: {error}"
    except Exception as error:  # bash missing, out of processes: say so, keep the REPL
        host.commit([r.c("red", f"  could not run it: {type(error).__name__}: {error}")])
        return
    finally:
        host.state.shell = None
        host.refresh()
    host.commit(shown_output(host, output))
    host.state.context.append(shell_context(command, output))


def shown_output(host: ReplHost, output: str) -> list[str]:
    """The output as shown: control characters removed, lines cut to the width, at most SHOWN_LINES."""
    r = host.renderer
    lines = _CONTROL.sub("", output.replace("\r\n", "\n")).rstrip("\n").split("\n")
    width = max(host.settings.width - 5, 20)
    shown = [r.c("dim", "  │ " + (line if len(line) <= width else line[: width - 1] + "…")) for line in lines]
    if len(shown) > SHOWN_LINES:
        shown = [*shown[:SHOWN_LINES], r.c("dim", f"  … {quantity(len(shown) - SHOWN_LINES, 'more line')}")]
    return [*shown, r.c("dim", "  ↳ the command and its output go with your next message")]


def add_keys(keys: KeyBindings, host: ReplHost) -> None:
    """Esc cancels the running `!command` (before it would interrupt the agent)."""
    from prompt_toolkit.filters import Condition

    @keys.add("escape", filter=Condition(lambda: running(host)))
    def _cancel(event: KeyPressEvent) -> None:
        if host.state.shell is not None:
            host.state.shell.cancel()


def status_window(host: ReplHost) -> Container:
    """A line above the input while a `!command` runs."""
    from prompt_toolkit.filters import Condition
    from prompt_toolkit.layout import ConditionalContainer, Window
    from prompt_toolkit.layout.controls import FormattedTextControl

    return ConditionalContainer(
        Window(
            FormattedTextControl([("class:note", " ! running the command… (Esc cancels)")]),
            height=1,
            dont_extend_height=True,
        ),
        filter=Condition(lambda: running(host)),
    )
