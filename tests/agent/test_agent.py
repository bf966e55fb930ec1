"""The agent loop, driven by the deterministic scripted model."""

from __future__ import annotations

import asyncio

import pytest

from sagent.agent.agent import INTERRUPTED, NOT_RUN_BUDGET, Agent, AgentError
from sagent.events import (
    ErrorEvent,
    MessageAdded,
    Result,
    Retrying,
    SessionStarted,
    TextDelta,
    ToolFinished,
    ToolStarted,
    TurnFinished,
)
from sagent.providers.base import AuthenticationError, RateLimitError, RetryPolicy
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.tools.base import ToolError, tool
from sagent.types import AssistantMessage, ToolCall, ToolResult, Usage, UserMessage


async def collect(agent: Agent, prompt: str | None = None) -> list:
    return [event async for event in agent.run(prompt)]


def result_of(events: list) -> Result:
    assert isinstance(events[-1], Result)
    return events[-1]


@tool
def echo(text: str) -> str:
    """Echo the text back.

    Args:
        text: what to echo
    """
    return f"echo: {text}"


async def test_plain_answer_streams_and_ends_with_a_result() -> None:
    model = ScriptedModel([text_turn("hello there, this is a longer answer")], chunk_size=8)
    agent = Agent(model)
    events = await collect(agent, "hi")
    assert isinstance(events[0], SessionStarted)
    assert isinstance(events[1], MessageAdded) and events[1].message == UserMessage.of("hi")
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 1 and "".join(deltas) == "hello there, this is a longer answer"
    result = result_of(events)
    assert result.subtype == "success" and not result.is_error
    assert result.text == "hello there, this is a longer answer"
    assert result.num_turns == 1
    assert [m.role for m in agent.history] == ["user", "assistant"]
    # The model saw the user's message.
    assert model.requests[0].messages == (UserMessage.of("hi"),)


async def test_ask_returns_the_final_message_and_raises_on_failure() -> None:
    agent = Agent(ScriptedModel([tool_turn(("echo", {"text": "x"})), text_turn("done")]), tools=[echo])
    message = await agent.ask("go")
    assert isinstance(message, AssistantMessage) and message.text == "done"
    failing = Agent(ScriptedModel([AuthenticationError("set ANTHROPIC_API_KEY", provider="anthropic")]))
    with pytest.raises(AgentError) as info:
        await failing.ask("go")
    assert info.value.result.subtype == "error_during_execution"
    assert "ANTHROPIC_API_KEY" in info.value.result.text


async def test_tool_round_results_go_back_to_the_model() -> None:
    model = ScriptedModel([tool_turn(("echo", {"text": "a"}), ("echo", {"text": "b"})), text_turn("ok")])
    agent = Agent(model, tools=[echo])
    events = await collect(agent, "go")
    started = [e.call.arguments["text"] for e in events if isinstance(e, ToolStarted)]
    finished = {e.result.text for e in events if isinstance(e, ToolFinished)}
    assert started == ["a", "b"]
    assert finished == {"echo: a", "echo: b"}
    second = model.requests[1].messages
    results = [m for m in second if isinstance(m, ToolResult)]
    assert {r.text for r in results} == {"echo: a", "echo: b"}
    assert result_of(events).subtype == "success"
    assert [t.name for t in model.requests[0].tools] == ["echo"]


async def test_tool_calls_of_one_response_run_concurrently() -> None:
    both_started = asyncio.Event()
    started: list[str] = []

    @tool
    async def wait_for_peer(name: str) -> str:
        """Wait until both calls have started.

        Args:
            name: a label
        """
        started.append(name)
        if len(started) == 2:
            both_started.set()
        # Deadlocks (and times out) unless both calls are in flight at once.
        await asyncio.wait_for(both_started.wait(), timeout=2)
        return name

    model = ScriptedModel(
        [tool_turn(("wait_for_peer", {"name": "a"}), ("wait_for_peer", {"name": "b"})), text_turn("ok")]
    )
    events = await collect(Agent(model, tools=[wait_for_peer]), "go")
    assert not any(isinstance(e, ToolFinished) and e.result.is_error for e in events)


async def test_calls_on_the_same_file_run_in_order(tmp_path) -> None:
    order: list[str] = []

    @tool(resource_arg="path")
    async def slow_write(path: str, text: str, delay: float) -> str:
        """Append text to a file after a delay.

        Args:
            path: the file
            text: what to append
            delay: seconds to wait first
        """
        await asyncio.sleep(delay)
        order.append(text)
        return "ok"

    model = ScriptedModel(
        [
            tool_turn(
                ("slow_write", {"path": "f.txt", "text": "first", "delay": 0.05}),
                ("slow_write", {"path": "other.txt", "text": "elsewhere", "delay": 0.0}),
                ("slow_write", {"path": "./f.txt", "text": "second", "delay": 0.0}),
            ),
            text_turn("ok"),
        ]
    )
    await collect(Agent(model, tools=[slow_write], cwd=tmp_path), "go")
    # The other file did not wait; the two calls on f.txt kept their order.
    assert order == ["elsewhere", "first", "second"]


async def test_failing_tools_become_error_results_not_crashes() -> None:
    @tool
    def boom() -> str:
        """Always fails."""
        raise RuntimeError("disk on fire")

    @tool
    def refuse() -> str:
        """Fails with a message for the model."""
        raise ToolError("file not found: x.py")

    bad_json = AssistantMessage((ToolCall("c9", "echo", {}, invalid_arguments='{"text": '),), stop_reason="tool_use")
    model = ScriptedModel(
        [
            tool_turn(("boom", {}), ("refuse", {}), ("nope", {}), ("echo", {"txt": 1})),
            bad_json,
            text_turn("recovered"),
        ]
    )
    events = await collect(Agent(model, tools=[boom, refuse, echo]), "go")
    errors = [e.result for e in events if isinstance(e, ToolFinished)]
    assert all(r.is_error for r in errors)
    texts = " | ".join(r.text for r in errors)
    assert "RuntimeError: disk on fire" in texts
    assert "file not found: x.py" in texts
    assert "unknown tool 'nope'" in texts and "echo" in texts
    assert "missing required argument(s): text" in texts
    assert "not a valid JSON object" in texts
    assert result_of(events).text == "recovered"


async def test_max_tool_rounds_stops_before_the_next_model_call() -> None:
    model = ScriptedModel([tool_turn(("echo", {"text": str(i)})) for i in range(5)])
    agent = Agent(model, tools=[echo], max_tool_rounds=2)
    result = result_of(await collect(agent, "loop"))
    assert result.subtype == "error_max_turns"
    assert "2 tool rounds" in result.text
    assert len(model.requests) == 2
    # The history is consistent: every call has its result, so the session can continue.
    assert isinstance(agent.history[-1], ToolResult)


async def test_budget_stops_the_run_before_the_next_paid_call() -> None:
    expensive = Usage(input_tokens=1_000_000)  # $3 on claude-sonnet-4-5
    model = ScriptedModel(
        [tool_turn(("echo", {"text": "x"}), usage=expensive), text_turn("never")], name="claude-sonnet-4-5"
    )
    agent = Agent(model, tools=[echo], max_budget_usd=1.0)
    events = await collect(agent, "spend")
    result = result_of(events)
    assert result.subtype == "error_max_budget_usd"
    assert result.total_cost_usd == pytest.approx(3.0)
    assert "budget" in result.text
    assert len(model.requests) == 1
    not_run = [e.result for e in events if isinstance(e, ToolFinished)]
    assert [r.text for r in not_run] == [NOT_RUN_BUDGET]


async def test_transient_errors_are_retried_and_reported() -> None:
    model = ScriptedModel([RateLimitError("slow down", retry_after=0.0), text_turn("fine")])
    agent = Agent(model, retry=RetryPolicy(max_retries=2))
    events = await collect(agent, "go")
    retries = [e for e in events if isinstance(e, Retrying)]
    assert len(retries) == 1 and retries[0].delay == 0.0 and "rate_limited" in retries[0].error
    assert result_of(events).text == "fine"


async def test_permanent_errors_end_the_run_with_a_clear_reason() -> None:
    model = ScriptedModel([AuthenticationError("ANTHROPIC_API_KEY is not set", provider="anthropic", status=401)])
    events = await collect(Agent(model), "go")
    error = next(e for e in events if isinstance(e, ErrorEvent))
    assert error.kind == "authentication"
    result = result_of(events)
    assert result.subtype == "error_during_execution"
    assert "HTTP 401" in result.text and "ANTHROPIC_API_KEY" in result.text


async def test_interrupt_mid_stream_keeps_the_partial_answer() -> None:
    model = ScriptedModel([text_turn("abcdefghij" * 10)], chunk_size=5, delay=0.0)
    slow = ScriptedModel([], chunk_size=5)

    async def slow_stream(request):  # a stream that waits between deltas
        async for event in ScriptedModel.stream(model, request):
            yield event
            await asyncio.sleep(0.01)

    slow.stream = slow_stream  # type: ignore[method-assign]
    agent = Agent(slow)
    events = []
    async for event in agent.run("talk"):
        events.append(event)
        if isinstance(event, TextDelta) and len(events) > 4:
            agent.interrupt()
    result = result_of(events)
    assert result.subtype == "interrupted"
    kept = agent.history[-1]
    assert isinstance(kept, AssistantMessage) and kept.stop_reason == "interrupted"
    assert 0 < len(kept.text) < 100 and "abcdefghij".startswith(kept.text[:10])
    assert any(isinstance(e, TurnFinished) for e in events)


async def test_interrupt_cancels_running_tools_and_answers_their_calls() -> None:
    cancelled = asyncio.Event()

    @tool
    async def hang() -> str:
        """Never finishes by itself."""
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "unreachable"

    agent = Agent(ScriptedModel([tool_turn(("hang", {}), ("echo", {"text": "quick"}))]), tools=[hang, echo])
    events = []
    async for event in agent.run("go"):
        events.append(event)
        if isinstance(event, ToolFinished):  # the quick call is done; hang is still running
            agent.interrupt()
    assert cancelled.is_set()
    assert result_of(events).subtype == "interrupted"
    results = {m.name: m for m in agent.history if isinstance(m, ToolResult)}
    assert results["echo"].text == "echo: quick"
    assert results["hang"].is_error and results["hang"].text == INTERRUPTED
    # The agent can be used again after an interrupt.
    agent.model = ScriptedModel([text_turn("back")])
    assert result_of(await collect(agent, "again")).text == "back"


async def test_input_sent_while_tools_run_arrives_after_the_round() -> None:
    agent_ref: list[Agent] = []

    @tool
    async def work() -> str:
        """Do some work."""
        agent_ref[0].send("also check the README")
        await asyncio.sleep(0.01)
        return "worked"

    model = ScriptedModel([tool_turn(("work", {})), text_turn("done both")])
    agent = Agent(model, tools=[work])
    agent_ref.append(agent)
    events = await collect(agent, "go")
    assert result_of(events).text == "done both"
    roles = [type(m).__name__ for m in model.requests[1].messages]
    assert roles == ["UserMessage", "AssistantMessage", "ToolResult", "UserMessage"]
    assert model.requests[1].messages[-1] == UserMessage.of("also check the README")


async def test_input_sent_while_streaming_the_answer_gets_its_own_answer() -> None:
    model = ScriptedModel([text_turn("first answer"), text_turn("second answer")], chunk_size=3)
    agent = Agent(model)
    sent = False
    events = []
    async for event in agent.run("one"):
        events.append(event)
        if isinstance(event, TextDelta) and not sent:
            agent.send("two")
            sent = True
    assert result_of(events).text == "second answer"
    assert len(model.requests) == 2
    assert model.requests[1].messages[-1] == UserMessage.of("two")


async def test_run_refuses_concurrent_use_and_empty_input() -> None:
    agent = Agent(ScriptedModel([text_turn("x")]))
    with pytest.raises(ValueError, match="nothing to run"):
        await collect(agent)
    gen = agent.run("a")
    await gen.__anext__()
    with pytest.raises(RuntimeError, match="already running"):
        await agent.run("b").__anext__()
    await gen.aclose()
