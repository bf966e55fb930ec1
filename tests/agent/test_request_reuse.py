"""What a request repeats of the last one reaches the provider as the same objects, so what is derived from
the system prompt and the tools (their encoding, their hash) is derived once, not each round."""

from __future__ import annotations

from dataclasses import replace

from sagent.agent.agent import Agent
from sagent.agent.hooks import Hook
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.tools.base import tool
from sagent.types import ModelRequest


@tool
async def shout(text: str) -> str:
    """Repeat the text in capitals."""
    return text.upper()


class Rebuild(Hook):
    """Hands on equal but new copies of the tools and the system prompt each request, as a hook that filters
    the tools does."""

    async def before_request(self, agent: Agent, request: ModelRequest) -> ModelRequest:
        return replace(request, system="".join(request.system), tools=tuple(list(request.tools)))


async def test_unchanged_tools_and_system_prompt_reach_the_model_as_the_objects_of_the_last_request() -> None:
    model = ScriptedModel([tool_turn(("shout", {"text": "a"})), tool_turn(("shout", {"text": "b"})), text_turn("ok")])
    agent = Agent(model, tools=[shout], system="Be brief " + "x" * 40, hooks=[Rebuild()])
    async for _ in agent.run("go"):
        pass
    first, *rest = model.requests
    assert len(rest) == 2
    for later in rest:
        assert later.tools is first.tools and later.system is first.system
