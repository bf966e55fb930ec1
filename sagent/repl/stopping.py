"""How the user stops the agent and leaves the REPL: Esc and Ctrl+C.

Esc means stop: the running task is interrupted (what it produced is kept) with the background jobs it
started, and the messages queued for it that it has not taken yet go back into the input box, for the user
to send, edit or drop; nothing is sent by itself after a stop. A background job's result that comes after
it starts no task by itself either: it waits for the next message (the user's, or a sub-agent's report)
and goes to the model with it. Ctrl+C clears the input box when it holds text;
otherwise it interrupts the work as Esc does, and arms a quit for `QUIT_WINDOW_S` seconds: a second Ctrl+C
in that time quits. The hint saying so disappears when the time is up, and a Ctrl+C after that arms it
again instead of quitting.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import TYPE_CHECKING

from sagent.repl.host import QUIT_WINDOW_S

if TYPE_CHECKING:
    from prompt_toolkit.buffer import Buffer

    from sagent.repl.host import ReplHost

QUIT_HINT = "press Ctrl+C again to quit"


def stop_work(repl: ReplHost, buffer: Buffer) -> int:
    """Interrupt the running task and put its queued, undelivered messages back into `buffer` (before
    what the user is typing now). Returns how many messages came back."""
    taken: list[str] = []
    while repl.state.queued:  # newest first; a message the agent has already taken is not given back
        text = repl.pull_back()
        if text is None:
            break
        taken.append(text)
    repl.interrupt()
    if taken:
        texts = [*reversed(taken), *([buffer.text] if buffer.text.strip() else [])]
        joined = "\n\n".join(texts)
        buffer.text = joined
        buffer.cursor_position = len(joined)
    repl.state.note = interrupted_note(len(taken))
    repl.refresh()
    return len(taken)


def interrupted_note(returned: int) -> str:
    """The hint under the input after a stop."""
    if not returned:
        return "interrupted"
    what = "your queued message is" if returned == 1 else f"your {returned} queued messages are"
    return f"interrupted · {what} back in the input: Enter sends, Ctrl+C clears"


def ctrl_c(repl: ReplHost, buffer: Buffer, now: float | None = None) -> None:
    """Ctrl+C: clear the input; else stop the work, or quit when pressed again within the window."""
    if buffer.text:
        buffer.reset()
        return
    now = time.monotonic() if now is None else now
    if now - repl.state.ctrl_c_at < QUIT_WINDOW_S:
        repl.quit()
        return
    repl.state.ctrl_c_at = now
    busy = repl.busy
    returned = stop_work(repl, buffer) if busy else 0
    repl.state.note = f"{interrupted_note(returned)} · {QUIT_HINT}" if busy else QUIT_HINT
    repl.refresh()
    _expire_later(repl, now)


def _expire_later(repl: ReplHost, armed_at: float) -> None:
    """Take the quit hint away once the window is over (unless another Ctrl+C armed it again since)."""

    def expire() -> None:
        if repl.state.ctrl_c_at != armed_at:
            return
        repl.state.ctrl_c_at = 0.0
        if repl.state.note.endswith(QUIT_HINT):
            repl.state.note = repl.state.note.removesuffix(QUIT_HINT).rstrip(" ·")
        repl.refresh()

    # Without a loop (a test calling the key's function directly) the time check alone still holds.
    with contextlib.suppress(RuntimeError):
        asyncio.get_running_loop().call_later(QUIT_WINDOW_S, expire)


def disarm(repl: ReplHost) -> None:
    """A new task starts: the notes of the last stop are stale (an old "interrupted" must not stay under
    the prompt), and the quit armed by a Ctrl+C is forgotten."""
    repl.state.note = ""
    repl.state.ctrl_c_at = 0.0
