"""The Anthropic provider through the real `anthropic` SDK against the fake Messages server."""

from __future__ import annotations

import subprocess
import sys

import pytest

from sagent.events import ResponseComplete, Retrying, TextDelta, ThinkingDelta
from sagent.providers.anthropic import AnthropicModel, convert_history, tool_id
from sagent.providers.base import (
    AuthenticationError,
    ContextTooLongError,
    OverloadedError,
    ProviderConnectionError,
    RetryPolicy,
    stream_with_retry,
)
from sagent.types import (
    AssistantMessage,
    ImagePart,
    ModelRequest,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResult,
    ToolSpec,
    UserMessage,
)
from tests.fakes.anthropic_server import (
    FakeAnthropic,
    Fault,
    Reply,
    fault_429,
    fault_529,
    raw_tool_json_response,
    text_response,
    thinking_response,
    tool_use_response,
)

REQUEST = ModelRequest(
    system="be brief",
    messages=(UserMessage.of("hi"),),
    tools=(ToolSpec("Read", "read a file", {"type": "object", "properties": {"path": {"type": "string"}}}),),
)


async def collect(model, request=REQUEST, policy=None):
    sleeps: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        sleeps.append(seconds)

    events = [e async for e in stream_with_retry(model, request, policy or RetryPolicy(max_retries=0), fake_sleep)]
    return events, sleeps


def model_for(fake: FakeAnthropic) -> AnthropicModel:
    return AnthropicModel("claude-sonnet-4-6", api_key="sk-test", base_url=fake.url)


async def test_streamed_text_and_usage_with_cache_tokens() -> None:
    reply = text_response("Hello, this streams in pieces.", cache_read_input_tokens=900, cache_creation_input_tokens=50)
    with FakeAnthropic([reply]) as fake:
        events, _ = await collect(model_for(fake))
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 1 and "".join(deltas) == "Hello, this streams in pieces."
    message = events[-1].message
    assert isinstance(events[-1], ResponseComplete) and message.text == "Hello, this streams in pieces."
    assert message.usage.input_tokens == 100 and message.usage.output_tokens == 20
    assert message.usage.cache_read_tokens == 900 and message.usage.cache_write_tokens == 50
    assert message.response_id == "msg_fake01" and message.stop_reason == "end_turn"


async def test_a_model_keeps_its_connection_between_requests_when_the_server_does() -> None:
    # The per-round gap the start-up benchmark measures must not include a new connection each round.
    with FakeAnthropic([text_response(word) for word in ("one", "two", "three", "four")]) as fake:
        fake.keep_alive = True
        model = model_for(fake)
        for _ in range(2):
            events, _ = await collect(model)
            assert isinstance(events[-1], ResponseComplete)
        fake.keep_alive = False
        await collect(model)
        await collect(model_for(fake))  # another client: a connection of its own
        await model.aclose()
    first, second, third, other = (r["peer"] for r in fake.requests)
    assert first == second == third and other != first


async def test_tool_use_with_partial_json_and_cache_breakpoints() -> None:
    with FakeAnthropic([tool_use_response([("Read", {"path": "src/app.py", "offset": 3})])]) as fake:
        events, _ = await collect(model_for(fake))
        body = fake.requests[0]["body"]
        headers = fake.requests[0]["headers"]
    (call,) = events[-1].message.tool_calls
    assert call.name == "Read" and call.arguments == {"path": "src/app.py", "offset": 3}
    assert events[-1].message.stop_reason == "tool_use"
    assert body["stream"] is True and body["model"] == "claude-sonnet-4-6"
    assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    sent = {k.lower(): v for k, v in headers.items()}
    assert "sk-test" in (sent.get("x-api-key", "") + sent.get("authorization", ""))


async def test_thinking_signature_is_kept_and_sent_back() -> None:
    with FakeAnthropic([thinking_response("let me think", "sig-abc123", "42"), text_response("ok")]) as fake:
        model = model_for(fake)
        events, _ = await collect(model, ModelRequest("", (UserMessage.of("q"),), thinking_budget=2048))
        assert "".join(e.text for e in events if isinstance(e, ThinkingDelta)) == "let me think"
        message = events[-1].message
        thinking = message.content[0]
        assert isinstance(thinking, ThinkingPart) and thinking.signature == "sig-abc123"
        first = fake.requests[0]["body"]
        assert first["thinking"] == {"type": "enabled", "budget_tokens": 2048} and first["max_tokens"] > 2048
        await collect(model, ModelRequest("", (UserMessage.of("q"), message, UserMessage.of("more"))))
        sent = fake.requests[1]["body"]["messages"][1]["content"][0]
    assert sent == {"type": "thinking", "thinking": "let me think", "signature": "sig-abc123"}


async def test_429_is_retried_after_retry_after() -> None:
    with FakeAnthropic([fault_429(retry_after=7), text_response("after the wait")]) as fake:
        events, sleeps = await collect(model_for(fake), policy=RetryPolicy(max_retries=2))
    assert sleeps == [7.0]
    assert isinstance(events[0], Retrying) and "rate_limited" in events[0].error
    assert events[-1].message.text == "after the wait"


async def test_529_overloaded_is_typed_and_transient() -> None:
    with FakeAnthropic([fault_529()]) as fake, pytest.raises(OverloadedError) as info:
        await collect(model_for(fake))
    assert info.value.status == 529 and info.value.transient


async def test_a_stream_cut_midway_is_retried_from_the_start() -> None:
    cut = Reply([{"type": "text", "text": "this answer will be cut"}], cut_after=4)
    with FakeAnthropic([cut, text_response("whole answer")]) as fake:
        events, _ = await collect(model_for(fake), policy=RetryPolicy(max_retries=1, base_delay=0))
    assert any(isinstance(e, Retrying) and "connection" in e.error for e in events)
    assert events[-1].message.text == "whole answer"
    with FakeAnthropic([cut]) as fake, pytest.raises(ProviderConnectionError):
        await collect(model_for(fake))


async def test_malformed_tool_arguments_become_invalid_arguments() -> None:
    with FakeAnthropic([raw_tool_json_response("Read", '{"path": "a.py"')]) as fake:
        events, _ = await collect(model_for(fake))
    (call,) = events[-1].message.tool_calls
    assert call.arguments == {} and call.invalid_arguments == '{"path": "a.py"'


async def test_auth_and_context_errors_are_typed() -> None:
    with (
        FakeAnthropic([Fault(401, "authentication_error", "invalid x-api-key")]) as fake,
        pytest.raises(AuthenticationError) as auth,
    ):
        await collect(model_for(fake))
    assert auth.value.status == 401 and not auth.value.transient
    too_long = Fault(400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum")
    with FakeAnthropic([too_long]) as fake, pytest.raises(ContextTooLongError):
        await collect(model_for(fake))


async def test_a_missing_key_names_the_variable(monkeypatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(AuthenticationError, match="ANTHROPIC_API_KEY"):
        await collect(AnthropicModel("claude-sonnet-4-6"))


def test_history_merges_tool_results_remaps_ids_and_degrades_foreign_thinking() -> None:
    foreign = AssistantMessage(
        (
            ThinkingPart("pondering", "opaque", "openai"),
            ToolCall("call:1/x", "Read", {"path": "a"}),
            ToolCall("ok_2", "Read", {}),
        ),
        provider="openai",
    )
    history = (
        UserMessage.of("go"),
        foreign,
        ToolResult.of(ToolCall("call:1/x", "Read"), "one"),
        ToolResult.of(ToolCall("ok_2", "Read"), "two", is_error=True),
        UserMessage.of("and this"),
    )
    turns = convert_history(history)
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assistant = turns[1]["content"]
    assert assistant[0] == {"type": "text", "text": "<thinking>pondering</thinking>"}
    assert assistant[1]["id"] == tool_id("call:1/x") != "call:1/x" and assistant[2]["id"] == "ok_2"
    merged = turns[2]["content"]
    assert [b["type"] for b in merged] == ["tool_result", "tool_result", "text"]
    assert merged[0]["tool_use_id"] == assistant[1]["id"] and merged[1]["is_error"] is True
    # A result of one text goes as a plain string, and `is_error` only when true: fewer bytes in every request.
    assert merged[0]["content"] == "one" and "is_error" not in merged[0] and merged[1]["content"] == "two"


def test_a_tool_result_with_an_image_keeps_its_blocks() -> None:
    call = ToolCall("c1", "Read", {"path": "shot.png"})
    result = ToolResult(call.id, "Read", (TextPart("the screenshot"), ImagePart("aGk=", "image/png")))
    (turn,) = convert_history((result,))
    (block,) = turn["content"]
    assert [b["type"] for b in block["content"]] == ["text", "image"] and "is_error" not in block
    (empty,) = convert_history((ToolResult(call.id, "Read", ()),))[0]["content"]
    assert empty["content"] == "(no output)"


def test_importing_the_provider_does_not_import_the_sdk() -> None:
    code = "import sys, sagent.providers.anthropic; print('anthropic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False"
