"""What is particular to Gemini: thinking configuration, signatures placed back on their parts, blocked
prompts, and keys. The shared behaviour is in test_conformance.py."""

from __future__ import annotations

import pytest

from sagent.events import ResponseComplete
from sagent.providers.base import AuthenticationError
from sagent.providers.google import GoogleModel, convert_history
from sagent.types import AssistantMessage, ImagePart, ModelRequest, TextPart, ThinkingPart, ToolCall, UserMessage
from tests.fakes.gemini_server import FakeGemini, GeminiReply, gemini_text


async def stream(steps: list, request: ModelRequest, model_id: str = "gemini-3-flash-preview"):
    with FakeGemini(steps) as fake:
        model = GoogleModel(model_id, base_url=fake.url, api_key="g-test")
        try:
            events = [e async for e in model.stream(request)]
        finally:
            await model.aclose()
        return events, fake.requests


def keys(d: dict) -> dict:
    """The API reads both spellings of a field (thinking_budget, thinkingBudget); compare either."""
    return {k.replace("_", "").lower(): v for k, v in d.items()}


async def test_thinking_configuration_and_the_key_header() -> None:
    budget = ModelRequest("sys", (UserMessage.of("hi"),), thinking_budget=2048, max_tokens=500)
    _, requests = await stream([gemini_text("ok")], budget)
    body, headers = requests[0]["body"], requests[0]["headers"]
    assert ":streamGenerateContent" in requests[0]["path"] and headers["x-goog-api-key"] == "g-test"
    config = keys(body["generationConfig"])
    assert keys(config["thinkingconfig"]) == {"thinkingbudget": 2048, "includethoughts": True}
    assert config["maxoutputtokens"] == 500 and body["systemInstruction"]["parts"] == [{"text": "sys"}]
    level = ModelRequest("sys", (UserMessage.of("hi"),), effort="low")
    _, requests = await stream([gemini_text("ok")], level)
    config = keys(requests[0]["body"]["generationConfig"])
    assert keys(config["thinkingconfig"]) == {"thinkinglevel": "LOW", "includethoughts": True}


async def test_a_blocked_prompt_is_a_refusal_not_a_crash() -> None:
    blocked = GeminiReply([{"text": ""}], finish="SAFETY")
    events, _ = await stream([blocked], ModelRequest("", (UserMessage.of("hi"),)))
    assert isinstance(events[-1], ResponseComplete) and events[-1].message.stop_reason == "refusal"


async def test_no_key_is_an_authentication_error_naming_the_variables() -> None:
    model = GoogleModel("gemini-3-flash-preview")
    with pytest.raises(AuthenticationError, match="GEMINI_API_KEY"):
        [e async for e in model.stream(ModelRequest("", (UserMessage.of("hi"),)))]


def test_signatures_go_back_on_the_parts_they_came_on() -> None:
    message = AssistantMessage(
        (
            ThinkingPart("planning", None, "google"),
            ThinkingPart("", "c2lnLWE=", "google"),
            ToolCall("g1", "Read", {"path": "a"}),
            ToolCall("g2", "Read", {"path": "b"}),
            TextPart("and"),
            ThinkingPart("", "c2lnLWI=", "google"),  # a signature that came last, on an empty chunk
        ),
        "google",
    )
    (user, model) = convert_history((UserMessage((TextPart("hi"), ImagePart("aGVsbG8=", "image/png"))), message))
    assert user["parts"][1]["inlineData"] == {"mime_type": "image/png", "data": "aGVsbG8="}
    thought, first, second, text = model["parts"]
    assert thought["thought"] and thought["text"] == "planning"
    assert first["functionCall"]["name"] == "Read" and first["thoughtSignature"] == "c2lnLWE="
    assert "thoughtSignature" not in second
    assert text["text"] == "and" and text["thoughtSignature"] == "c2lnLWI="
