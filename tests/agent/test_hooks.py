"""Hooks: the loop calls them at fixed points; one denies a tool, one rewrites arguments, one counts
events, and a sink sees an event only once the session log has it."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from sagent.agent.agent import Agent
from sagent.agent.hooks import ALLOW, Allow, Ask, Deny, Hook, Rewrite, ToolDecision
from sagent.agent.session import SessionLog
from sagent.events import Event, Result, ToolFinished, TurnFinished
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.tools.base import tool
from sagent.types import AssistantMessage, ModelRequest, ToolCall, ToolResult, UserMessage


def bash_tool(ran: list[str]):
    @tool
    async def Bash(command: str) -> str:
        """Run a command."""
        ran.append(command)
        return f"ran {command}"

    return Bash


class NoBash(Hook):
    async def before_tool(self, agent: Agent, call: ToolCall) -> ToolDecision:
        return Deny("Bash is not allowed in this repository") if call.name == "Bash" else ALLOW


class Safer(Hook):
    async def before_tool(self, agent: Agent, call: ToolCall) -> ToolDecision:
        return Rewrite({"command": call.arguments["command"].replace("rm -rf", "echo")})


class Counter(Hook):
    def __init__(self) -> None:
        self.kinds: list[str] = []
        self.requests = 0
        self.responses: list[AssistantMessage] = []
        self.results: list[ToolResult] = []

    async def before_request(self, agent: Agent, request: ModelRequest) -> ModelRequest:
        self.requests += 1
        return request

    async def after_response(self, agent: Agent, message: AssistantMessage) -> None:
        self.responses.append(message)

    async def after_tool(self, agent: Agent, call: ToolCall, result: ToolResult) -> None:
        self.results.append(result)

    def on_event(self, agent: Agent, event: Event) -> None:
        self.kinds.append(type(event).__name__)


async def run(agent: Agent, prompt: str) -> list[Event]:
    return [e async for e in agent.run(prompt)]


async def test_a_denied_tool_call_never_runs_and_the_model_reads_why() -> None:
    ran: list[str] = []
    model = ScriptedModel([tool_turn(("Bash", {"command": "rm -rf /"})), text_turn("ok, I will not")])
    agent = Agent(model, tools=[bash_tool(ran)], hooks=[NoBash()])
    events = await run(agent, "clean up")
    assert ran == []
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert finished[0].result.is_error and "Bash is not allowed in this repository" in finished[0].result.text
    # The model's next request carries the refusal as the call's result.
    second = model.requests[1].messages[-1]
    assert isinstance(second, ToolResult) and "denied: Bash is not allowed" in second.text
    assert isinstance(events[-1], Result) and events[-1].subtype == "success"


async def test_a_rewrite_runs_the_tool_with_the_new_arguments() -> None:
    ran: list[str] = []
    model = ScriptedModel([tool_turn(("Bash", {"command": "rm -rf build"})), text_turn("done")])
    agent = Agent(model, tools=[bash_tool(ran)], hooks=[Safer()])
    await run(agent, "clean")
    assert ran == ["echo build"]
    # The history keeps the call as the model wrote it.
    call = next(m for m in agent.history if isinstance(m, AssistantMessage) and m.tool_calls).tool_calls[0]
    assert call.arguments == {"command": "rm -rf build"}


async def test_the_first_deny_wins_over_later_hooks() -> None:
    ran: list[str] = []
    model = ScriptedModel([tool_turn(("Bash", {"command": "ls"})), text_turn("done")])
    agent = Agent(model, tools=[bash_tool(ran)], hooks=[NoBash(), Safer()])
    await run(agent, "list")
    assert ran == []


async def test_a_failing_approval_hook_denies_the_call() -> None:
    class Broken(Hook):
        async def before_tool(self, agent: Agent, call: ToolCall) -> ToolDecision:
            raise RuntimeError("no policy file")

    ran: list[str] = []
    model = ScriptedModel([tool_turn(("Bash", {"command": "ls"})), text_turn("done")])
    agent = Agent(model, tools=[bash_tool(ran)], hooks=[Broken()])
    events = await run(agent, "list")
    assert ran == []
    result = next(e for e in events if isinstance(e, ToolFinished)).result
    assert result.is_error and "Broken failed: RuntimeError: no policy file" in result.text


async def test_a_counting_hook_sees_every_point_of_the_loop() -> None:
    counter = Counter()
    ran: list[str] = []
    model = ScriptedModel([tool_turn(("Bash", {"command": "ls"})), text_turn("done")])
    agent = Agent(model, tools=[bash_tool(ran)], hooks=[counter])
    events = await run(agent, "list")
    assert counter.kinds == [type(e).__name__ for e in events]  # every event, in order, once
    assert counter.requests == 2 and len(counter.responses) == 2
    assert [r.text for r in counter.results] == ["ran ls"]
    assert counter.responses == [e.message for e in events if isinstance(e, TurnFinished)]


async def test_before_request_may_change_what_is_sent() -> None:
    class Stamp(Hook):
        async def before_request(self, agent: Agent, request: ModelRequest) -> ModelRequest:
            return replace(request, messages=(*request.messages, UserMessage.of("(stamped)")))

    model = ScriptedModel([text_turn("hi")])
    agent = Agent(model, hooks=[Stamp()])
    await run(agent, "hello")
    assert model.requests[0].messages[-1].text == "(stamped)"
    assert [m.text for m in agent.history] == ["hello", "hi"]  # the history is the agent's own


async def test_a_sink_sees_an_event_only_after_the_log_has_it(tmp_path: Path) -> None:
    class ReadsTheLog(Hook):
        def __init__(self) -> None:
            self.checked = 0

        def on_event(self, agent: Agent, event: Event) -> None:
            assert agent.session.path is not None
            lines = agent.session.path.read_text().splitlines()
            logged = [json.loads(line)["event"]["type"] for line in lines if '"kind":"event"' in line]
            kind = getattr(event, "type", None)
            if kind in ("text_delta", "thinking_delta", "tool_call_delta"):
                return  # deltas are not logged
            assert logged and logged[-1] == kind
            self.checked += 1

    sink = ReadsTheLog()
    log = SessionLog.create(tmp_path, {"provider": "scripted", "model": "scripted"}, directory=tmp_path / "s")
    agent = Agent(ScriptedModel([text_turn("hi")]), session=log, hooks=[sink])
    await run(agent, "hello")
    assert sink.checked >= 4  # session started, message added, turn finished, result
    await agent.aclose()


async def test_sub_agents_run_their_parents_hooks() -> None:
    from sagent.tools import AgentSpawn

    counter = Counter()
    model = ScriptedModel([text_turn("child answer")])
    main = Agent(model, tools=[AgentSpawn()], hooks=[counter])
    child = main.spawn("task", label="kid")
    await child.wait()
    assert "TurnFinished" in counter.kinds and counter.responses[0].text == "child answer"
    await main.aclose()


class AskBash(Hook):
    async def before_tool(self, agent: Agent, call: ToolCall) -> ToolDecision:
        return Ask("Bash asks in this mode") if call.name == "Bash" else ALLOW


class Approver:
    def __init__(self, answer: Allow | Deny) -> None:
        self.answer = answer
        self.asked: list[tuple[str, str, str]] = []

    async def __call__(self, agent: Agent, call: ToolCall, reason: str) -> Allow | Deny:
        self.asked.append((agent.label, call.arguments["command"], reason))
        return self.answer


async def test_an_ask_goes_to_the_approver_which_may_refuse() -> None:
    ran: list[str] = []
    approver = Approver(Deny("the user said no: use make clean"))
    model = ScriptedModel([tool_turn(("Bash", {"command": "rm -rf build"})), text_turn("ok")])
    agent = Agent(model, tools=[bash_tool(ran)], hooks=[AskBash()], approver=approver)
    await run(agent, "clean")
    assert ran == []
    assert approver.asked == [("main", "rm -rf build", "Bash asks in this mode")]
    second = model.requests[1].messages[-1]
    assert isinstance(second, ToolResult) and second.is_error and "use make clean" in second.text


async def test_an_approved_ask_runs_the_call_as_rewritten() -> None:
    ran: list[str] = []
    approver = Approver(ALLOW)
    model = ScriptedModel([tool_turn(("Bash", {"command": "rm -rf build"})), text_turn("ok")])
    agent = Agent(model, tools=[bash_tool(ran)], hooks=[Safer(), AskBash()], approver=approver)
    await run(agent, "clean")
    assert ran == ["echo build"] and approver.asked[0][1] == "echo build"


async def test_deny_beats_ask_and_the_approver_is_not_bothered() -> None:
    ran: list[str] = []
    approver = Approver(ALLOW)
    model = ScriptedModel([tool_turn(("Bash", {"command": "ls"})), text_turn("ok")])
    agent = Agent(model, tools=[bash_tool(ran)], hooks=[AskBash(), NoBash()], approver=approver)
    await run(agent, "list")
    assert ran == [] and approver.asked == []


async def test_with_nobody_to_ask_an_asked_call_runs() -> None:
    ran: list[str] = []
    model = ScriptedModel([tool_turn(("Bash", {"command": "ls"})), text_turn("ok")])
    agent = Agent(model, tools=[bash_tool(ran)], hooks=[AskBash()])
    await run(agent, "list")
    assert ran == ["ls"]


async def test_a_failing_approver_denies_the_call() -> None:
    async def broken(agent: Agent, call: ToolCall, reason: str) -> Allow | Deny:
        raise OSError("terminal gone")

    ran: list[str] = []
    model = ScriptedModel([tool_turn(("Bash", {"command": "ls"})), text_turn("ok")])
    agent = Agent(model, tools=[bash_tool(ran)], hooks=[AskBash()], approver=broken)
    await run(agent, "list")
    assert ran == []
    assert "terminal gone" in str(model.requests[1].messages[-1])
