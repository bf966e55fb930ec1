"""The fault matrix: every provider, through its official SDK against its fake server, meets each failure a
real API or network produces, and a real Agent still finishes the task: the failed response is discarded
and sent again whole, and a tool call that was cut or malformed is never run."""

from __future__ import annotations

import json
import socket
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from sagent.agent.agent import Agent
from sagent.events import Result, Retrying, ToolFinished
from sagent.providers.base import RetryPolicy
from sagent.providers.faults import StreamCutError, classify, classify_or_raise
from sagent.tools.base import tool
from sagent.types import AssistantMessage, ToolResult
from tests.fakes import anthropic_server as anth
from tests.fakes import openai_chat_server as chat
from tests.fakes import openai_responses_server as resp
from tests.fakes.sse_server import Drop, FakeServer, Faulty, Stream
from tests.providers.dialects import DIALECTS, Dialect

IDLE = 0.5  # the models' idle limit here, in seconds: a paused stream is given up on quickly
FAST = RetryPolicy(max_retries=3, base_delay=0.01)  # retry-after is still honoured in full
INTRO = "Let me count the words in that sentence for you."
ARGS = {"text": "the quick brown fox"}
ANSWER = "There are four words."


class Counter:
    """A tool that records every call it really runs."""

    def __init__(self) -> None:
        self.runs: list[str] = []

        @tool
        def Count(text: str) -> str:
            """Count the words in a text.

            Args:
                text: the text
            """
            self.runs.append(text)
            return f"{len(text.split())} words"

        self.tool = Count


def wire_events(fake: FakeServer, d: Dialect, step: Any) -> list[str]:
    """What the fake streams for `step`, one string per SSE event."""
    request = {"path": f"/v1beta/models/{d.model_id}:streamGenerateContent", "body": {"model": d.model_id}}
    stream = fake._render(step, request)  # type: ignore[attr-defined]
    return [data if isinstance(data, str) else json.dumps(data) for _, data in stream.events]


def cut_points(fake: FakeServer, d: Dialect, turn: Any) -> tuple[int, int]:
    """(before any content, after the text and into the tool call) as event counts for `turn`."""
    events = wire_events(fake, d, turn)
    before = next(i for i, e in enumerate(events) if "Let" in e)
    call = next(i for i, e in enumerate(events) if '"Count"' in e)
    # Cut just after the call starts (its arguments unsent); Gemini sends a call whole, so cut before it.
    after = call if d.name == "google" else call + 1
    assert 0 <= before < after < len(events)
    return before, after


# An error the server sends inside a stream that had started well (HTTP 200), as each API words it.
ERROR_EVENTS: dict[str, tuple[str | None, dict[str, Any]]] = {
    "anthropic": ("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    "openai": ("error", {"type": "error", "code": "server_error", "message": "The server had an error", "param": None}),
    "openai-compat": (None, {"error": {"message": "upstream overloaded", "code": 503}}),
    "google": (None, {"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}),
}


def error_mid_stream(fake: FakeServer, d: Dialect, turn: Any, after: int) -> Stream:
    request = {"path": f"/v1beta/models/{d.model_id}:streamGenerateContent", "body": {"model": d.model_id}}
    events = fake._render(turn, request).events  # type: ignore[attr-defined]
    return Stream([*events[:after], ERROR_EVENTS[d.name]])


def first_step(name: str, d: Dialect, fake: FakeServer, turn: Any) -> list[Any]:
    """The steps that inject fault `name` in front of the good turn."""
    before, after = cut_points(fake, d, turn)
    if name == "429":
        return [d.fault(429, "rate limited, slow down", 1)]
    if name == "overloaded":
        return [d.fault(d.overloaded_status, "overloaded", None)]
    if name == "500":
        return [d.fault(500, "internal error", None)]
    if name == "cut_before_content":
        return [Faulty(turn, cut_after=before, chunked=True)]
    if name == "cut_after_content":
        return [Faulty(turn, cut_after=after, chunked=True)]
    if name == "idle":
        return [Faulty(turn, pause=(after, IDLE * 6))]
    if name == "reset":
        return [Faulty(turn, reset_after=after)]
    if name == "reset_before_response":
        return [Drop()]
    if name == "malformed_chunk":
        return [Faulty(turn, garble=after)]
    if name == "error_event":
        return [lambda request: error_mid_stream(fake, d, turn, after)]
    if name == "malformed_tool_json":
        return [d.malformed_call("Count", '{"text": "the quick')]
    raise AssertionError(name)


FAULTS = [
    "429",
    "overloaded",
    "500",
    "cut_before_content",
    "cut_after_content",
    "idle",
    "reset",
    "reset_before_response",
    "malformed_chunk",
    "error_event",
    "malformed_tool_json",
]


async def run_task(
    d: Dialect, steps: list[Any], tmp_path: Path, counter: Counter, fake: FakeServer, **options: Any
) -> tuple[list[Any], Agent]:
    fake.add(*steps)
    agent = Agent(d.model(fake.url, **options), tools=[counter.tool], cwd=tmp_path, retry=FAST, max_tool_rounds=5)
    try:
        return [e async for e in agent.run("How many words are in 'the quick brown fox'?")], agent
    finally:
        await agent.aclose()


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("d", DIALECTS, ids=[d.name for d in DIALECTS])
async def test_the_task_finishes_through_every_fault(d: Dialect, fault: str, tmp_path: Path) -> None:
    counter = Counter()
    turn = d.turn(INTRO, [("Count", ARGS)])
    with d.server([]) as fake:
        steps = [*first_step(fault, d, fake, turn), turn, d.text(ANSWER)]
        options = {"idle_timeout": IDLE} if fault == "idle" else {}
        events, agent = await run_task(d, steps, tmp_path, counter, fake, **options)
        requests = len(fake.requests)
    result = events[-1]
    assert isinstance(result, Result) and result.subtype == "success", result
    assert result.text == ANSWER
    # The tool ran once, with the whole arguments: never from a cut or malformed call.
    assert counter.runs == [ARGS["text"]]
    assert requests == 3
    retries = [e for e in events if isinstance(e, Retrying)]
    finished = [e.result for e in events if isinstance(e, ToolFinished)]
    told_invalid = [r for r in finished if r.is_error and "not a valid JSON object" in r.text]
    if fault == "malformed_tool_json" and d.name != "google":
        # The model gets its broken call back as an error and calls again; nothing is retried.
        assert not retries and len(told_invalid) == 1
    else:
        assert len(retries) == 1 and not told_invalid
    if fault == "429":
        assert retries[0].delay == 1.0  # the server's retry-after, not the backoff
    # A response that failed part-way left nothing behind: the history holds each whole reply once.
    replies = [m.text for m in agent.history if isinstance(m, AssistantMessage)]
    assert replies[-2:] == [INTRO, ANSWER] and len(replies) == 2 + len(told_invalid)


@pytest.mark.parametrize("d", DIALECTS, ids=[d.name for d in DIALECTS])
async def test_a_partial_response_is_discarded_and_the_history_holds_the_whole_one(d: Dialect, tmp_path: Path) -> None:
    counter = Counter()
    turn = d.turn(INTRO, [("Count", ARGS)])
    with d.server([]) as fake:
        _, after = cut_points(fake, d, turn)
        agent = Agent(d.model(fake.url), tools=[counter.tool], cwd=tmp_path, retry=FAST)
        fake.add(Faulty(turn, cut_after=after, chunked=True), turn, d.text(ANSWER))
        events = [e async for e in agent.run("count")]
        await agent.aclose()
        second_request = fake.bodies()[-1]
    assert isinstance(events[-1], Result) and events[-1].subtype == "success"
    replies = [m for m in agent.history if isinstance(m, AssistantMessage)]
    assert [m.text for m in replies] == [INTRO, ANSWER]
    assert [c.arguments for c in replies[0].tool_calls] == [ARGS]
    results = [m for m in agent.history if isinstance(m, ToolResult)]
    assert len(results) == 1 and results[0].text == "4 words"
    # What the model is sent holds the intro once: the cut attempt's text was dropped.
    assert json.dumps(second_request).count(INTRO) == 1


PERSISTENT = ["cut_before_content", "reset", "500", "malformed_chunk"]
NAMED = {
    "cut_before_content": "cut before the response was complete",
    "reset": "connection reset",
    "500": "internal error",
    "malformed_chunk": "malformed chunk",
}


@pytest.mark.parametrize("fault", PERSISTENT)
@pytest.mark.parametrize("d", DIALECTS, ids=[d.name for d in DIALECTS])
async def test_a_fault_that_persists_ends_with_one_clear_error_after_the_cap(
    d: Dialect, fault: str, tmp_path: Path
) -> None:
    counter = Counter()
    turn = d.turn(INTRO, [("Count", ARGS)])
    with d.server([]) as fake:
        steps = [s for _ in range(FAST.max_retries + 1) for s in first_step(fault, d, fake, turn)]
        events, _ = await run_task(d, steps, tmp_path, counter, fake)
        requests = len(fake.requests)
        url = fake.url
    result = events[-1]
    assert isinstance(result, Result) and result.subtype == "error_during_execution"
    assert NAMED[fault] in result.text and "\n" not in result.text
    if fault != "500":  # a transport failure names where it happened
        assert url.split("/v1")[0] in result.text
    assert requests == FAST.max_retries + 1 and counter.runs == []
    assert len([e for e in events if isinstance(e, Retrying)]) == FAST.max_retries


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("d", DIALECTS, ids=[d.name for d in DIALECTS])
async def test_an_unreachable_endpoint_is_named_in_the_error(d: Dialect, tmp_path: Path) -> None:
    suffix = "/v1" if d.name.startswith("openai") else ""
    url = f"http://127.0.0.1:{closed_port()}{suffix}"
    agent = Agent(d.model(url), cwd=tmp_path, retry=FAST)
    events = [e async for e in agent.run("hi")]
    await agent.aclose()
    result = events[-1]
    assert isinstance(result, Result) and result.is_error
    assert f"cannot reach {url}: connection refused" in result.text
    assert len([e for e in events if isinstance(e, Retrying)]) == FAST.max_retries


def truncated_call(d: Dialect, raw: str) -> Any:
    """A reply whose tool call was cut off by the output-token limit: the stream itself is complete."""
    if d.name == "anthropic":
        return replace(anth.raw_tool_json_response("Count", raw), stop_reason="max_tokens")
    if d.name == "openai":
        item = {"type": "function_call", "call_id": "call_cut", "name": "Count", "arguments": raw}
        return resp.ResponsesReply([item], status="incomplete")
    return [*chat.tool_chunks([("Count", raw)])[:-1], chat.chunk({}, "length")]


# Gemini sends a call whole or not at all (see malformed_tool_json above), so it cannot be cut this way.
@pytest.mark.parametrize("d", [d for d in DIALECTS if d.name != "google"], ids=lambda d: d.name)
async def test_a_tool_call_cut_by_the_token_limit_is_never_run(d: Dialect, tmp_path: Path) -> None:
    counter = Counter()
    turn = d.turn(INTRO, [("Count", ARGS)])
    with d.server([]) as fake:
        steps = [truncated_call(d, '{"text": "the quick brown fox jumps over the la'), turn, d.text(ANSWER)]
        events, _ = await run_task(d, steps, tmp_path, counter, fake)
    assert isinstance(events[-1], Result) and events[-1].subtype == "success"
    assert counter.runs == [ARGS["text"]]
    refused = [e.result for e in events if isinstance(e, ToolFinished) and e.result.is_error]
    assert len(refused) == 1 and "not a valid JSON object" in refused[0].text


def test_a_defect_is_not_mistaken_for_a_network_fault() -> None:
    """Only transport and parse failures are retried: a bug in sagent's own code surfaces as it is."""
    defect = KeyError("index")
    assert classify(defect, provider="anthropic", endpoint="http://x") is None
    with pytest.raises(KeyError):
        classify_or_raise(defect, provider="anthropic", endpoint="http://x")
    # The same failure wrapped the way the SDKs wrap it is still recognised through its causes.
    try:
        try:
            raise ConnectionResetError(104, "Connection reset by peer")
        except ConnectionResetError as inner:
            raise RuntimeError("Connection error.") from inner
    except RuntimeError as outer:
        fault = classify(outer, provider="openai", endpoint="http://x/v1")
    assert isinstance(fault, StreamCutError) and fault.transient and "connection reset" in fault.message
