"""The OpenAI-compatible provider through the real `openai` SDK against the fake Chat Completions server."""

from __future__ import annotations

import pytest

from sagent.events import ResponseComplete, TextDelta
from sagent.providers.base import RateLimitError, RetryPolicy, stream_with_retry
from sagent.providers.openai_compat import OpenAICompatModel, call_id, convert_history
from sagent.types import (
    AssistantMessage,
    ImagePart,
    ModelRequest,
    TextPart,
    ToolCall,
    ToolResult,
    ToolSpec,
    UserMessage,
)
from tests.fakes.openai_chat_server import FakeChat, chunk, text_chunks, tool_chunks

TOOLS = (ToolSpec("Read", "read", {"type": "object", "properties": {"path": {"type": "string"}}}),)
REQUEST = ModelRequest("sys", (UserMessage.of("hi"),), TOOLS)


async def run(fake: FakeChat, model: OpenAICompatModel | None = None, policy: RetryPolicy | None = None):
    model = model or OpenAICompatModel("m", base_url=fake.url, api_key="k")
    sleeps: list[float] = []

    async def sleep(s: float) -> None:
        sleeps.append(s)

    events = [e async for e in stream_with_retry(model, REQUEST, policy or RetryPolicy(max_retries=0), sleep)]
    return events, sleeps


async def test_text_with_cached_usage() -> None:
    usage = {
        "prompt_tokens": 50,
        "completion_tokens": 5,
        "total_tokens": 55,
        "prompt_tokens_details": {"cached_tokens": 40},
    }
    with FakeChat([text_chunks("hello world", usage)]) as fake:
        events, _ = await run(fake)
        body = fake.requests[0]["body"]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "hello world"
    message = events[-1].message
    assert isinstance(events[-1], ResponseComplete) and message.text == "hello world"
    assert (message.usage.input_tokens, message.usage.cache_read_tokens, message.usage.output_tokens) == (10, 40, 5)
    assert body["stream_options"] == {"include_usage": True} and body["tool_choice"] == "auto"
    assert body["messages"][0] == {"role": "system", "content": "sys"}


async def test_parallel_tool_calls_split_over_deltas_and_malformed_arguments() -> None:
    with FakeChat([tool_chunks([("Read", '{"path": "a.py"}'), ("Read", '{"path": ')])]) as fake:
        events, _ = await run(fake)
    good, bad = events[-1].message.tool_calls
    assert good.arguments == {"path": "a.py"} and good.id == "call_0"
    assert bad.arguments == {} and bad.invalid_arguments == '{"path": '
    assert events[-1].message.stop_reason == "tool_use" and events[-1].message.usage.input_tokens == 0


async def test_429_retry_after_and_tool_choice_refusal() -> None:
    refuse = (400, {"error": {"message": "tool_choice is not supported"}})
    limited = (429, {"error": {"message": "slow down"}}, {"retry-after": "3"})
    with FakeChat([limited, refuse, text_chunks("ok")]) as fake:
        model = OpenAICompatModel("m", base_url=fake.url, api_key="k")
        events, sleeps = await run(fake, model, RetryPolicy(max_retries=1))
        sent = fake.bodies()
    assert sleeps == [3.0] and events[-1].message.text == "ok"
    assert "tool_choice" in sent[1] and "tool_choice" not in sent[2] and not model.supports_tool_choice
    with FakeChat([limited]) as fake, pytest.raises(RateLimitError):
        await run(fake)


async def test_a_stream_without_finish_is_a_connection_error() -> None:
    from sagent.providers.base import ProviderConnectionError

    with FakeChat([[chunk({"content": "partial"})]]) as fake, pytest.raises(ProviderConnectionError):
        await run(fake)


def test_history_uses_empty_content_with_tool_calls_and_remaps_ids() -> None:
    call = ToolCall("toolu:01/x", "Read", {"path": "a"})
    history = (UserMessage.of("go"), AssistantMessage((call,)), ToolResult.of(call, "text"))
    user, assistant, tool = convert_history(history)
    assert user == {"role": "user", "content": "go"}
    assert assistant["content"] == "" and assistant["tool_calls"][0]["id"] == call_id("toolu:01/x") != "toolu:01/x"
    assert tool == {"role": "tool", "tool_call_id": call_id("toolu:01/x"), "content": "text"}


def test_images_of_tool_results_follow_the_tool_messages_as_one_user_message() -> None:
    calls = (ToolCall("c1", "Read", {"path": "a.png"}), ToolCall("c2", "Read", {"path": "b.txt"}))
    history = (
        UserMessage.of("look"),
        AssistantMessage(calls),
        ToolResult("c1", "Read", (TextPart("a.png: PNG image"), ImagePart("aW1n", "image/png"))),
        ToolResult("c2", "Read", (TextPart("text"),)),
        AssistantMessage((TextPart("A red square."),)),
    )
    roles = [m["role"] for m in convert_history(history)]
    assert roles == ["user", "assistant", "tool", "tool", "user", "assistant"]  # tool messages stay together
    image_turn = convert_history(history)[4]["content"]
    assert image_turn == [{"type": "image_url", "image_url": {"url": "data:image/png;base64,aW1n"}}]
    assert convert_history(history[:3])[-1]["content"] == image_turn  # also when the history ends there
