"""A message never waits on long tool calls: one that arrives while the agent waits on a stuck one-shot
child (or any long call) is read at once, the calls going on as background jobs that report when done."""

from __future__ import annotations

import asyncio

from sagent import Agent, PeerMessage
from sagent.events import MessageAdded
from sagent.providers.scripted import RoutedModel, ScriptedModel, text_turn, tool_turn
from sagent.tools import AgentSend, AgentSpawn, Jobs
from sagent.tools.base import tool
from sagent.types import AssistantMessage, UserMessage

gates: dict[str, asyncio.Event] = {}  # made inside each test's event loop


def release() -> asyncio.Event:
    return gates.setdefault("release", asyncio.Event())


@tool
async def slow(what: str) -> str:
    """Wait until the test lets it finish.

    Args:
        what: a name
    """
    await release().wait()
    return f"{what} finished"


def test_a_message_preempts_a_long_call_which_goes_on_as_a_job_and_reports_later() -> None:
    async def main() -> None:
        gates.clear()
        model = ScriptedModel(
            [tool_turn(("slow", {"what": "the build"})), text_turn("read the message"), text_turn("saw the result")]
        )
        agent = Agent(model, tools=[slow, Jobs()])
        added: list[object] = []

        async def drive() -> None:
            async for event in agent.run("build it"):
                if isinstance(event, MessageAdded):
                    added.append(event.message)

        run = asyncio.create_task(drive())
        while not model.requests:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)  # the call is running now
        agent.send(PeerMessage("peer", "urgent"))
        await asyncio.wait_for(_until(lambda: PeerMessage("peer", "urgent") in added), 30)
        [job] = agent.jobs.running()  # still running, not killed
        assert job.call.name == "slow"
        release().set()
        await asyncio.wait_for(run, 30)
        if not job.done.is_set():  # the run ended first: its result arrives as input for the next one
            assert await asyncio.wait_for(agent.wait_for_input(), 30)
        assert job.result is not None and "the build finished" in job.result.text  # it reports when done
        await agent.aclose()

    asyncio.run(main())


def test_a_message_that_arrives_while_the_model_answers_still_preempts_the_long_call_it_asked_for() -> None:
    """The race behind a flaky served-agent test: a peer's message taken in while the model streams its
    tool call (before the round starts) must not wait for that call to finish."""

    async def main() -> None:
        gates.clear()
        agent: Agent | None = None

        def while_answering(request: object) -> AssistantMessage:
            assert agent is not None
            agent.send(PeerMessage("peer", "urgent"))  # arrives during the model phase
            return tool_turn(("slow", {"what": "the build"}))

        model = ScriptedModel([while_answering, text_turn("read the message"), text_turn("saw the result")])
        agent = Agent(model, tools=[slow, Jobs()])
        added: list[object] = []

        async def drive() -> None:
            async for event in agent.run("build it"):
                if isinstance(event, MessageAdded):
                    added.append(event.message)

        run = asyncio.create_task(drive())
        await asyncio.wait_for(_until(lambda: PeerMessage("peer", "urgent") in added), 30)
        [job] = agent.jobs.running()  # the call went on in the background, not killed
        assert job.call.name == "slow"
        release().set()
        await asyncio.wait_for(run, 30)
        await agent.aclose()

    asyncio.run(main())


def test_a_peer_message_reaches_a_parent_waiting_on_a_stuck_one_shot_child() -> None:
    async def main() -> None:
        gates.clear()
        model = RoutedModel(
            {
                "main": [
                    tool_turn(
                        ("AgentSpawn", {"prompt": "build", "label": "stuck"}),
                        ("AgentSpawn", {"prompt": "tell main", "label": "talker", "persistent": True}),
                    ),
                    text_turn("heard the talker"),
                    text_turn("more"),
                    text_turn("more"),
                ],
                "stuck": [tool_turn(("slow", {"what": "child"})), text_turn("child done")],
                "talker": [tool_turn(("AgentSend", {"to": "main", "message": "hello parent"})), text_turn("sent")],
            }
        )
        agent = Agent(model, tools=[slow, AgentSpawn(), AgentSend(), Jobs()], max_budget_usd=None)
        heard = asyncio.Event()

        async def drive() -> None:
            async for event in agent.run("go"):
                if isinstance(event, MessageAdded) and event.message == PeerMessage("talker", "hello parent"):
                    heard.set()

        run = asyncio.create_task(drive())
        await asyncio.wait_for(heard.wait(), 30)  # the stuck child has not finished
        assert not release().is_set()
        release().set()
        await asyncio.wait_for(run, 30)
        await agent.aclose()

    asyncio.run(main())


async def _until(check) -> None:  # type: ignore[no-untyped-def]
    while not check():
        await asyncio.sleep(0.01)


def test_a_persons_message_preempts_a_long_call_when_input_preempts_is_on_and_waits_when_off() -> None:
    async def scenario(input_preempts: bool) -> tuple[list[object], list[str]]:
        gates.clear()
        model = ScriptedModel(
            [tool_turn(("slow", {"what": "the build"})), text_turn("read it"), text_turn("saw the result")]
        )
        agent = Agent(model, tools=[slow, Jobs()], input_preempts=input_preempts)
        added: list[object] = []

        async def drive() -> None:
            async for event in agent.run("build it"):
                if isinstance(event, MessageAdded):
                    added.append(event.message)

        run = asyncio.create_task(drive())
        while not model.requests:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)  # the call is running now
        agent.send("also say bye")  # typed by the person meanwhile
        if input_preempts:
            await asyncio.wait_for(_until(lambda: UserMessage.of("also say bye") in added), 30)
        else:
            assert UserMessage.of("also say bye") not in added  # it waits for the round
        running = [job.call.name for job in agent.jobs.running()]
        release().set()
        await asyncio.wait_for(run, 30)
        await agent.aclose()
        return added, running

    added, running = asyncio.run(scenario(True))
    assert running == ["slow"]  # moved to the background, not killed
    added, running = asyncio.run(scenario(False))
    assert running == [] and UserMessage.of("also say bye") in added  # read after the call ended in its round


def test_a_persons_message_stops_a_jobs_wait_and_the_run_goes_on_until_the_job_ends() -> None:
    async def main() -> None:
        gates.clear()
        model = ScriptedModel(
            [
                tool_turn(("slow", {"what": "the build", "background": True})),
                tool_turn(("Jobs", {"action": "wait", "id": "job-1", "timeout": 600})),
                text_turn("read it"),
                text_turn("saw the result"),
            ]
        )
        agent = Agent(model, tools=[slow, Jobs()], input_preempts=True)
        added: list[object] = []

        async def drive() -> None:
            async for event in agent.run("build it, and wait for it"):
                if isinstance(event, MessageAdded):
                    added.append(event.message)

        run = asyncio.create_task(drive())
        await asyncio.wait_for(_until(lambda: len(model.requests) == 2), 30)  # the model asked to wait
        await asyncio.sleep(0.05)  # the wait is under way
        agent.send("also say bye")
        await asyncio.wait_for(_until(lambda: UserMessage.of("also say bye") in added), 30)
        [job] = agent.jobs.running()  # still running: only the wait stopped
        third = model.requests[2].messages
        assert "stopped waiting because a message came" in third[-2].text and third[-1] == UserMessage.of(
            "also say bye"
        )
        assert not run.done()  # the run does not end before the job it was waiting for
        release().set()
        await asyncio.wait_for(run, 30)
        assert len(model.requests) == 4 and "the build finished" in model.requests[3].messages[-1].text
        assert job.state == "done"
        await agent.aclose()

    asyncio.run(main())
