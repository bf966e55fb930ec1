"""The REPL's cost per keystroke and per streamed chunk in a long session (1,000 messages of history).

Each figure is the real work prompt_toolkit does: the key goes through the key processor, then the
renderer paints the live area to a VT100 output (written to memory, not a terminal), diffing against the
previous screen as it does on a real terminal.
"""

from __future__ import annotations

import asyncio
import io
import statistics
import time

from prompt_toolkit.application.current import create_app_session, set_app
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import DummyInput
from prompt_toolkit.key_binding.key_processor import KeyPress
from prompt_toolkit.output.vt100 import Vt100_Output

from sagent.agent.agent import Agent
from sagent.events import TextDelta
from sagent.providers.scripted import ScriptedModel
from sagent.repl.app import Repl
from sagent.repl.render import Settings
from sagent.repl.screen import build_application
from sagent.types import AssistantMessage, TextPart, UserMessage

HISTORY = 1_000


def _long_history() -> list:
    history: list = []
    for n in range(HISTORY // 2):
        history.append(UserMessage.of(f"question {n}: " + "why does the parser fail on nested brackets? " * 3))
        history.append(AssistantMessage((TextPart(f"answer {n}: " + "Because the tokenizer drops a level. " * 8),)))
    return history


def _measure(repl: Repl, action: object, samples: int) -> float:
    app = repl.app
    times = []
    for _ in range(samples):
        start = time.perf_counter()
        action()  # type: ignore[operator]
        app.renderer.render(app, app.layout)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


async def _run() -> tuple[float, float]:
    output = Vt100_Output(io.StringIO(), lambda: Size(rows=40, columns=120), term="xterm-256color")
    with create_app_session(input=DummyInput(), output=output):
        agent = Agent(ScriptedModel([]), history=_long_history())
        repl = Repl(agent, new_agent=lambda path: agent, settings=Settings(width=120))
        repl.app, repl.input = build_application(repl)
        repl.renderer.history(list(agent.history))  # what --continue prints once at start
        app = repl.app
        with set_app(app):  # as while the REPL runs: the application is the current one
            return _measure_both(repl)


def _measure_both(repl: Repl) -> tuple[float, float]:
    app = repl.app
    app.renderer.render(app, app.layout)

    def keystroke() -> None:
        app.key_processor.feed(KeyPress("a"))
        app.key_processor.process_keys()

    def chunk() -> None:
        repl.on_event(TextDelta("streamed words arrive here, "))

    typing = _measure(repl, keystroke, 300)
    streaming = _measure(repl, chunk, 300)
    return typing, streaming


def repl_costs() -> tuple[float, float]:
    """(ms per keystroke, ms per streamed chunk redraw) with 1,000 messages in the session."""
    return asyncio.run(_run())
