"""What the model list (`/model`) costs per keystroke while the user searches it, in a 1,000-message
session, measured like benchmarks/repl.py: the key through prompt_toolkit's key processor, then a paint of
the screen to a VT100 output in memory. Also the cost of one tool line, fitted to the width."""

from __future__ import annotations

import asyncio
import io
import time

from prompt_toolkit.application.current import create_app_session, set_app
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import DummyInput
from prompt_toolkit.key_binding.key_processor import KeyPress
from prompt_toolkit.keys import Keys
from prompt_toolkit.output.vt100 import Vt100_Output

from benchmarks.repl import _long_history, _measure
from sagent.agent.agent import Agent
from sagent.providers.scripted import ScriptedModel
from sagent.repl.app import Repl
from sagent.repl.model_picker import model_picker
from sagent.repl.picker import open_picker
from sagent.repl.render import Renderer, Settings
from sagent.repl.screen import build_application
from sagent.types import ToolCall, ToolResult


async def _run() -> float:
    output = Vt100_Output(io.StringIO(), lambda: Size(rows=40, columns=120), term="xterm-256color")
    with create_app_session(input=DummyInput(), output=output):
        agent = Agent(ScriptedModel([]), history=_long_history())
        repl = Repl(agent, new_agent=lambda path: agent, settings=Settings(width=120), switch=lambda *_: "")
        repl.app, repl.input = build_application(repl)
        app = repl.app
        with set_app(app):
            app.renderer.render(app, app.layout)
            open_picker(repl, model_picker(repl))
            typed = iter("opus " * 1000)

            def keystroke() -> None:  # a search typed, erased every few keys: the list changes each time
                char = next(typed)
                app.key_processor.feed(KeyPress(Keys.Backspace if char == " " else char))
                if char == " ":
                    for _ in range(3):
                        app.key_processor.feed(KeyPress(Keys.Backspace))
                app.key_processor.process_keys()

            return _measure(repl, keystroke, 300)


def picker_keystroke_ms() -> float:
    """Median ms per keystroke while searching the model list, 1,000 messages in the session."""
    return asyncio.run(_run())


def tool_line_ms(rounds: int = 2000) -> float:
    """Mean ms to render one long tool line (a long command, 50 lines of output) fitted to 120 columns."""
    renderer = Renderer(Settings(width=120))
    call = ToolCall("c1", "Bash", {"command": "make test " * 40})
    result = ToolResult.of(call, "\n".join("output " * 40 for _ in range(50)))
    start = time.perf_counter()
    for _ in range(rounds):
        renderer.tool_line(call, result, 1234.0)
    return (time.perf_counter() - start) * 1000 / rounds


if __name__ == "__main__":
    print(f"keystroke while searching the model list: {picker_keystroke_ms():.2f} ms (target < 16)")
    print(f"one tool line fitted to the width: {tool_line_ms():.3f} ms (target < 1)")
