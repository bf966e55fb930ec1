"""The advisor: every trigger (the tool, the marker, failures, low confidence, stagnation, review), every
gate (the limit, the cooldown, the advisor's budget, the agent's budget), the cost split by role, and what
the advisor is shown."""

from __future__ import annotations

from pathlib import Path

from sagent.advisor import NOTE_HEADER, Advisor, AdvisorPolicy, reported_confidence, transcript
from sagent.agent.agent import Agent
from sagent.agent.fleet import Fleet
from sagent.agent.settings import AgentSettings
from sagent.events import AdvisorConsulted
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.tools.base import ToolError, tool
from sagent.tools.runtime import SpawnRequest
from sagent.types import ModelRequest, ToolResult, Usage, UserMessage

OFF = {"failures": None, "confidence": None, "stagnation": None, "marker": None}


@tool
async def Flaky(n: int) -> str:
    """Fails for odd n."""
    if n % 2:
        raise ToolError(f"attempt {n} failed")
    return f"attempt {n} worked"


def advisor(*answers: str, **policy: object) -> tuple[Advisor, ScriptedModel]:
    strong = ScriptedModel([text_turn(a, Usage(1000, 100)) for a in answers], name="claude-opus-4-7")
    return Advisor(strong, AdvisorPolicy(**{**OFF, **policy})), strong  # type: ignore[arg-type]


def executor(*steps) -> ScriptedModel:
    return ScriptedModel(list(steps), name="claude-haiku-4-5")


def notes(agent: Agent) -> list[str]:
    return [r.text for r in agent.history if isinstance(r, ToolResult) and NOTE_HEADER in r.text]


async def test_the_advisor_tool_answers_with_guidance_and_costs_are_split_by_role(tmp_path: Path) -> None:
    adv, strong = advisor("Check the config first.")
    model = executor(tool_turn(("Advisor", {"question": "where do I start?"})), text_turn("done"))
    agent = Agent(model, tools=[Flaky], advisor=adv, cwd=tmp_path)
    assert [t.name for t in agent.settings.tools] == ["Flaky", "Advisor"]
    assert (await agent.run("fix it")).text == "done"
    answer = next(r for r in agent.history if isinstance(r, ToolResult) and r.name == "Advisor")
    assert NOTE_HEADER in answer.text and "Check the config first." in answer.text
    assert (
        "where do I start?" in strong.requests[0].messages[0].text and "fix it" in strong.requests[0].messages[0].text
    )
    assert not strong.requests[0].tools  # the advisor never acts
    by_model = agent.cost.by_model
    assert set(by_model) == {"claude-haiku-4-5", "advisor/claude-opus-4-7"}
    assert (
        by_model["advisor/claude-opus-4-7"].usage == Usage(1000, 100)
        and by_model["advisor/claude-opus-4-7"].cost.total > 0
    )
    assert [c.trigger for c in adv.hook.consultations] == ["tool"]
    await agent.aclose()


async def test_consecutive_failures_bring_a_note_on_the_failing_result(tmp_path: Path) -> None:
    adv, strong = advisor("Use an even number.", failures=2)
    model = executor(
        tool_turn(("Flaky", {"n": 1})), tool_turn(("Flaky", {"n": 3})), tool_turn(("Flaky", {"n": 2})), text_turn("ok")
    )
    agent = Agent(model, tools=[Flaky], advisor=adv, cwd=tmp_path)
    events = []
    agent.add_sink(type("S", (), {"on_event": lambda self, a, e: events.append(e)})())
    await agent.run("go")
    assert len(notes(agent)) == 1 and "Use an even number." in notes(agent)[0] and "attempt 3 failed" in notes(agent)[0]
    assert "2 tool calls failed in a row" in strong.requests[0].messages[0].text
    logged = [e for e in events if isinstance(e, AdvisorConsulted)]
    assert [(e.trigger, e.model, e.usage, e.native) for e in logged] == [
        ("failures", "claude-opus-4-7", Usage(1000, 100), False)
    ]
    assert "trigger: failures" in logged[0].line() and "1,000 input" in logged[0].line()
    await agent.aclose()


async def test_the_marker_and_low_confidence_ask_for_help(tmp_path: Path) -> None:
    adv, _ = advisor("Look in src/.", "Run the tests.", marker="[[ASK_ADVISOR]]", confidence=0.5, cooldown=0)
    model = executor(
        tool_turn(("Flaky", {"n": 2}), text="[[ASK_ADVISOR]] I am lost"),
        tool_turn(("Flaky", {"n": 4}), text="confidence: 30%"),
        text_turn("finished"),
    )
    agent = Agent(model, tools=[Flaky], advisor=adv, cwd=tmp_path)
    await agent.run("go")
    assert [c.trigger for c in adv.hook.consultations] == ["marker", "confidence"]
    assert len(notes(agent)) == 2
    assert reported_confidence("Confidence = 0.9") == 0.9 and reported_confidence("nothing") is None
    await agent.aclose()


async def test_a_marker_in_the_final_answer_keeps_the_run_going_and_the_executor_answers(tmp_path: Path) -> None:
    adv, _ = advisor("Say it plainly.", marker="HELP?")
    model = executor(text_turn("HELP? not sure"), text_turn("the plain answer"))
    agent = Agent(model, advisor=adv, cwd=tmp_path)
    assert (await agent.run("go")).text == "the plain answer"
    assert "Say it plainly." in model.requests[1].messages[-1].text
    await agent.aclose()


async def test_stagnation_is_repeating_the_same_call(tmp_path: Path) -> None:
    adv, _ = advisor("Stop repeating.", stagnation=3)
    same = ("Flaky", {"n": 2})
    model = executor(tool_turn(same), tool_turn(same), tool_turn(same), text_turn("ok"))
    agent = Agent(model, tools=[Flaky], advisor=adv, cwd=tmp_path)
    await agent.run("go")
    assert [c.trigger for c in adv.hook.consultations] == ["stagnation"]
    await agent.aclose()


async def test_review_before_the_final_answer_happens_once(tmp_path: Path) -> None:
    adv, strong = advisor("Mention the edge case.", review=True, tool=False)
    model = executor(text_turn("draft"), text_turn("final with the edge case"))
    agent = Agent(model, advisor=adv, cwd=tmp_path)
    assert [t.name for t in agent.settings.tools] == []
    assert (await agent.run("go")).text == "final with the edge case"
    assert "draft" in strong.requests[0].messages[0].text and len(strong.requests) == 1
    await agent.aclose()


async def test_gates_limit_and_cooldown(tmp_path: Path) -> None:
    adv, strong = advisor("a", "b", failures=1, max_consultations=2, cooldown=2)
    model = executor(*(tool_turn(("Flaky", {"n": 1})) for _ in range(6)), text_turn("gave up"))
    agent = Agent(model, tools=[Flaky], advisor=adv, cwd=tmp_path)
    await agent.run("go")
    turns = [c for c in adv.hook.consultations]
    assert len(turns) == 2 and len(strong.requests) == 2  # turns 1 and 3 (cooldown), then the limit
    assert len(notes(agent)) == 2
    await agent.aclose()


async def test_the_advisor_budget_and_the_agent_budget_stop_consultations(tmp_path: Path) -> None:
    adv, strong = advisor("a", "b", failures=1, cooldown=0, max_usd=0.000001)
    model = executor(*(tool_turn(("Flaky", {"n": 1})) for _ in range(3)), text_turn("x"))
    agent = Agent(model, tools=[Flaky], advisor=adv, cwd=tmp_path)
    await agent.run("go")
    assert len(strong.requests) == 1  # the first consultation spent the advisor's budget
    adv2, strong2 = advisor("a", failures=1)
    unpriced = ScriptedModel([tool_turn(("Flaky", {"n": 1})), text_turn("x")])  # costs nothing
    agent2 = Agent(unpriced, tools=[Flaky], advisor=adv2, cwd=tmp_path, max_budget_usd=0.001)
    await agent2.run("go")
    assert strong2.requests == []  # the consultation's estimate would cross the agent's budget
    await agent.aclose()
    await agent2.aclose()


async def test_a_tool_call_to_a_spent_advisor_says_so(tmp_path: Path) -> None:
    adv, strong = advisor("a", max_consultations=0)
    model = executor(tool_turn(("Advisor", {"question": "?"})), text_turn("ok"))
    agent = Agent(model, advisor=adv, cwd=tmp_path)
    await agent.run("go")
    answer = next(r for r in agent.history if isinstance(r, ToolResult))
    assert "not consulted" in answer.text and strong.requests == []
    await agent.aclose()


def test_the_transcript_keeps_the_task_and_the_end_when_it_must_be_cut() -> None:
    history = [UserMessage.of("THE TASK"), *(UserMessage.of(f"step {i} " + "x" * 100) for i in range(50))]
    text = transcript(history, 1000)
    assert text.startswith("USER: THE TASK") and "step 49" in text and "earlier messages left out" in text
    assert len(text) < 1300
    assert "step 3 " in transcript(history, 100_000)


async def test_a_local_executor_with_a_cloud_advisor(tmp_path: Path) -> None:
    """The executor is a local model (scripted here, the real one under `local_model`), the advisor Claude."""
    adv, strong = advisor("Try n=2.", failures=2)
    local = ScriptedModel(
        [
            tool_turn(("Flaky", {"n": 1})),
            tool_turn(("Flaky", {"n": 3})),
            tool_turn(("Flaky", {"n": 2})),
            text_turn("done"),
        ],
        name="smollm2",
        provider="local",
    )
    agent = Agent(local, tools=[Flaky], advisor=adv, cwd=tmp_path)
    assert (await agent.run("go")).text == "done"
    assert agent.cost.by_model["smollm2"].cost.total == 0
    assert agent.cost.by_model["advisor/claude-opus-4-7"].cost.total > 0
    assert isinstance(strong.requests[0], ModelRequest)
    await agent.aclose()


async def test_a_spawn_inherits_replaces_or_drops_the_advisor(tmp_path: Path) -> None:
    adv, _ = advisor("x")
    other = ScriptedModel([], name="gpt-5.4")
    settings = AgentSettings(advisor=adv, cwd=tmp_path, tools=[Flaky])
    fleet = Fleet.for_settings(settings, models=lambda provider, name: other)
    parent = Agent(ScriptedModel([text_turn("a"), text_turn("b"), text_turn("c")]), settings, fleet=fleet)
    same = parent.spawn("one")
    none = parent.spawn(SpawnRequest("two", advisor="none"))
    new = parent.spawn(SpawnRequest("three", advisor="openai:gpt-5.4"))
    assert same.agent.settings.advisor is adv
    assert none.agent.settings.advisor is None and [t.name for t in none.agent.settings.tools] == ["Flaky"]
    assert adv.hook not in none.agent.settings.hooks
    changed = new.agent.settings.advisor
    assert changed is not None and changed.model is other and changed.policy == adv.policy
    assert changed.hook in new.agent.settings.hooks and adv.hook not in new.agent.settings.hooks
    assert [t.name for t in new.agent.settings.tools] == ["Flaky", "Advisor"]
    for child in (same, none, new):
        await child.wait()
    await parent.aclose()
