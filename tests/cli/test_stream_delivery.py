"""`run_headless` with streamed input, in process: an interrupt that is not a signal (a Claude Agent SDK
program's `interrupt`) ends the turn and the session reads on; a background job's result wakes an idle
session; a turn that took several messages ends with one result record for each."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import AsyncIterator
from pathlib import Path

from sagent import Agent
from sagent.agent.hooks import ALLOW, Allow, Ask, Deny, Hook
from sagent.cli.headless import EXIT_OK, Output, run_headless
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.tools import Jobs
from sagent.tools.base import tool
from sagent.types import ToolCall, UserMessage
from tests.userhooks.scripts import entry, hooks, script

gates: dict[str, asyncio.Event] = {}


@tool
async def slow(what: str) -> str:
    """Wait until the test lets it finish.

    Args:
        what: a name
    """
    await gates.setdefault("release", asyncio.Event()).wait()
    return f"{what} finished"


class Lines:
    """Stream-json input as a test writes it: messages put on a queue, None for the end of input."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[UserMessage | None] = asyncio.Queue()

    def write(self, text: str | None) -> None:
        self.queue.put_nowait(None if text is None else UserMessage.of(text))

    async def __aiter__(self) -> AsyncIterator[UserMessage]:
        while (message := await self.queue.get()) is not None:
            yield message


def results(out: io.StringIO) -> list[dict]:
    return [r for r in map(json.loads, out.getvalue().splitlines()) if r["type"] == "result"]


async def until(check, limit: float = 30) -> None:  # type: ignore[no-untyped-def]
    async def loop() -> None:
        while not check():
            await asyncio.sleep(0.01)

    await asyncio.wait_for(loop(), limit)


def test_an_interrupt_that_is_not_a_signal_ends_the_turn_and_the_next_message_is_answered() -> None:
    async def main() -> None:
        gates.clear()
        model = ScriptedModel([tool_turn(("slow", {"what": "the build"})), text_turn("here again")])
        agent = Agent(model, tools=[slow])
        lines, out = Lines(), io.StringIO()
        run = asyncio.create_task(
            run_headless(agent, None, lines.__aiter__(), Output("stream-json", False, out, io.StringIO()))
        )
        lines.write("build it")
        await until(lambda: agent.running and model.requests)
        await asyncio.sleep(0.05)
        agent.interrupt()  # as the SDK's `interrupt` control request does
        await until(lambda: len(results(out)) == 1)
        lines.write("why did you stop?")
        lines.write(None)
        assert await asyncio.wait_for(run, 30) == EXIT_OK
        assert [r["subtype"] for r in results(out)] == ["interrupted", "success"]
        assert model.requests[-1].messages[-1] == UserMessage.of("why did you stop?")
        await agent.aclose()

    asyncio.run(main())


def test_an_idle_session_wakes_for_a_background_jobs_result() -> None:
    async def main() -> None:
        gates.clear()
        model = ScriptedModel(
            [tool_turn(("slow", {"what": "the build", "background": True})), text_turn("started"), text_turn("built")]
        )
        agent = Agent(model, tools=[slow, Jobs()])
        lines, out = Lines(), io.StringIO()
        run = asyncio.create_task(
            run_headless(agent, None, lines.__aiter__(), Output("stream-json", False, out, io.StringIO()))
        )
        lines.write("build it in the background")
        await until(lambda: len(results(out)) == 1)  # the turn ended; the job runs on, stdin stays open
        gates.setdefault("release", asyncio.Event()).set()
        await until(lambda: len(results(out)) == 2)  # its result started a turn of its own
        assert "the build finished" in model.requests[-1].messages[-1].text
        lines.write(None)
        assert await asyncio.wait_for(run, 30) == EXIT_OK
        await agent.aclose()

    asyncio.run(main())


def test_a_turn_answers_each_message_it_took_with_a_result_a_blocked_one_too(tmp_path: Path) -> None:
    async def main() -> None:
        model = ScriptedModel([text_turn("hello to you")])
        body = """if grep -q secret; then echo '{"decision": "block", "reason": "no secrets"}'; fi\n"""
        agent = Agent(model, hooks=[hooks(tmp_path, UserPromptSubmit=[entry(script(tmp_path, "guard", body))])])
        lines, out = Lines(), io.StringIO()
        for text in ("hi", "the secret is 42", "and how are you?", None):
            lines.write(text)  # all written before the turn starts: it takes them together
        output = Output("stream-json", False, out, io.StringIO())
        assert await asyncio.wait_for(run_headless(agent, None, lines.__aiter__(), output), 30) == EXIT_OK
        assert [r["result"] for r in results(out)] == ["hello to you"] * 3
        texts = [m.text for m in model.requests[0].messages]
        assert texts == ["hi", "and how are you?"]
        await agent.aclose()

    asyncio.run(main())


def test_a_call_past_its_time_limit_does_not_hold_the_turn_one_moved_for_a_message_does() -> None:
    async def scenario(message: bool) -> list[dict]:
        gates.clear()
        model = ScriptedModel([tool_turn(("slow", {"what": "the build"})), text_turn("going on"), text_turn("built")])
        agent = Agent(model, tools=[slow, Jobs()], background_after=0.2)
        lines, out = Lines(), io.StringIO()
        output = Output("stream-json", False, out, io.StringIO())
        run = asyncio.create_task(run_headless(agent, None, lines.__aiter__(), output))
        lines.write("build it")
        if message:
            await until(lambda: len(model.requests) == 1)
            lines.write("and meanwhile, hello")
        await until(lambda: len(model.requests) == 2)
        await asyncio.sleep(0.1)
        ended_before_the_job = len(results(out))
        gates.setdefault("release", asyncio.Event()).set()
        await until(lambda: len(model.requests) == 3)
        lines.write(None)
        assert await asyncio.wait_for(run, 30) == EXIT_OK
        await agent.aclose()
        return [{"before": ended_before_the_job}, *results(out)]

    alone = asyncio.run(scenario(False))
    assert alone[0]["before"] == 1 and [r["result"] for r in alone[1:]] == ["going on", "built"]
    held = asyncio.run(scenario(True))
    assert held[0]["before"] == 0 and [r["result"] for r in held[1:]] == ["built", "built"]


class AskEveryCall(Hook):
    async def before_tool(self, agent: Agent, call: ToolCall) -> Ask:
        return Ask("the test asks")


def test_a_message_is_read_while_a_calls_permission_question_waits_and_the_call_runs_once_allowed() -> None:
    async def main() -> None:
        gates.clear()
        asked: list[asyncio.Future[Allow | Deny]] = []

        async def program(agent: Agent, call: ToolCall, reason: str) -> Allow | Deny:  # answers when told
            asked.append(asyncio.get_running_loop().create_future())
            return await asked[-1]

        model = ScriptedModel(
            [tool_turn(("slow", {"what": "the build"})), text_turn("read it while you decide"), text_turn("built")]
        )
        agent = Agent(model, tools=[slow, Jobs()], hooks=[AskEveryCall()], approver=program)
        lines, out = Lines(), io.StringIO()
        output = Output("stream-json", False, out, io.StringIO())
        run = asyncio.create_task(run_headless(agent, None, lines.__aiter__(), output))
        lines.write("build it")
        await until(lambda: bool(asked))
        lines.write("and meanwhile, hello")
        await until(lambda: len(model.requests) == 2)  # read while the question is still open
        second = model.requests[1].messages
        assert "not started yet" in second[-2].text and second[-1] == UserMessage.of("and meanwhile, hello")
        assert not asked[0].done() and results(out) == []  # the turn waits for the call it moved
        asked[0].set_result(ALLOW)
        gates.setdefault("release", asyncio.Event()).set()
        await until(lambda: len(results(out)) == 2)
        assert "the build finished" in model.requests[2].messages[-1].text
        lines.write(None)
        assert await asyncio.wait_for(run, 30) == EXIT_OK
        await agent.aclose()

    asyncio.run(main())
