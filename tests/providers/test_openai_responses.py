"""What is particular to the Responses API: stateless requests, encrypted reasoning, incomplete and failed
responses. The shared behaviour is in test_conformance.py."""

from __future__ import annotations

import pytest

from sagent.events import ResponseComplete
from sagent.providers.base import ContextTooLongError, RateLimitError
from sagent.providers.openai_responses import OpenAIModel, convert_history
from sagent.types import AssistantMessage, ImagePart, ModelRequest, TextPart, ToolCall, ToolResult, UserMessage
from tests.fakes.openai_responses_server import FakeResponses, ResponsesReply, responses_text, stream_events
from tests.fakes.sse_server import Stream

REQUEST = ModelRequest("Be brief.", (UserMessage.of("hi"),), cache_key="session-42", effort="high")


async def stream(steps: list, model_id: str = "gpt-5.4", request: ModelRequest = REQUEST):
    with FakeResponses(steps) as fake:
        model = OpenAIModel(model_id, base_url=fake.url, api_key="test")
        try:
            events = [e async for e in model.stream(request)]
        finally:
            await model.aclose()
        return events, fake.requests


async def test_requests_are_stateless_with_encrypted_reasoning_and_a_cache_key() -> None:
    _, requests = await stream([responses_text("hello")])
    body, headers = requests[0]["body"], requests[0]["headers"]
    assert requests[0]["path"] == "/v1/responses" and headers["authorization"] == "Bearer test"
    assert body["store"] is False and body["prompt_cache_key"] == "session-42"
    assert body["instructions"] == "Be brief." and body["stream"] is True
    assert body["reasoning"] == {"summary": "auto", "effort": "high"}
    assert body["include"] == ["reasoning.encrypted_content"]


async def test_a_model_that_does_not_reason_gets_no_reasoning_parameters() -> None:
    plain = ModelRequest("s", (UserMessage.of("hi"),), temperature=0.2)
    _, requests = await stream([responses_text("ok")], "gpt-4.1", plain)
    body = requests[0]["body"]
    assert "reasoning" not in body and "include" not in body and body["temperature"] == 0.2


async def test_incomplete_is_max_tokens_and_failed_is_a_typed_error() -> None:
    events, _ = await stream([ResponsesReply([{"type": "message", "text": "cut sh"}], status="incomplete")])
    assert isinstance(events[-1], ResponseComplete) and events[-1].message.stop_reason == "max_tokens"
    assert events[-1].message.text == "cut sh"
    limited = ResponsesReply([], status="failed", error={"code": "rate_limit_exceeded", "message": "slow down"})
    with pytest.raises(RateLimitError):
        await stream([limited])
    too_long = ResponsesReply([], status="failed", error={"code": "context_length_exceeded", "message": "too long"})
    with pytest.raises(ContextTooLongError):
        await stream([too_long])


def test_history_carries_images_errors_and_invalid_arguments_as_given() -> None:
    image = ImagePart("aGVsbG8=", "image/png")
    bad = ToolCall("call_x", "Edit", {}, invalid_arguments='{"path": ')
    history = (
        UserMessage((TextPart("look"), image)),
        AssistantMessage((bad,)),
        ToolResult("call_x", "Edit", (TextPart("arguments are not valid JSON"),), is_error=True),
    )
    user, call, output = convert_history(history)
    assert user["content"][1] == {"type": "input_image", "image_url": "data:image/png;base64,aGVsbG8="}
    assert call["arguments"] == '{"path": '  # the model sees what it actually sent
    assert output == {
        "type": "function_call_output",
        "call_id": "call_x",
        "output": "Error: arguments are not valid JSON",
    }


async def test_a_model_keeps_its_connection_between_requests_when_the_server_does() -> None:
    # The stream is read to its end after `response.completed`, so the connection goes back to the pool:
    # a tool loop must not open a new connection (with TLS, a new handshake) every round.
    with FakeResponses([responses_text(word) for word in ("one", "two", "three")]) as fake:
        fake.keep_alive = True
        model = OpenAIModel("gpt-5.4", base_url=fake.url, api_key="test")
        try:
            for word in ("one", "two", "three"):
                events = [e async for e in model.stream(REQUEST)]
                assert isinstance(events[-1], ResponseComplete) and events[-1].message.text == word
        finally:
            await model.aclose()
    assert len({r["peer"] for r in fake.requests}) == 1


async def test_a_stream_that_stays_open_after_the_response_completed_does_not_hold_the_answer() -> None:
    # A server that keeps the stream open past `response.completed` (here: silent for 30 s before one more
    # event) still gives the complete answer: the rest is read only for a short while, then dropped.
    events = stream_events(responses_text("done"), "gpt-5.4")
    late = {"type": "response.output_text.done", "sequence_number": len(events)}
    held = Stream([(e["type"], e) for e in [*events, late]], pause=(len(events), 30.0), chunked=True)
    with FakeResponses([held]) as fake:
        fake.keep_alive = True
        model = OpenAIModel("gpt-5.4", base_url=fake.url, api_key="test")
        try:
            got = [e async for e in model.stream(REQUEST)]
            still_sending = "answered" not in fake.requests[0]
        finally:
            await model.aclose()
    assert isinstance(got[-1], ResponseComplete) and got[-1].message.text == "done"
    assert still_sending  # the answer came while the server still held the stream open
