"""Every provider answers the same questions the same way: each one through its official SDK against a fake
server speaking its real wire format (see dialects.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sagent.agent.agent import Agent
from sagent.events import ResponseComplete, Retrying, TextDelta, ThinkingDelta, ToolCallDelta, ToolFinished
from sagent.providers.base import (
    AuthenticationError,
    ContextTooLongError,
    OverloadedError,
    ProviderError,
    RateLimitError,
    RetryPolicy,
    ServerError,
    stream_with_retry,
)
from sagent.providers.catalog import cost_of
from sagent.tools import builtin_tools
from sagent.types import AssistantMessage, ModelRequest, ThinkingPart, ToolResult, ToolSpec, UserMessage
from tests.providers.dialects import DIALECTS, GOOGLE_INTERACTIONS, Dialect

TOOLS = (ToolSpec("Read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}}),)
LONG = "The quick brown fox jumps over the lazy dog, and then it naps in the warm afternoon sun."

EVERY = (*DIALECTS, GOOGLE_INTERACTIONS)  # Gemini twice: generateContent, and the Interactions API it resumes on
pytestmark = pytest.mark.parametrize("d", EVERY, ids=[d.name for d in EVERY])


async def collect(d: Dialect, steps: list[Any], history: tuple[Any, ...] | None = None, retries: int = 0):
    """Stream one request through the dialect's model; returns (events, sleeps, request bodies)."""
    sleeps: list[float] = []

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    request = ModelRequest("You are terse.", history or (UserMessage.of("hi"),), TOOLS, cache_key="s1")
    with d.server(steps) as fake:
        model = d.model(fake.url)
        try:
            events = [e async for e in stream_with_retry(model, request, RetryPolicy(max_retries=retries), sleep)]
        finally:
            await model.aclose()  # type: ignore[attr-defined]
        return events, sleeps, fake.bodies()


def final(events: list[Any]) -> AssistantMessage:
    assert isinstance(events[-1], ResponseComplete)
    return events[-1].message


async def test_plain_text_streams_in_pieces(d: Dialect) -> None:
    events, _, _ = await collect(d, [d.text(LONG)])
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    message = final(events)
    assert len(deltas) > 1 and "".join(deltas) == LONG
    assert message.text == LONG and message.stop_reason == "end_turn" and message.tool_calls == ()
    assert message.model == d.model_id and message.provider


async def test_parallel_tool_calls_and_their_results_go_back_with_matching_ids(d: Dialect) -> None:
    calls = [("Read", {"path": "a.py"}), ("Read", {"path": "docs/b.md"})]
    events, _, _ = await collect(d, [d.tools(calls)])
    message = final(events)
    assert message.stop_reason == "tool_use"
    assert [(c.name, c.arguments) for c in message.tool_calls] == calls
    assert len({c.id for c in message.tool_calls}) == 2
    streamed = {e.name for e in events if isinstance(e, ToolCallDelta) and e.name}
    assert streamed == {"Read"}

    results = tuple(ToolResult.of(c, f"contents of {c.arguments['path']}") for c in message.tool_calls)
    history = (UserMessage.of("hi"), message, *results)
    _, _, bodies = await collect(d, [d.text("done")], history)
    sent_calls, sent_results = d.call_ids_sent(bodies[0]), d.result_ids_sent(bodies[0])
    assert len(sent_calls) == 2 and sent_results == sent_calls
    assert "contents of docs/b.md" in str(bodies[0])


async def test_thinking_streams_and_its_signature_goes_back(d: Dialect) -> None:
    events, _, _ = await collect(d, [d.thinking("Let me weigh both options.", "c2lnLTAwMQ==", "Option B.")])
    message = final(events)
    assert "".join(e.text for e in events if isinstance(e, ThinkingDelta)) == "Let me weigh both options."
    assert message.text == "Option B."
    thoughts = [p for p in message.content if isinstance(p, ThinkingPart)]
    assert thoughts and all(p.provider == message.provider for p in thoughts)
    assert "".join(p.text for p in thoughts) == "Let me weigh both options."

    _, _, bodies = await collect(d, [d.text("ok")], (UserMessage.of("hi"), message, UserMessage.of("why?")))
    if d.keeps_signatures:
        assert d.signature_sent(bodies[0]) == "c2lnLTAwMQ=="
    else:
        assert "weigh both" not in str(bodies[0])  # no field carries it; it is not passed off as an answer


async def test_usage_and_cost_come_from_the_catalog(d: Dialect) -> None:
    events, _, _ = await collect(d, [d.usage(1000, 400, 50)])
    usage = final(events).usage
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (1000, 400, 50)
    cost = cost_of(final(events).model, usage)
    inp, out, read = d.prices
    assert cost.priced and cost.total == pytest.approx((1000 * inp + 50 * out + 400 * read) / 1e6)


FAULTS = [
    (429, "rate limited, slow down", RateLimitError),
    (None, "overloaded", OverloadedError),
    (401, "invalid api key", AuthenticationError),
    (400, "prompt is too long: 250000 tokens > 200000 maximum", ContextTooLongError),
    (500, "internal error", ServerError),
]


@pytest.mark.parametrize(("status", "message", "kind"), FAULTS, ids=[f[2].__name__ for f in FAULTS])
async def test_faults_become_the_same_typed_errors(
    d: Dialect, status: int | None, message: str, kind: type[ProviderError]
) -> None:
    status = status or d.overloaded_status
    with pytest.raises(kind) as raised:
        await collect(d, [d.fault(status, message, None)])
    assert raised.value.transient == (kind in (RateLimitError, OverloadedError, ServerError))
    if raised.value.transient:  # and those are retried, then succeed
        events, sleeps, _ = await collect(d, [d.fault(status, message, None), d.text("recovered")], retries=2)
        assert final(events).text == "recovered" and len(sleeps) == 1


async def test_rate_limit_waits_as_long_as_the_server_asks(d: Dialect) -> None:
    events, sleeps, bodies = await collect(d, [d.fault(429, "slow down", 3), d.text("ok")], retries=1)
    assert sleeps == [3.0] and final(events).text == "ok" and len(bodies) == 2


async def test_a_cut_stream_is_retried_from_the_start(d: Dialect) -> None:
    events, _, bodies = await collect(d, [d.cut(LONG), d.text(LONG)], retries=1)
    retry = next(i for i, e in enumerate(events) if isinstance(e, Retrying))
    after = "".join(e.text for e in events[retry:] if isinstance(e, TextDelta))
    assert after == LONG and final(events).text == LONG and len(bodies) == 2


async def test_the_agent_completes_a_tool_round(d: Dialect, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("the answer is 42\n")
    with d.server([d.tools([("Read", {"path": "notes.txt"})]), d.text("It says 42.")]) as fake:
        agent = Agent(d.model(fake.url), tools=builtin_tools(), cwd=tmp_path)
        events = [e async for e in agent.run("What do the notes say?")]
        await agent.aclose()
        second = fake.bodies()[1]
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert len(finished) == 1 and not finished[0].result.is_error
    assert "the answer is 42" in str(second)
    assert agent.history[-1].text == "It says 42."
