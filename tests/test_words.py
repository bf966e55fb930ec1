"""Counts read as words: one line, two lines; never "1 lines" or "1 tool rounds", wherever sagent prints one."""

from __future__ import annotations

from pathlib import Path

import pytest

from sagent.agent.agent import Agent
from sagent.agent.compaction import Thread, check_summary
from sagent.events import Compacted, Result
from sagent.lib.words import plural, quantity
from sagent.providers.scripted import ScriptedModel, tool_turn
from sagent.repl import tool_view
from sagent.tools.base import tool
from sagent.types import Cost, Usage, UserMessage


def test_one_is_singular_and_every_other_count_plural() -> None:
    assert quantity(1, "line") == "1 line"
    assert [quantity(n, "line") for n in (0, 2, 1234)] == ["0 lines", "2 lines", "1,234 lines"]
    assert quantity(1, "tool round") == "1 tool round" and quantity(3, "tool round") == "3 tool rounds"
    assert quantity(1, "entry", "entries") == "1 entry" and quantity(5, "entry", "entries") == "5 entries"
    assert plural(1, "is", "are") == "is" and plural(2, "is", "are") == "are"
    assert quantity(-1, "line") == "-1 lines"


@tool
def echo(text: str) -> str:
    """Echo the text.

    Args:
        text: what to say
    """
    return text


async def test_a_run_stopped_after_one_tool_round_says_one() -> None:
    model = ScriptedModel([tool_turn(("echo", {"text": "a"})), tool_turn(("echo", {"text": "b"}))])
    agent = Agent(model, tools=[echo], max_tool_rounds=1)
    events = [e async for e in agent.run("loop")]
    await agent.aclose()
    result = events[-1]
    assert isinstance(result, Result) and result.subtype == "error_max_turns"
    assert "stopped after 1 tool round, the limit" in result.text


def test_the_summary_check_counts_in_words() -> None:
    thread = Thread(("fix the parser", "use tabs"), ("a.py",), ())
    _, repaired = check_summary("## Goal\nfix the parser", thread)
    assert repaired == ("1 user message", "1 file path")


def test_a_compaction_of_one_message_says_one() -> None:
    event = Compacted(UserMessage.of("summary"), 1, Usage(), Cost(), "m", tokens_before=100, tokens_after=10)
    assert ": 1 message summarised" in event.line()


def test_one_hidden_output_line_is_one_more_line() -> None:
    output = tool_view.ToolOutput("✓ Read(a)", "\n".join("x" * 11), False)
    assert tool_view.output_lines(output, limit=10)[-1] == "  … 1 more line (/output pages all of it)"


@pytest.mark.parametrize(("content", "said"), [("one line\n", "(1 line, "), ("a\nb\n", "(2 lines, ")])
async def test_write_says_how_many_lines_it_wrote(tmp_path: Path, content: str, said: str) -> None:
    from sagent.tools.base import ToolContext
    from sagent.tools.files import Write

    ctx = ToolContext(cwd=tmp_path)
    out = await Write().run({"path": "a.txt", "content": content}, ctx)
    assert said in str(out)
