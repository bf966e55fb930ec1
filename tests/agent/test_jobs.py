"""Background jobs: tool calls the model, the user or a time limit sends to the background."""

from __future__ import annotations

import asyncio

from sagent.agent.agent import Agent
from sagent.events import Result, ToolFinished
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.tools import Jobs
from sagent.tools.base import tool
from sagent.types import ModelRequest, PeerMessage, ToolResult


def slow_tool(gate: asyncio.Event):
    @tool
    async def build(target: str) -> str:
        """Build a target.

        Args:
            target: what to build
        """
        await asyncio.wait_for(gate.wait(), 5)
        return f"built {target}"

    return build


async def run_to_end(agent: Agent, prompt: str | None = None) -> tuple[list, Result]:
    events = [event async for event in agent.run(prompt)]
    assert isinstance(events[-1], Result)
    return events, events[-1]


def tool_texts(request: ModelRequest) -> list[str]:
    return [m.text for m in request.messages if isinstance(m, ToolResult)]


async def test_a_call_the_model_backgrounds_answers_at_once_and_its_result_comes_later_as_a_message() -> None:
    gate = asyncio.Event()
    model = ScriptedModel(
        [
            tool_turn(("build", {"target": "docs", "background": True})),
            text_turn("docs are building; I will look when they are done"),
            lambda request: text_turn(f"got: {request.messages[-1].text}"),
        ]
    )
    agent = Agent(model, tools=[slow_tool(gate), Jobs()])
    # The model is offered the flag on every tool but the job tools themselves.
    build_spec = next(t for t in model_specs(agent) if t.name == "build")
    assert "background" in build_spec.input_schema["properties"]
    assert "background" not in next(t for t in model_specs(agent) if t.name == "Jobs").input_schema["properties"]

    events, result = await run_to_end(agent, "build the docs")
    answer = next(e.result for e in events if isinstance(e, ToolFinished))
    assert "started in the background as job-1" in answer.text and not answer.is_error
    assert result.subtype == "success" and agent.jobs.get("job-1").state == "running"

    gate.set()
    assert await agent.wait_for_input()
    _, later = await run_to_end(agent)
    message = agent.history[-2]
    assert isinstance(message, PeerMessage) and message.sender == "background job job-1"
    assert "build docs finished after" in message.text and message.text.endswith("built docs")
    assert later.text.startswith("got: build docs finished")
    # History was only appended to: the original answer to the call is unchanged.
    assert tool_texts(model.requests[-1])[0] == answer.text
    await agent.aclose()


def model_specs(agent: Agent):
    return agent.request().tools


async def test_a_call_past_the_time_limit_moves_to_the_background_and_wait_takes_its_result() -> None:
    gate = asyncio.Event()

    @tool
    async def release() -> str:
        """Let the build finish."""
        gate.set()
        return "released"

    model = ScriptedModel(
        [
            tool_turn(("build", {"target": "app"})),
            tool_turn(("release", {})),
            tool_turn(("Jobs", {"action": "wait", "id": "job-1", "timeout": 5})),
            tool_turn(("Jobs", {"action": "list"})),
            text_turn("done"),
        ]
    )
    agent = Agent(model, tools=[slow_tool(gate), release, Jobs()], background_after=0.05)
    events, result = await run_to_end(agent, "build the app")
    texts = [e.result.text for e in events if isinstance(e, ToolFinished)]
    assert texts[0].startswith("still running after 0 s, so it was moved to the background as job-1")
    assert texts[2].startswith("build app finished after") and texts[2].endswith("built app")
    assert "job-1  done" in texts[3]
    # The wait took the result: no message brings it a second time.
    assert not any(isinstance(m, PeerMessage) for m in agent.history)
    assert result.text == "done" and not agent.has_pending_input
    await agent.aclose()


async def test_a_cancelled_job_sends_nothing_and_the_user_can_background_a_running_call() -> None:
    gate = asyncio.Event()
    model = ScriptedModel(
        [
            tool_turn(("build", {"target": "all"})),
            tool_turn(("Jobs", {"action": "cancel", "id": "job-1"}), ("Jobs", {"action": "wait", "id": "job-9"})),
            text_turn("cancelled it"),
        ]
    )
    agent = Agent(model, tools=[slow_tool(gate), Jobs()])
    events = []
    async for event in agent.run("build everything"):
        events.append(event)
        if getattr(event, "type", "") == "tool_started":
            agent.background()  # what Ctrl+B does in the REPL; calls on jobs themselves stay
    texts = [e.result for e in events if isinstance(e, ToolFinished)]
    assert "moved to the background as job-1" in texts[0].text
    assert texts[1].text == "cancelled job-1"
    assert texts[2].is_error and "no job 'job-9'; the jobs are: job-1" in texts[2].text
    assert agent.jobs.get("job-1").state == "cancelled"
    gate.set()
    await asyncio.sleep(0.01)
    assert not agent.has_pending_input and events[-1].text == "cancelled it"
    await agent.aclose()


async def test_a_foreground_job_keeps_the_run_going_until_its_result_arrives() -> None:
    gate = asyncio.Event()
    model = ScriptedModel(
        [
            tool_turn(("build", {"target": "lib", "background": True})),
            text_turn("waiting"),
            lambda request: text_turn(f"now: {request.messages[-1].text}"),
        ]
    )
    agent = Agent(model, tools=[slow_tool(gate), Jobs()])
    events = []
    async for event in agent.run("build lib"):
        events.append(event)
        if isinstance(event, ToolFinished):
            agent.foreground("job-1")
            asyncio.get_running_loop().call_later(0.05, gate.set)
    result = events[-1]
    assert isinstance(result, Result) and result.text.startswith("now: build lib finished")
    assert result.num_turns == 3
    await agent.aclose()


async def test_a_background_job_that_fails_reads_as_failed() -> None:
    @tool
    async def flaky(target: str) -> str:
        """Fail on a target.

        Args:
            target: what to try
        """
        raise RuntimeError(f"cannot build {target}")

    model = ScriptedModel(
        [tool_turn(("flaky", {"target": "docs", "background": True})), text_turn("started"), text_turn("seen")]
    )
    agent = Agent(model, tools=[flaky, Jobs()])
    await run_to_end(agent, "try")
    job = agent.jobs.get("job-1")
    await asyncio.wait_for(job.done.wait(), 5)
    assert job.state == "done" and job.status == "failed"
    assert job.line().split()[:2] == ["job-1", "failed"]
    await agent.aclose()
