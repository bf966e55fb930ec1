"""What moves on the screen while the agent works: a spinner line with the time the turn has taken, the
tokens it has produced so far and the key that stops it.

`WorkClock` is plain state fed with the agent's events (tested without a terminal); `tick` repaints the
screen a few times a second while the agent is busy, so the spinner turns and the seconds count even when
no event arrives (a long tool call, a slow first token). The frame shown is chosen from the time, not
counted per repaint, so an extra repaint (a keystroke, a streamed chunk) never makes it jump.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sagent.agent.tokens import CHARS_PER_TOKEN
from sagent.events import Event, TextDelta, ThinkingDelta, ToolCallDelta, TurnFinished
from sagent.lib.words import plural

if TYPE_CHECKING:
    from sagent.repl.host import ReplHost

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
"""The spinner's frames, one every `FRAME_S` seconds."""
FRAME_S = 0.1
"""How often the spinner line is repainted while the agent works."""


@dataclass
class WorkClock:
    """The turn being worked on now: when it started, what it had spent then, and the tokens produced
    since (finished responses as the provider counted them, the streaming one estimated from its text)."""

    started: float = 0.0
    """`time.monotonic()` when the turn started."""
    start_usd: float = 0.0
    """What the agent's tree had spent when the turn started (the turn's own cost is the difference)."""
    output_tokens: int = 0
    """Output tokens of the responses this turn finished."""
    streamed_chars: int = 0
    """Characters streamed so far of the response in progress (text, thinking, tool-call arguments)."""

    def start(self, spent_usd: float, now: float | None = None) -> None:
        """A new turn begins now, with `spent_usd` spent before it."""
        self.started = time.monotonic() if now is None else now
        self.start_usd = spent_usd
        self.output_tokens = 0
        self.streamed_chars = 0

    def feed(self, event: Event) -> None:
        """Count what `event` produced."""
        if isinstance(event, TextDelta | ThinkingDelta):
            self.streamed_chars += len(event.text)
        elif isinstance(event, ToolCallDelta):
            self.streamed_chars += len(event.arguments_delta) + len(event.name or "")
        elif isinstance(event, TurnFinished):
            self.output_tokens += event.usage.output_tokens or self.streamed_chars // CHARS_PER_TOKEN
            self.streamed_chars = 0

    @property
    def tokens(self) -> int:
        """Tokens produced this turn so far (the streaming response's estimated)."""
        return self.output_tokens + self.streamed_chars // CHARS_PER_TOKEN

    def line(self, now: float | None = None, doing: str = "working") -> str:
        """The spinner line: `⠹ working… 12s · 1.2k tokens · esc to interrupt`."""
        now = time.monotonic() if now is None else now
        elapsed = max(now - self.started, 0.0)
        frame = FRAMES[int(elapsed / FRAME_S) % len(FRAMES)]
        tokens = f"{count_text(self.tokens)} {plural(self.tokens, 'token')}"
        return f"{frame} {doing}… {duration_text(elapsed)} · {tokens} · esc to interrupt"


def duration_text(seconds: float) -> str:
    """`7s`, `1m 05s`, `1h 02m`: whole seconds, as a person reads a clock."""
    whole = int(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m {whole % 60:02d}s"
    return f"{whole // 3600}h {whole % 3600 // 60:02d}m"


def count_text(n: int) -> str:
    """`950`, `1.2k`, `12k`, `1.3M`: a token count short enough for a status line."""
    if n < 1000:
        return str(n)
    if n < 10_000:
        return f"{n / 1000:.1f}k"
    if n < 1_000_000:
        return f"{n // 1000}k"
    return f"{n / 1_000_000:.1f}M"


def doing_text(running: list[str]) -> str:
    """What the spinner says the agent is doing: the tools running now, or working."""
    if not running:
        return "working"
    shown = ", ".join(running[:3]) + (f" +{len(running) - 3}" if len(running) > 3 else "")
    return f"running {shown}"


async def tick(repl: ReplHost) -> None:
    """Repaint the REPL every `FRAME_S` seconds while it is busy (prompt_toolkit draws only what changed:
    the spinner's character and the seconds)."""
    while repl.busy:
        repl.refresh()
        await asyncio.sleep(FRAME_S)


def spinner_line(repl: ReplHost) -> str:
    """The REPL's spinner line now (shown while it is busy)."""
    renderer = repl.renderer
    running = [r.call.name for r in renderer.running.values() if r.call.id not in renderer.asking]
    doing = "waiting for your approval" if renderer.asking and not running else doing_text(running)
    return " " + repl.state.clock.line(doing=doing)
