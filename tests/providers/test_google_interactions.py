"""Resume instead of replay on Gemini's Interactions API (fake server, through the SDK): after the first
request only the new steps go out with `previous_interaction_id`; a history that no longer begins with
what the stored interaction holds, or an interaction the server has lost, sends the whole history."""

from __future__ import annotations

from pathlib import Path

import pytest

from sagent.agent.agent import Agent
from sagent.events import TextDelta, ThinkingDelta, ToolCallDelta
from sagent.providers.base import RateLimitError
from sagent.providers.faults import MalformedResponseError, StreamCutError, StreamIdleError
from sagent.providers.google_interactions import ResumingGoogleModel
from sagent.tools import Read
from sagent.types import ModelRequest, ResponseSchema, TextPart, ThinkingPart, ToolCall, UserMessage
from tests.fakes.gemini_server import (
    FakeGemini,
    Fault,
    gemini_text,
    gemini_thinking,
    gemini_tools,
    interaction_events,
)
from tests.fakes.sse_server import Faulty, Stream


async def test_a_tool_round_then_a_lost_interaction_sends_the_whole_history(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("print('a')\n")
    steps = [
        gemini_tools([("Read", {"path": "a.py"})], signature="c2lnMQ=="),
        gemini_text("a.py prints a.", cachedContentTokenCount=40),
        Fault(404, "Interaction 'int_fake02' not found."),
        gemini_text("Still a."),
    ]
    with FakeGemini(steps) as fake:
        model = ResumingGoogleModel("gemini-3-flash-preview", api_key="test", base_url=fake.url)
        agent = Agent(model, tools=[Read()], cwd=tmp_path, system="Be brief.")
        async for _ in agent.run("what does a.py print?"):
            pass
        async for _ in agent.run("and now?"):
            pass
        await agent.aclose()
        first, second, lost, again = (r["body"] for r in fake.requests)
    assert all(r["path"] == "/v1beta/interactions" for r in fake.requests)
    assert first["store"] is True and "previous_interaction_id" not in first
    assert [s["type"] for s in first["input"]] == ["user_input"]
    assert first["tools"][0]["name"] == "Read" and first["system_instruction"] == "Be brief."
    # The tool round: only the function's result goes, after the stored interaction.
    assert second["previous_interaction_id"] == "int_fake01"
    assert [s["type"] for s in second["input"]] == ["function_result"]
    assert second["input"][0]["call_id"] == "call_1" and "print('a')" in second["input"][0]["result"]
    # The next turn: only the new user message; the server has lost it, so the whole history follows,
    # the signed call with its thought signature in place.
    assert lost["previous_interaction_id"] == "int_fake02"
    assert lost["input"] == [{"type": "user_input", "content": [{"type": "text", "text": "and now?"}]}]
    assert "previous_interaction_id" not in again
    kinds = [s["type"] for s in again["input"]]
    assert kinds == ["user_input", "thought", "function_call", "function_result", "model_output", "user_input"]
    assert again["input"][1]["signature"] == "c2lnMQ==" and again["input"][2]["arguments"] == {"path": "a.py"}
    assert (model.resumed, model.full) == (2, 2)
    answer = agent.history[3]
    assert answer.usage.input_tokens == 60 and answer.usage.cache_read_tokens == 40
    assert [m.text for m in agent.history if getattr(m, "role", "") == "user"] == ["what does a.py print?", "and now?"]


async def test_a_history_that_no_longer_begins_with_the_stored_one_is_sent_whole() -> None:
    steps = [gemini_thinking("Let me think.", "c2ln", "Hello."), gemini_text("Again.")]
    with FakeGemini(steps) as fake:
        model = ResumingGoogleModel("gemini-3-flash-preview", api_key="test", base_url=fake.url)
        ask = (UserMessage.of("hi"),)
        events = [e async for e in model.stream(ModelRequest("", ask, effort="max"))]
        # A compaction (or a switch) replaced the history: the stored interaction no longer matches it.
        shaped = ResponseSchema("answer", {"type": "object"})  # structured output, as the Interactions API asks it
        again = ModelRequest("", (UserMessage.of("summary"), UserMessage.of("go on")), response_schema=shaped)
        [e async for e in model.stream(again)]
        await model.aclose()
        first, second = (r["body"] for r in fake.requests)
    assert "".join(e.text for e in events if isinstance(e, ThinkingDelta)) == "Let me think."
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello."
    message = events[-1].message  # type: ignore[union-attr]
    # The summary's thought step, then the signature's (it signs the text after it), then the text.
    signed = (ThinkingPart("Let me think.", None, "google"), ThinkingPart("", "c2ln", "google"), TextPart("Hello."))
    assert message.content == signed
    assert first["generation_config"]["thinking_level"] == "xhigh"
    assert "previous_interaction_id" not in second and len(second["input"]) == 2
    assert second["response_format"] == {"type": "text", "mime_type": "application/json", "schema": {"type": "object"}}
    assert (model.resumed, model.full) == (0, 2)


async def test_tool_calls_stream_as_deltas_with_their_arguments() -> None:
    with FakeGemini([gemini_tools([("Read", {"path": "a.py"}), ("Read", {"path": "b.py"})])]) as fake:
        model = ResumingGoogleModel("gemini-3-flash-preview", api_key="test", base_url=fake.url)
        events = [e async for e in model.stream(ModelRequest("", (UserMessage.of("read both"),)))]
        await model.aclose()
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert [(d.index, d.name) for d in deltas] == [(0, "Read"), (1, "Read")]
    message = events[-1].message  # type: ignore[union-attr]
    assert message.stop_reason == "tool_use"
    assert [p for p in message.content if isinstance(p, ToolCall)][1].arguments == {"path": "b.py"}


async def test_faults_are_sagents_typed_errors() -> None:
    """A rate limit with Google's message and wait, a cut stream, arguments that do not parse, a stalled stream."""
    broken = interaction_events(gemini_tools([("Read", {"path": "a.py"})]), "int_fake03")
    broken[2]["delta"]["arguments"] = '{"path": "a.'  # arguments that do not parse
    steps = [
        Fault(429, "Quota exceeded.", headers={"retry-after": "3"}),
        Faulty(gemini_text("cut short"), cut_after=3),
        Stream([(e["event_type"], e) for e in broken]),
        Faulty(gemini_text("stalls"), pause=(2, 5)),
    ]
    with FakeGemini(steps) as fake:
        model = ResumingGoogleModel("gemini-3-flash-preview", api_key="test", base_url=fake.url, idle_timeout=0.5)
        request = ModelRequest("", (UserMessage.of("hi"),))
        with pytest.raises(RateLimitError) as limited:
            [e async for e in model.stream(request)]
        with pytest.raises(StreamCutError):
            [e async for e in model.stream(request)]
        with pytest.raises(MalformedResponseError, match="malformed tool call"):
            [e async for e in model.stream(request)]
        with pytest.raises(StreamIdleError):
            [e async for e in model.stream(request)]
        await model.aclose()
    assert str(limited.value) == "Quota exceeded." and limited.value.retry_after == 3.0


def test_google_resumes_only_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    from sagent.providers.google import GoogleModel
    from sagent.providers.registry import Choice, build_model, resumes

    monkeypatch.setenv("GEMINI_API_KEY", "test")
    kinds = {mode: type(build_model(Choice("google", None), resume_mode=mode)) for mode in ("replay", "auto", "resume")}
    assert kinds == {"replay": GoogleModel, "auto": ResumingGoogleModel, "resume": ResumingGoogleModel}
    assert resumes("google")
