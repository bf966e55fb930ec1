"""The REPL's renderer on event streams recorded from real agent runs (scripted model, real tools)."""

from __future__ import annotations

import re
from pathlib import Path

from sagent.agent.agent import Agent
from sagent.events import Event, Result, Retrying, TextDelta, ThinkingDelta, ToolFinished, ToolStarted
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.repl.render import Renderer, Settings
from sagent.tools import builtin_tools
from sagent.types import ToolCall, ToolResult, Usage

ANSI = re.compile(r"\x1b\[[0-9;]*m")


async def record(tmp_path: Path, steps: list, prompt: str = "go") -> list[Event]:
    agent = Agent(ScriptedModel(steps, chunk_size=5), tools=builtin_tools(), cwd=tmp_path)
    return [e async for e in agent.run(prompt)]


def play(events: list[Event], **settings: object) -> tuple[Renderer, list[str]]:
    renderer = Renderer(Settings(width=80, **settings))  # type: ignore[arg-type]
    out: list[str] = []
    for event in events:
        out += renderer.feed(event)
    return renderer, out


async def test_paragraphs_commit_as_they_close_and_code_fences_stay_whole(tmp_path: Path) -> None:
    answer = "First paragraph.\n\n```python\ndef f():\n\n    return 1\n```\n\nLast line."
    events = await record(tmp_path, [text_turn(answer)])
    renderer = Renderer(Settings(width=80, color=False))
    commits: list[tuple[int, str]] = []
    for n, event in enumerate(events):
        commits += [(n, block) for block in renderer.feed(event)]
    texts = [block for _, block in commits]
    assert texts[0] == "› go" and texts[1].strip() == "First paragraph."
    first_delta = next(n for n, e in enumerate(events) if isinstance(e, TextDelta))
    assert commits[1][0] < len(events) - 3 and commits[1][0] > first_delta  # while still streaming
    code = next(t for t in texts if "def f():" in t)
    assert "return 1" in code  # the blank line inside the fence did not split the block
    assert "Last line." in texts[-2] and texts[-1].startswith("─ this turn: ")
    assert renderer.live() == ""


async def test_tool_lines_show_the_key_argument_status_and_a_summary(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("one\ntwo\nthree\n")
    steps = [
        tool_turn(("Read", {"path": "notes.txt"}), ("Bash", {"command": "exit 3"})),
        text_turn("done"),
    ]
    events = await record(tmp_path, steps)
    renderer = Renderer(Settings(width=80, color=False))
    live_while_running = ""
    out: list[str] = []
    for event in events:
        out += renderer.feed(event)
        if isinstance(event, ToolStarted):
            live_while_running = renderer.live()
    assert "running…" in live_while_running
    read = next(line for line in out if line.startswith("✓ Read(notes.txt)"))
    assert "one" in read and "+2 lines hidden" in read
    bash = next(line for line in out if "Bash(exit 3)" in line)
    assert "exit code 3" in bash  # the summary says how the command ended


def test_an_edit_commits_as_a_coloured_diff() -> None:
    call = ToolCall("c1", "Edit", {"path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"})
    renderer = Renderer(Settings(width=80, color=True))
    renderer.feed(ToolStarted(call))
    (line,) = renderer.feed(ToolFinished(ToolResult.of(call, "edited calc.py"), 12.0))
    plain = ANSI.sub("", line)
    assert plain.splitlines()[0].startswith("✓ Edit(calc.py) 12ms")
    assert "  -return a - b" in plain and "  +return a + b" in plain
    assert "\x1b[31m  -return a - b" in line and "\x1b[32m  +return a + b" in line


async def test_no_color_means_no_escape_codes(tmp_path: Path) -> None:
    events = await record(tmp_path, [tool_turn(("List", {"path": "."})), text_turn("**bold** and `code`")])
    _, out = play(events, color=False)
    assert not any("\x1b[" in block for block in out)
    assert any("bold and code" in block for block in out)


def test_thinking_is_dimmed_or_collapsed_and_a_retry_drops_the_partial_text() -> None:
    events: list[Event] = [
        ThinkingDelta("Consider the cache first. "),
        ThinkingDelta("Then the index."),
        TextDelta("Par"),
    ]
    _, out = play(events, color=True)
    assert out[0] == "\x1b[2m✻ Consider the cache first. Then the index.\x1b[0m"
    collapsed, out = play(events, color=False, thinking="collapse")
    assert out == ["✻ thought for 7 words"]
    collapsed.feed(Retrying(1, 2.0, "overloaded: busy"))
    assert "Par" not in collapsed.live() and "retrying in 2.0s" in collapsed.live()


async def test_an_interrupted_result_says_what_was_kept(tmp_path: Path) -> None:
    events = await record(tmp_path, [text_turn("hi")])
    result = events[-1]
    assert isinstance(result, Result)
    interrupted = Result("interrupted", "partial", 1, result.usage, 0.01, 1500, 900, result.session_id)
    _, out = play([interrupted], color=False)
    assert out[0].startswith("─ interrupted: what was produced so far is kept · this turn: ")
    assert "$0.0100" in out[0] and "1.5s" in out[0] and "turns" not in out[0]


def test_the_footer_labels_the_turns_figures_and_puts_the_session_total_beside_them() -> None:
    renderer = Renderer(Settings(width=80, color=False), turn_start_usd=0.25)
    result = Result("success", "done", 3, Usage(input_tokens=1000, output_tokens=200), 0.3, 2500, 2000, "s1")
    line = renderer.result_line(result)
    assert line == "─ this turn: 1.2k tokens · $0.0500 · 2.5s │ session: $0.3000"


async def test_a_restored_history_looks_like_the_live_session(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    events = await record(tmp_path, [tool_turn(("Read", {"path": "a.txt"})), text_turn("It says alpha.")])
    agent_history = [e.message for e in events if hasattr(e, "message")]  # MessageAdded and TurnFinished
    renderer = Renderer(Settings(width=80, color=False))
    from sagent.types import AssistantMessage, UserMessage

    history = [m for m in agent_history if isinstance(m, UserMessage | AssistantMessage)]
    results = [e.result for e in events if isinstance(e, ToolFinished)]
    restored = renderer.history([history[0], history[1], results[0], history[2]])
    assert restored[0] == "› go" and restored[1].startswith("✓ Read(a.txt)") and "alpha" in restored[1]
    assert restored[-1].strip() == "It says alpha."
