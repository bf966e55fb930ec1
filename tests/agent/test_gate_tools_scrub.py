"""The tools a request offers are scrubbed of lone surrogates once and the scrubbed copy reused while the
same tools come again: every request of a session must still offer them scrubbed."""

from __future__ import annotations

from pathlib import Path

from sagent.agent.agent import Agent
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.tools.base import tool


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
