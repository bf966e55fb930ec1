"""The request gate replaces lone surrogates once per message and once per tool set, keeping what it made
while the same ones come again: every request must still be scrubbed, and a message scrubbed once must be
the same object in every later request (the providers keep their converted history by message)."""

from __future__ import annotations

from pathlib import Path

from sagent.agent.agent import Agent
from sagent.agent.gate import RequestGate
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.tools.base import tool
from sagent.types import ModelRequest, TextPart, ToolCall, ToolResult, UserMessage


@tool
def probe(text: str) -> str:
    """Probe the text \udc80 (a name read from a file that is not UTF-8)."""
    return text


async def test_every_request_offers_the_tools_scrubbed(tmp_path: Path) -> None:
    model = ScriptedModel([tool_turn(("probe", {"text": "a"})), tool_turn(("probe", {"text": "b"})), text_turn("ok")])
    agent = Agent(model, tools=[probe], cwd=tmp_path)
    async for _ in agent.run("go"):
        pass
    await agent.aclose()
    assert len(model.requests) == 3
    for request in model.requests:
        description = next(t.description for t in request.tools if t.name == "probe")
        assert "\udc80" not in description and "\ufffd" in description


def test_a_scrubbed_message_is_the_same_object_in_every_later_request(tmp_path: Path) -> None:
    gate = RequestGate(Agent(ScriptedModel([]), cwd=tmp_path))
    call = ToolCall("c1", "Read", {"path": "a"})
    history = [UserMessage.of("look \udc80 here"), ToolResult.of(call, "fine")]
    first = gate._scrubbed(ModelRequest("s", tuple(history)))
    assert first.messages[0].text == "look \ufffd here" and first.messages[1] is history[1]
    for more in ([ToolResult.of(call, "more")], []):  # the history grows, then a message is dropped
        history = history + more if more else [history[0], *history[2:]]
        again = gate._scrubbed(ModelRequest("s", tuple(history)))
        assert again.messages[0] is first.messages[0]
        assert [m is h for m, h in zip(again.messages[1:], history[1:], strict=True)] == [True] * (len(history) - 1)
    assert gate._scrubbed(ModelRequest("s", (UserMessage((TextPart("x \ud800"),)),))).messages[0].text == "x \ufffd"
