"""The text tool protocol: strict parsing of call blocks, and a wrapped model whose calls run in the loop."""

from __future__ import annotations

import pytest

from sagent.agent.agent import Agent
from sagent.providers.scripted import ScriptedModel, text_turn
from sagent.providers.text_tools import MALFORMED, TextToolModel, parse_text_calls, render_history
from sagent.tools.base import tool
from sagent.types import AssistantMessage, ModelRequest, TextPart, ToolCall, ToolResult, ToolSpec, UserMessage

GOOD = '<tool_call>\n{"name": "List", "arguments": {"path": "."}}\n</tool_call>'


@pytest.mark.parametrize(
    ("text", "names", "arguments", "problem"),
    [
        (GOOD, ["List"], [{"path": "."}], None),
        ('I look.\n<tool_call>{"name": "Read", "arguments": {}}</tool_call>', ["Read"], [{}], None),
        ('<tool_call>{"name": "Read"}</tool_call>', ["Read"], [{}], None),
        (GOOD + "\n" + GOOD.replace("List", "Glob"), ["List", "Glob"], [{"path": "."}, {"path": "."}], None),
        ("no call here", [], [], None),
        ('<tool_call>{"name": "List", "arguments": {"path": "."}', ["List"], [{}], "no </tool_call>"),
        ("<tool_call>{name: List}</tool_call>", [MALFORMED], [{}], "not JSON"),
        ('<tool_call>{"name": "List", "arguments": {"path": 1</tool_call>', ["List"], [{}], "not JSON"),
        ('<tool_call>["List"]</tool_call>', [MALFORMED], [{}], "JSON object"),
        ('<tool_call>{"arguments": {}}</tool_call>', [MALFORMED], [{}], "no tool name"),
        ('<tool_call>{"name": "", "arguments": {}}</tool_call>', [MALFORMED], [{}], "no tool name"),
        ('<tool_call>{"name": "List", "arguments": "."}</tool_call>', ["List"], [{}], "must be a JSON object"),
        ('<tool_call>{"name": "List", "arguments": {}, "x": 1}</tool_call>', ["List"], [{}], "unexpected keys x"),
    ],
)
def test_parse_table(text: str, names: list[str], arguments: list[dict], problem: str | None) -> None:
    parsed = parse_text_calls(text)
    assert [c.name for c in parsed.calls] == names
    assert [c.arguments for c in parsed.calls] == arguments
    if problem is None:
        assert all(c.invalid_arguments is None for c in parsed.calls)
    else:
        assert parsed.calls[-1].invalid_arguments is not None and problem in parsed.calls[-1].invalid_arguments
    assert "<tool_call>" not in parsed.text


def test_history_is_written_back_as_protocol_text() -> None:
    call = ToolCall("c1", "List", {"path": "."})
    history = (
        UserMessage.of("hi"),
        AssistantMessage((TextPart("looking"), call), stop_reason="tool_use"),
        ToolResult.of(call, "a.py", is_error=False),
    )
    out = render_history(history)
    assert isinstance(out[1], AssistantMessage) and not out[1].tool_calls
    assert '"name": "List"' in out[1].text and "looking" in out[1].text
    assert isinstance(out[2], UserMessage) and 'id="c1"' in out[2].text and "a.py" in out[2].text


async def test_wrapped_model_runs_good_calls_and_returns_malformed_ones_as_errors(tmp_path) -> None:
    ran: list[str] = []

    @tool
    async def Probe(path: str) -> str:
        """Look at a path."""
        ran.append(path)
        return f"seen {path}"

    inner = ScriptedModel(
        [
            text_turn('<tool_call>{"name": "Probe", "arguments": {"path": 1</tool_call>'),
            text_turn('Trying again.\n<tool_call>{"name": "Probe", "arguments": {"path": "a"}}</tool_call>'),
            text_turn("done"),
        ]
    )
    agent = Agent(TextToolModel(inner), tools=[Probe], cwd=tmp_path)
    result = await agent.run("probe a")
    assert result.text == "done" and ran == ["a"]
    first, second, third = inner.requests
    assert not first.tools and "<tool_call>" in first.system and "Probe" in first.system
    assert "not a valid JSON object" in second.messages[-1].text  # the malformed call never ran
    assert 'status="ok"' in third.messages[-1].text and "seen a" in third.messages[-1].text


def test_a_request_without_tools_is_left_alone() -> None:
    model = TextToolModel(ScriptedModel())
    request = ModelRequest("sys", (UserMessage.of("x"),), (ToolSpec("A", "a", {"type": "object"}),))
    assert model.translate(request).tools == () and "## Tools" in model.translate(request).system
    bare = ModelRequest("sys", (UserMessage.of("x"),))
    assert model.translate(bare).system == "sys"
