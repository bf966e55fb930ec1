"""The REPL's cost per keystroke and per streamed chunk in a long session (1,000 messages of history).

Each figure is the real work prompt_toolkit does: the key goes through the key processor, then the
renderer paints the live area to a VT100 output (written to memory, not a terminal), diffing against the
previous screen as it does on a real terminal. `busy_repl_costs` measures the same while the agent works:
the spinner line is shown and turns (its clock is moved on one frame before each sample, as the ticker
repaints it), and a third figure is the spinner's own repaint, ten of which happen every second.
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
from sagent.repl.liveness import FRAME_S
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


async def _run(busy: bool) -> tuple[float, float, float]:
    output = Vt100_Output(io.StringIO(), lambda: Size(rows=40, columns=120), term="xterm-256color")
    with create_app_session(input=DummyInput(), output=output):
        agent = Agent(ScriptedModel([]), history=_long_history())
        repl = Repl(agent, new_agent=lambda path: agent, settings=Settings(width=120))
        repl.app, repl.input = build_application(repl)
        repl.renderer.history(list(agent.history))  # what --continue prints once at start
        app = repl.app
        work = asyncio.ensure_future(asyncio.sleep(3600))  # stands for the agent's task: the REPL is busy
        agent._running = True  # as during a run: the REPL shows only a running agent's events
        if busy:
            repl.task = work
            repl.state.clock.start(0.0)
        try:
            with set_app(app):  # as while the REPL runs: the application is the current one
                return _measure_all(repl, busy)
        finally:
            work.cancel()


def _measure_all(repl: Repl, busy: bool) -> tuple[float, float, float]:
    app = repl.app
    app.renderer.render(app, app.layout)
    clock = repl.state.clock

    def turn() -> None:
        if busy:  # a frame later: the spinner's character (and now and then its seconds) changed
            clock.started -= FRAME_S

    def keystroke() -> None:
        turn()
        app.key_processor.feed(KeyPress("a"))
        app.key_processor.process_keys()

    def chunk() -> None:
        turn()
        repl.on_event(repl.agent, TextDelta("streamed words arrive here, "))

    typing = _measure(repl, keystroke, 300)
    streaming = _measure(repl, chunk, 300)
    spinning = _measure(repl, turn, 300)
    return typing, streaming, spinning


def repl_costs() -> tuple[float, float]:
    """(ms per keystroke, ms per streamed chunk redraw) with 1,000 messages in the session, idle."""
    typing, streaming, _ = asyncio.run(_run(busy=False))
    return typing, streaming


def busy_repl_costs() -> tuple[float, float, float]:
    """(ms per keystroke, per streamed chunk, per spinner frame) with 1,000 messages in the session, while
    the agent works and the spinner turns."""
    return asyncio.run(_run(busy=True))


if __name__ == "__main__":
    for label, figure in zip(("keystroke", "streamed chunk"), repl_costs(), strict=True):
        print(f"REPL {label}, {HISTORY:,}-message session, idle: {figure:.2f} ms (target 16 ms)")
    for label, figure in zip(("keystroke", "streamed chunk", "spinner frame"), busy_repl_costs(), strict=True):
        print(f"REPL {label}, {HISTORY:,}-message session, spinner running: {figure:.2f} ms (target 16 ms)")
