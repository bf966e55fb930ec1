"""Esc in the REPL: it acts the moment it is pressed, and the keys typed right after it arrive whole.

A terminal sends Alt+key as Esc followed by the key, so prompt_toolkit holds an Esc back to see whether a
key follows, and its emacs bindings give Esc+key meanings of their own (Esc / completes, Esc b moves a word
back, Esc 5 repeats the next key five times). Someone who presses Esc to stop the agent and types at once
would lose keys to that. So here:

- an Esc that arrives alone (nothing behind it in the same read from the terminal) acts at once;
- an Esc with a printable character right behind it (typed fast, or read in one go on a busy machine) acts
  as Esc, and the character is typed as usual: Esc then `/cost` runs /cost, Esc then `abc` stops and
  leaves `abc` in the input;
- Alt+Enter (Esc and Enter in one read) still inserts a new line, and Alt with a named key (Alt+Backspace,
  Alt+Left) keeps its meaning.

What Esc does is decided by the REPL's other Esc keys (stop the work, close a list, cancel a `!command`);
when none applies (idle), Esc Esc within `DOUBLE_ESC_S` seconds opens the rewind list on an empty input and
clears the input otherwise (Up brings the text back).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from prompt_toolkit.buffer import Buffer
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

    from sagent.repl.host import ReplHost

DOUBLE_ESC_S = 1.0
"""Two presses of Esc this close together are Esc Esc."""
AGAIN_TO_CLEAR = "Esc again to clear the input"
AGAIN_TO_REWIND = "Esc again to go back to one of your messages (/rewind)"


class DoubleEscape:
    """Esc while nothing else takes it (idle, no list open): the first press says what a second would do;
    a second within `DOUBLE_ESC_S` clears the input, or on an empty input opens the rewind list."""

    def __init__(self, repl: ReplHost, buffer: Buffer) -> None:
        self.repl = repl
        self.buffer = buffer
        self.pressed_at: float | None = None  # when the first Esc of a pair was pressed
        buffer.on_text_changed += self._typed  # a key typed between two presses: not a pair

    def press(self, now: float | None = None) -> None:
        """One press of Esc (at `now`, a monotonic time)."""
        now = time.monotonic() if now is None else now
        if self.buffer.complete_state is not None:  # a completion menu is open: Esc closes it first
            self.buffer.cancel_completion()
            return
        if self.pressed_at is None or now - self.pressed_at > DOUBLE_ESC_S:
            self.pressed_at = now
            self._hint(AGAIN_TO_CLEAR if self.buffer.text else AGAIN_TO_REWIND, now)
            return
        self.pressed_at = None
        self._drop_hint()
        if self.buffer.text:
            self.buffer.reset(append_to_history=True)  # Up brings it back
            return
        from sagent.repl.commands import CommandError
        from sagent.repl.session_commands import rewind_list

        try:
            self.repl.commit(rewind_list(self.repl))
        except CommandError as error:
            self.repl.state.note = str(error)
        self.repl.refresh()

    def _typed(self, _: Buffer) -> None:
        self.pressed_at = None

    def _hint(self, text: str, now: float) -> None:
        self.repl.state.note = text
        self.repl.refresh()
        with contextlib.suppress(RuntimeError):  # no loop: a test calling `press` itself
            asyncio.get_running_loop().call_later(DOUBLE_ESC_S, self._expire, now)

    def _expire(self, pressed_at: float) -> None:
        if self.pressed_at == pressed_at:
            self._drop_hint()

    def _drop_hint(self) -> None:
        if self.repl.state.note in (AGAIN_TO_CLEAR, AGAIN_TO_REWIND):
            self.repl.state.note = ""
            self.repl.refresh()


def add_keys(keys: KeyBindings, repl: ReplHost, buffer: Buffer) -> DoubleEscape:
    """Make Esc act at once in `keys` (the REPL's bindings; call it after every other Esc key is added)."""
    from prompt_toolkit.application import get_app
    from prompt_toolkit.filters import Condition
    from prompt_toolkit.key_binding.defaults import load_key_bindings
    from prompt_toolkit.keys import Keys

    double = DoubleEscape(repl, buffer)
    # Nothing follows the Esc in what the terminal sent: it is not the start of an Alt+key.
    alone = Condition(lambda: not get_app().key_processor.input_queue)

    def escape(event: KeyPressEvent) -> None:
        """What a lone Esc does: the newest Esc key of the REPL whose condition holds, else Esc Esc."""
        for binding in reversed(keys.get_bindings_for_keys((Keys.Escape,))):
            if binding.handler is not escape and binding.filter():
                binding.call(event)
                return
        double.press()

    keys.add("escape", eager=alone)(escape)

    def escape_then_key(event: KeyPressEvent) -> None:
        """Esc with a character right behind it: Esc, then the character typed as usual."""
        event.app.key_processor.feed(event.key_sequence[1], first=True)
        escape(event)

    # The Alt+character meanings prompt_toolkit's defaults give, taken over: the character is typed.
    printable = {
        binding.keys[1]
        for binding in load_key_bindings().bindings
        if len(binding.keys) == 2
        and binding.keys[0] == Keys.Escape
        and not isinstance(binding.keys[1], Keys)  # a character, not a named key
        and len(binding.keys[1]) == 1
        and binding.keys[1].isprintable()
    }
    for char in sorted(printable):
        keys.add("escape", char)(escape_then_key)
    return double
