"""A user message with an attached image, sent by `Agent.run` through each provider's official SDK to its
fake server: the request body holds the image in that provider's own shape, after the typed text."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from sagent.agent.agent import Agent
from sagent.attachments import attach
from sagent.providers.anthropic import AnthropicModel
from sagent.providers.base import Model
from sagent.providers.google import GoogleModel
from sagent.providers.openai_compat import OpenAICompatModel
from sagent.providers.openai_responses import OpenAIModel
from sagent.types import TextPart, UserMessage
from tests.fakes.anthropic_server import FakeAnthropic, text_response
from tests.fakes.gemini_server import FakeGemini, gemini_text
from tests.fakes.openai_chat_server import FakeChat, text_chunks
from tests.fakes.openai_responses_server import FakeResponses, responses_text

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(17) + b"\xff\xfe"  # bytes that differ in base64url
DATA = base64.b64encode(PNG).decode()


@pytest.fixture
def message(tmp_path: Path) -> UserMessage:
    (tmp_path / "shot.png").write_bytes(PNG)
    return UserMessage((TextPart("what is this?"), *attach("shot.png", tmp_path).parts))


async def ask(model: Model, message: UserMessage) -> str:
    agent = Agent(model)
    try:
        return (await agent.run(message)).text
    finally:
        await agent.aclose()


async def test_anthropic_gets_a_base64_image_block(message: UserMessage) -> None:
    with FakeAnthropic([text_response("a PNG")]) as fake:
        assert await ask(AnthropicModel("claude-sonnet-4-6", api_key="k", base_url=fake.url), message) == "a PNG"
        blocks = fake.requests[0]["body"]["messages"][0]["content"]
    assert blocks[0] == {"type": "text", "text": "what is this?"}
    assert blocks[1]["text"].startswith('<image path="shot.png" type="image/png"')
    assert blocks[2]["type"] == "image"  # the last block also carries the cache breakpoint
    assert blocks[2]["source"] == {"type": "base64", "media_type": "image/png", "data": DATA}


async def test_openai_chat_gets_an_image_url_data_url(message: UserMessage) -> None:
    with FakeChat([text_chunks("a PNG")]) as fake:
        assert await ask(OpenAICompatModel("m", base_url=fake.url, api_key="k"), message) == "a PNG"
        content = fake.requests[0]["body"]["messages"][-1]["content"]
    assert content[0] == {"type": "text", "text": "what is this?"}
    assert content[2] == {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{DATA}"}}


async def test_openai_responses_gets_an_input_image(message: UserMessage) -> None:
    with FakeResponses([responses_text("a PNG")]) as fake:
        assert await ask(OpenAIModel("gpt-5.4", base_url=fake.url, api_key="k"), message) == "a PNG"
        content = fake.requests[0]["body"]["input"][-1]["content"]
    assert content[0] == {"type": "input_text", "text": "what is this?"}
    assert content[2] == {"type": "input_image", "image_url": f"data:image/png;base64,{DATA}"}


async def test_gemini_gets_inline_data(message: UserMessage) -> None:
    with FakeGemini([gemini_text("a PNG")]) as fake:
        assert await ask(GoogleModel("gemini-3-flash-preview", base_url=fake.url, api_key="g"), message) == "a PNG"
        parts = fake.requests[0]["body"]["contents"][-1]["parts"]
    assert parts[0] == {"text": "what is this?"}
    inline = parts[2].get("inlineData") or parts[2]["inline_data"]
    assert inline["mime_type" if "mime_type" in inline else "mimeType"] == "image/png"
    assert base64.urlsafe_b64decode(inline["data"]) == PNG
