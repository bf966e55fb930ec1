"""A tool call that waits for its approval has not run: nothing moves it to the background (a message, the
time limit, the user), a call the model backgrounds starts as a job only once approved, its duration counts
from when it started running, and an interrupt stops it and the jobs its run started."""

from __future__ import annotations

import asyncio
import json
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sagent.agent import rounds
from sagent.agent.agent import Agent
from sagent.agent.hooks import ALLOW, Allow, Ask, Deny, Hook
from sagent.agent.session import SessionLog
from sagent.events import Event, Result, ToolFinished
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.tools import Jobs
from sagent.tools.base import tool
from sagent.types import ToolCall, ToolResult, UserMessage


class AskEveryCall(Hook):
    async def before_tool(self, agent: Agent, call: ToolCall) -> Ask:
        return Ask("the test asks")


class Person:
    """An approver that answers when the test says so."""

    def __init__(self) -> None:
        self.asked: list[ToolCall] = []
        self.answer: asyncio.Future[Allow | Deny] | None = None

    async def __call__(self, agent: Agent, call: ToolCall, reason: str) -> Allow | Deny:
        self.asked.append(call)
        self.answer = asyncio.get_running_loop().create_future()
        try:
            return await self.answer
        finally:
            self.answer = None

    async def asked_about(self, count: int) -> None:
        await _until(lambda: len(self.asked) >= count and self.answer is not None)

    def says(self, answer: Allow | Deny) -> None:
        assert self.answer is not None
        self.answer.set_result(answer)


async def _until(condition: Callable[[], bool]) -> None:
    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0.01)

    await asyncio.wait_for(poll(), 20)


ran: list[str] = []


@tool
async def build(target: str) -> str:
    """Build a target.

    Args:
        target: what to build
    """
    ran.append(target)
    return f"built {target}"


def agent_for(model: ScriptedModel, person: Person, **settings: object) -> Agent:
    ran.clear()
    return Agent(model, tools=[build, Jobs()], hooks=[AskEveryCall()], approver=person, **settings)  # type: ignore[arg-type]


async def collect(agent: Agent, prompt: str, into: list[Event]) -> None:
    async for event in agent.run(prompt):
        into.append(event)


async def test_a_message_sent_while_a_call_waits_for_approval_does_not_move_it_to_the_background() -> None:
    model = ScriptedModel([tool_turn(("build", {"target": "app"})), text_turn("built it, and read your note")])
    person = Person()
    agent = agent_for(model, person, input_preempts=True, background_after=0.2)
    events: list[Event] = []
    run = asyncio.create_task(collect(agent, "build the app", events))
    await person.asked_about(1)
    agent.send("and tell me when it is done")
    agent.background()  # what Ctrl+B asks for
    await asyncio.sleep(1.0)  # past the preemption delay and the time limit
    assert agent.jobs.all() == [] and ran == []  # nothing moved, nothing ran
    assert not [e for e in events if isinstance(e, ToolFinished)]
    person.says(ALLOW)
    await asyncio.wait_for(run, 20)
    [finished] = [e for e in events if isinstance(e, ToolFinished)]
    assert finished.result.text == "built app" and ran == ["app"]
    second = model.requests[1].messages
    assert isinstance(second[-2], ToolResult) and second[-2].text == "built app"
    assert second[-1] == UserMessage.of("and tell me when it is done")
    await agent.aclose()


async def test_a_call_the_model_backgrounds_starts_as_a_job_only_once_approved() -> None:
    model = ScriptedModel(
        [
            tool_turn(("build", {"target": "app", "background": True})),
            tool_turn(("build", {"target": "docs", "background": True})),
            text_turn("one ran, one did not"),
        ]
    )
    person = Person()
    agent = agent_for(model, person)
    events: list[Event] = []
    run = asyncio.create_task(collect(agent, "build both", events))
    await person.asked_about(1)
    assert agent.jobs.all() == [] and not [e for e in events if isinstance(e, ToolFinished)]
    person.says(Deny("not now"))
    await person.asked_about(2)
    person.says(ALLOW)
    await asyncio.wait_for(run, 20)
    denied, started = [e.result for e in events if isinstance(e, ToolFinished)]
    assert denied.is_error and denied.text == "denied: not now" and "background" not in denied.text
    assert started.text.startswith("started in the background as job-1")
    [job] = agent.jobs.all()
    assert job.call.arguments["target"] == "docs"
    await asyncio.wait_for(job.done.wait(), 20)
    assert ran == ["docs"] and job.result is not None and job.result.text == "built docs"
    await agent.aclose()


async def test_an_interrupt_while_a_call_waits_for_approval_says_it_never_ran() -> None:
    model = ScriptedModel([tool_turn(("build", {"target": "app"}))])
    person = Person()
    agent = agent_for(model, person)
    events: list[Event] = []
    run = asyncio.create_task(collect(agent, "build", events))
    await person.asked_about(1)
    agent.interrupt()
    await asyncio.wait_for(run, 20)
    [finished] = [e for e in events if isinstance(e, ToolFinished)]
    assert finished.result.is_error and finished.result.text.startswith("not run: ")
    assert ran == []
    await agent.aclose()


def serving_until(release: asyncio.Event) -> Any:
    """A `serve` tool whose calls run until `release` is set (a server the model starts as a job)."""

    @tool
    async def serve(port: int) -> str:
        """Serve on a port until the test ends it.

        Args:
            port: the port
        """
        await release.wait()
        return f"served {port}"

    return serve


async def test_an_interrupt_stops_the_jobs_its_run_started_and_their_results_never_arrive() -> None:
    release = asyncio.Event()
    serve = serving_until(release)

    model = ScriptedModel(
        [
            tool_turn(("serve", {"port": 1, "background": True})),
            tool_turn(("serve", {"port": 2, "background": True})),
            tool_turn(("build", {"target": "app"})),
        ]
    )
    person = Person()
    agent = Agent(model, tools=[serve, build, Jobs()], hooks=[AskEveryCall()], approver=person)
    events: list[Event] = []
    run = asyncio.create_task(collect(agent, "serve twice, then build", events))
    for count in (1, 2, 3):
        await person.asked_about(count)
        if count < 3:
            person.says(ALLOW)
    assert [j.state for j in agent.jobs.all()] == ["running", "running"]
    agent.interrupt()
    await asyncio.wait_for(run, 20)
    assert isinstance(events[-1], Result) and events[-1].subtype == "interrupted"
    assert [j.state for j in agent.jobs.all()] == ["cancelled", "cancelled"]
    release.set()
    await asyncio.sleep(0.1)
    assert not agent.has_pending_input  # no late result waits to start a turn
    await agent.aclose()


async def test_a_calls_duration_counts_from_when_it_started_not_from_its_question(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    clock = [1000.0]
    monkeypatch.setattr(rounds, "time", types.SimpleNamespace(monotonic=lambda: clock[0]))

    @tool
    async def compile_it(target: str) -> str:
        """Compile, which takes two seconds on the test's clock.

        Args:
            target: what to compile
        """
        clock[0] += 2.0
        return f"compiled {target}"

    model = ScriptedModel([tool_turn(("compile_it", {"target": "app"})), text_turn("done")])

    class SlowPerson(Person):
        async def __call__(self, agent: Agent, call: ToolCall, reason: str) -> Allow | Deny:
            clock[0] += 60.0  # the person thought about it for a minute
            return ALLOW

    log = SessionLog.create(tmp_path, {"provider": "scripted", "model": "scripted"})
    agent = Agent(model, tools=[compile_it], hooks=[AskEveryCall()], approver=SlowPerson(), session=log)
    events: list[Event] = []
    await collect(agent, "compile", events)
    [finished] = [e for e in events if isinstance(e, ToolFinished)]
    assert finished.duration_ms == pytest.approx(2000.0)
    await agent.aclose()
    assert log.path is not None
    logged = [json.loads(line) for line in log.path.read_text().splitlines()]
    [entry] = [e for e in logged if "tool_finished" in json.dumps(e)]
    assert '"duration_ms": 2000.0' in json.dumps(entry)  # the session log has the same time


async def test_after_an_interrupt_an_earlier_jobs_result_waits_for_the_next_input() -> None:
    release = asyncio.Event()
    serve = serving_until(release)

    model = ScriptedModel(
        [
            tool_turn(("serve", {"port": 1, "background": True})),
            text_turn("serving"),
            tool_turn(("build", {"target": "app"})),
            text_turn("saw it all"),
        ]
    )
    person = Person()
    agent = Agent(model, tools=[serve, build, Jobs()], hooks=[AskEveryCall()], approver=person)
    first = asyncio.create_task(collect(agent, "serve", []))
    await person.asked_about(1)
    person.says(ALLOW)
    await asyncio.wait_for(first, 20)
    second = asyncio.create_task(collect(agent, "build", []))
    await person.asked_about(2)
    agent.interrupt()
    await asyncio.wait_for(second, 20)
    [job] = agent.jobs.all()
    assert job.state == "running"  # a job of an earlier run goes on
    waiting = asyncio.create_task(agent.wait_for_input())  # what the REPL does while idle
    release.set()
    await asyncio.wait_for(job.done.wait(), 20)
    await asyncio.sleep(0.1)
    assert not waiting.done() and not agent.has_pending_input  # its result starts nothing by itself
    waiting.cancel()
    events: list[Event] = []
    await collect(agent, "what happened?", events)
    sent = model.requests[-1].messages
    assert [type(m).__name__ for m in sent[-2:]] == ["PeerMessage", "UserMessage"]
    assert "served 1" in sent[-2].text and sent[-1] == UserMessage.of("what happened?")
    await agent.aclose()
