"""The orchestration patterns on the scripted model: who runs in which order on what input, where the cost
goes, what is sealed in the logs, and where a spent budget stops each pattern (with what ran before)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from sagent import Agent, RoutedModel, SessionLog, tool
from sagent.evidence.verify import verify_tree
from sagent.patterns import Handoff, Parallel, PatternResult, Sequential, Step, StepResult, Triage
from sagent.providers.base import ModelEvent
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.types import ModelRequest, Usage

T = TypeVar("T")
PRICED = "claude-haiku-4-5"  # $1 per million input tokens: the budget is real
EXPENSIVE = Usage(input_tokens=100_000)  # $0.10 a response


def first_prompt(model: RoutedModel, label: str) -> str:
    """The task the sub-agent `label` was given (the first message of its first request)."""
    return model.requests(label)[0].messages[0].text


def run(model: RoutedModel, body: Callable[[Agent], Awaitable[T]], tmp_path: Path, **options: Any) -> T:
    async def main() -> T:
        log = SessionLog.create(tmp_path, {"provider": "scripted", "model": PRICED}, directory=tmp_path / "sessions")
        lead = Agent(model, session=log, cwd=str(tmp_path), **options)
        try:
            return await body(lead)
        finally:
            await lead.aclose()

    return asyncio.run(main())


def lead_log(tmp_path: Path) -> Path:
    [path] = (tmp_path / "sessions").glob("*.jsonl")
    return path


# ------------------------------------------------------------------------------------------ Sequential


def test_sequential_passes_each_answer_on_and_rolls_the_cost_up_into_the_lead(tmp_path: Path) -> None:
    model = RoutedModel(
        {
            "main": [],
            "writer": [text_turn("sagent: agents everywhere")],
            "editor": [text_turn("sagent: one runtime, every model")],
            "judge": [text_turn("approved: sagent: one runtime, every model")],
        },
        name=PRICED,
    )
    steps = [
        Step("writer", system="You write taglines."),
        Step("editor", template="Tighten this tagline:\n{input}"),
        Step("judge", template="Approve or reject:\n{input}"),
    ]

    async def body(lead: Agent) -> tuple[PatternResult, float]:
        result = await Sequential(steps).run(lead, "a tagline for sagent")
        return result, lead.cost.total_usd

    result, total = run(model, body, tmp_path)
    assert result.ok and result.text == "approved: sagent: one runtime, every model"
    assert [s.label for s in result.steps] == ["writer", "editor", "judge"]
    assert first_prompt(model, "writer") == "a tagline for sagent"
    assert first_prompt(model, "editor") == "Tighten this tagline:\nsagent: agents everywhere"
    assert first_prompt(model, "judge") == "Approve or reject:\nsagent: one runtime, every model"
    assert model.requests("writer")[0].system.startswith("You write taglines.")
    # One roll-up: the lead's tracker holds exactly what the steps spent, and the lead itself spent nothing.
    assert total == pytest.approx(result.cost_usd) and total > 0
    assert model.requests("main") == []
    # Each handoff (task out, answer back) is sealed in the lead's log and the step's own, beside it.
    report = verify_tree(lead_log(tmp_path))
    assert report.ok, report.first_break
    assert len(report.sessions) == 4 and report.paired == 6
    assert {s.session_id for s in result.steps} == {p.stem for p in report.sessions[1:]}


def test_a_spent_budget_stops_sequential_with_the_steps_that_ran(tmp_path: Path) -> None:
    model = RoutedModel(
        {
            "main": [],
            "a": [text_turn("first", usage=EXPENSIVE)],
            "b": [text_turn("second", usage=EXPENSIVE)],
            "c": [text_turn("never")],
        },
        name=PRICED,
    )

    async def body(lead: Agent) -> PatternResult:
        return await Sequential([Step("a"), Step("b"), Step("c")]).run(lead, "go")

    result = run(model, body, tmp_path, max_budget_usd=0.15)
    assert result.subtype == "error_max_budget_usd" and not result.ok
    assert [(s.label, s.subtype) for s in result.steps] == [
        ("a", "success"),
        ("b", "success"),  # its response was already under way: it is kept whole
        ("c", "error_max_budget_usd"),
    ]
    assert result.text.startswith("c: ") and "budget" in result.text
    assert model.requests("c") == []  # refused before it was sent
    assert first_prompt(model, "b") == "first"


def test_a_step_the_fleet_refuses_stops_the_pattern_and_says_why(tmp_path: Path) -> None:
    model = RoutedModel({"main": [], "a": [text_turn("done")]}, name=PRICED)

    async def body(lead: Agent) -> PatternResult:
        return await Sequential([Step("a"), Step("b", tools=["Bash"])]).run(lead, "go")

    result = run(model, body, tmp_path)
    assert result.subtype == "error_during_execution"
    assert result.text.startswith("b: not started: unknown tool(s) Bash")
    assert [s.ok for s in result.steps] == [True, False]


def test_a_step_on_another_process_needs_a_fleet_on_nats(tmp_path: Path) -> None:
    model = RoutedModel({"main": []}, name=PRICED)

    async def body(lead: Agent) -> PatternResult:
        return await Sequential([Step("far", on="any")]).run(lead, "go")

    result = run(model, body, tmp_path)
    assert not result.ok and "has no NATS bus" in result.text


def test_patterns_refuse_a_bad_shape_when_they_are_made() -> None:
    with pytest.raises(ValueError, match="used more than once: a"):
        Sequential([Step("a"), Step("a")])
    with pytest.raises(ValueError, match="at least one step"):
        Parallel([])
    with pytest.raises(ValueError, match="one word"):
        Step("two words")
    with pytest.raises(ValueError, match=r"has no \{input\}"):
        Step("a", template="no place for the input")
    with pytest.raises(ValueError, match="give one to: b"):
        Triage([Step("a", description="does a"), Step("b")])
    with pytest.raises(ValueError, match="the router included"):
        Triage([Step("router", description="a clash")])
    with pytest.raises(ValueError, match="at least two agents"):
        Handoff([Step("a")])
    with pytest.raises(ValueError, match="the start 'z' is not one of the agents"):
        Handoff([Step("a"), Step("b")], start="z")
    with pytest.raises(ValueError, match="on that process's model: provider, model and advisor apply"):
        Step("far", on="any", model="gpt-5.4")
    with pytest.raises(TypeError, match="aggregator"):
        Parallel([Step("a")], aggregator="join")  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------- Parallel


def test_parallel_gives_every_step_the_task_and_an_agent_combines_the_answers(tmp_path: Path) -> None:
    model = RoutedModel(
        {
            "main": [],
            "security": [text_turn("no secrets in the diff")],
            "style": [text_turn("two long lines")],
            "lead-reviewer": [text_turn("ship it after wrapping two lines")],
        },
        name=PRICED,
    )
    pattern = Parallel(
        [Step("security", system="You review for security."), Step("style", system="You review style.")],
        aggregator=Step("lead-reviewer", template="Combine these reviews into one verdict.\n\n{input}"),
    )

    async def body(lead: Agent) -> tuple[PatternResult, float]:
        result = await pattern.run(lead, "review the diff")
        return result, lead.cost.total_usd

    result, total = run(model, body, tmp_path)
    assert result.ok and result.text == "ship it after wrapping two lines"
    assert [s.label for s in result.steps] == ["security", "style", "lead-reviewer"]
    assert first_prompt(model, "security") == first_prompt(model, "style") == "review the diff"
    combined = first_prompt(model, "lead-reviewer")
    assert combined.startswith("Combine these reviews into one verdict.\n\nThe task:\nreview the diff")
    assert "## security\nno secrets in the diff" in combined and "## style\ntwo long lines" in combined
    assert total == pytest.approx(result.cost_usd) and total > 0
    report = verify_tree(lead_log(tmp_path))
    assert report.ok and report.paired == 6


class WaitsFirst(ScriptedModel):
    """A script for one agent whose every request first awaits `before()` (to order agents in a test)."""

    def __init__(self, before: Callable[[], Awaitable[None]], steps: list[Any]) -> None:
        super().__init__(steps, name=PRICED)
        self.before = before

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        await self.before()
        async for event in super().stream(request):
            yield event


def test_parallel_steps_run_at_the_same_time(tmp_path: Path) -> None:
    """Each step waits until both have started: run one after the other, the first would wait for ever."""
    started: dict[str, asyncio.Event] = {}

    def meets(mine: str, other: str) -> Callable[[], Awaitable[None]]:
        async def wait() -> None:
            started.setdefault(mine, asyncio.Event()).set()
            await asyncio.wait_for(started.setdefault(other, asyncio.Event()).wait(), 30)

        return wait

    model = RoutedModel(
        {
            "main": [],
            "a": WaitsFirst(meets("a", "b"), [text_turn("a met b")]),
            "b": WaitsFirst(meets("b", "a"), [text_turn("b met a")]),
        },
        name=PRICED,
    )

    async def body(lead: Agent) -> PatternResult:
        return await Parallel([Step("a"), Step("b")]).run(lead, "meet")

    result = run(model, body, tmp_path)
    assert result.ok and [s.text for s in result.steps] == ["a met b", "b met a"]
    assert result.text == "The task:\nmeet\n\nThe answers, one per agent:\n\n## a\na met b\n\n## b\nb met a"


def test_a_limit_runs_parallel_steps_a_few_at_a_time(tmp_path: Path) -> None:
    from sagent import Event, Hook, Result

    order: list[str] = []

    class Ends(Hook):
        def on_event(self, agent: Agent, event: Event) -> None:
            if isinstance(event, Result):
                order.append(f"end {agent.label}")

    def starts(label: str) -> Callable[[], Awaitable[None]]:
        async def note() -> None:
            order.append(f"start {label}")
            await asyncio.sleep(0)  # room for another step to start, were it allowed to

        return note

    scripts: dict[str, Any] = {label: WaitsFirst(starts(label), [text_turn(label)]) for label in "abc"}
    model = RoutedModel({"main": [], **scripts}, name=PRICED)

    async def body(lead: Agent) -> PatternResult:
        return await Parallel([Step("a"), Step("b"), Step("c")], limit=1).run(lead, "go")

    assert run(model, body, tmp_path, hooks=[Ends()]).ok
    assert order == ["start a", "end a", "start b", "end b", "start c", "end c"]
    with pytest.raises(ValueError, match="limit is 1 or more"):
        Parallel([Step("a")], limit=0)


@pytest.mark.parametrize("asynchronous", [False, True])
def test_a_function_can_aggregate(tmp_path: Path, asynchronous: bool) -> None:
    model = RoutedModel({"main": [], "x": [text_turn("3")], "y": [text_turn("4")]}, name=PRICED)
    seen: list[tuple[str, tuple[str, ...]]] = []

    def total(task: str, results: tuple[StepResult, ...]) -> str:
        seen.append((task, tuple(r.label for r in results)))
        return str(sum(int(r.text) for r in results))

    async def total_later(task: str, results: tuple[StepResult, ...]) -> str:
        return total(task, results)

    async def body(lead: Agent) -> PatternResult:
        return await Parallel([Step("x"), Step("y")], aggregator=total_later if asynchronous else total).run(lead, "n")

    result = run(model, body, tmp_path)
    assert result.ok and result.text == "7" and seen == [("n", ("x", "y"))]
    assert len(result.steps) == 2


def test_a_spent_budget_stops_every_parallel_step_and_the_aggregator_never_runs(tmp_path: Path) -> None:
    """`slow` is in a tool call that would never end when `dear`'s response spends the budget: it stops."""
    blocking: dict[str, asyncio.Event] = {}

    def event(name: str) -> asyncio.Event:
        return blocking.setdefault(name, asyncio.Event())

    @tool
    async def block() -> str:
        """Wait for ever."""
        event("in the call").set()
        await asyncio.Event().wait()
        return "never"

    async def after_block() -> None:
        await asyncio.wait_for(event("in the call").wait(), 30)

    async def nothing() -> None:
        return None

    model = RoutedModel(
        {
            "main": [],
            "slow": WaitsFirst(nothing, [tool_turn(("block", {})), text_turn("never")]),
            "dear": WaitsFirst(after_block, [text_turn("spent it all", usage=EXPENSIVE)]),
            "merge": [text_turn("never")],
        },
        name=PRICED,
    )

    async def body(lead: Agent) -> PatternResult:
        pattern = Parallel([Step("slow"), Step("dear", tools=[])], aggregator=Step("merge"))
        return await pattern.run(lead, "work")

    result = run(model, body, tmp_path, max_budget_usd=0.05, tools=[block])
    assert result.subtype == "error_max_budget_usd"
    assert [s.label for s in result.steps] == ["slow", "dear"]
    assert result.step("slow").subtype == "error_max_budget_usd"
    assert result.step("dear").text == "spent it all"  # its response is kept whole
    assert model.requests("merge") == []


# --------------------------------------------------------------------------------------------- Triage


def test_triage_routes_by_a_tool_call_and_the_chosen_agent_does_the_task(tmp_path: Path) -> None:
    model = RoutedModel(
        {
            "main": [],
            "router": [tool_turn(("Route", {"agent": "billing", "note": "it is about an invoice"}))],
            "billing": [text_turn("refund issued for invoice 7")],
            "support": [text_turn("never")],
        },
        name=PRICED,
    )
    pattern = Triage([Step("support", description="fixes technical problems"), Step("billing", description="invoices")])

    async def body(lead: Agent) -> tuple[PatternResult, float]:
        result = await pattern.run(lead, "I was charged twice on invoice 7")
        return result, lead.cost.total_usd

    result, total = run(model, body, tmp_path)
    assert result.ok and result.text == "refund issued for invoice 7"
    router, billing = result.steps
    assert billing.label == "billing" and billing.where == "here" and billing.session_id
    assert (router.label, router.text, router.ok) == ("router", "billing", True)
    assert router.picked is not None and router.picked.note == "it is about an invoice"
    assert first_prompt(model, "billing") == "I was charged twice on invoice 7"
    assert model.requests("support") == []
    [asked] = model.requests("router")  # one request: the run ends with the Route call
    [offer] = asked.tools
    assert offer.name == "Route" and offer.input_schema["properties"]["agent"]["enum"] == ["support", "billing"]
    assert "- billing: invoices" in offer.description
    assert "I was charged twice on invoice 7" in asked.messages[0].text
    assert total == pytest.approx(result.cost_usd) and total > 0
    assert verify_tree(lead_log(tmp_path)).paired == 4


def test_a_router_that_answers_in_words_is_taken_at_its_word_only_when_it_names_one_agent(tmp_path: Path) -> None:
    model = RoutedModel(
        {"main": [], "router": [text_turn("That is for `support`.")], "support": [text_turn("restarted")]},
        name=PRICED,
    )
    agents = [Step("support", description="technical problems"), Step("billing", description="invoices")]

    async def body(lead: Agent) -> PatternResult:
        return await Triage(agents).run(lead, "the server is down")

    result = run(model, body, tmp_path)
    assert result.ok and result.text == "restarted" and result.steps[0].text == "support"

    vague = RoutedModel({"main": [], "router": [text_turn("either support or billing")]}, name=PRICED)

    async def vague_body(lead: Agent) -> PatternResult:
        return await Triage(agents).run(lead, "hm")

    refused = run(vague, vague_body, tmp_path / "vague")
    assert refused.subtype == "error_during_execution"
    assert refused.text == "router: it picked no agent; it said: either support or billing"


def test_a_router_with_tool_rounds_of_its_own_may_look_around_before_it_routes(tmp_path: Path) -> None:
    model = RoutedModel(
        {
            "main": [],
            "router": [
                tool_turn(("lookup", {"order": "7"})),
                tool_turn(("Route", {"agent": "billing", "note": "order 7 shipped: a billing matter"})),
                text_turn("routed"),
            ],
            "billing": [text_turn("invoice sent")],
        },
        name=PRICED,
    )
    router = Step("router", tools=["lookup"], max_tool_rounds=3)
    agents = [Step("support", description="technical problems"), Step("billing", description="invoices")]

    async def body(lead: Agent) -> PatternResult:
        return await Triage(agents, router=router).run(lead, "where is my invoice for order 7?")

    result = run(model, body, tmp_path, tools=[lookup])
    assert result.ok and result.text == "invoice sent" and result.steps[0].text == "billing"
    assert "order 7: shipped on Monday" in model.requests("router")[1].messages[-1].text


def test_a_route_to_an_unknown_agent_is_refused_to_the_router(tmp_path: Path) -> None:
    model = RoutedModel(
        {"main": [], "router": [tool_turn(("Route", {"agent": "sales"}))]},
        name=PRICED,
    )

    async def body(lead: Agent) -> PatternResult:
        return await Triage([Step("support", description="technical problems")]).run(lead, "hm")

    result = run(model, body, tmp_path)
    assert not result.ok and len(result.steps) == 1 and "picked no agent" in result.text


def test_a_spent_budget_stops_triage_before_the_chosen_agent_runs(tmp_path: Path) -> None:
    model = RoutedModel(
        {
            "main": [],
            "router": [tool_turn(("Route", {"agent": "support"}), usage=EXPENSIVE)],
            "support": [text_turn("never")],
        },
        name=PRICED,
    )

    async def body(lead: Agent) -> PatternResult:
        return await Triage([Step("support", description="technical problems")]).run(lead, "help")

    result = run(model, body, tmp_path, max_budget_usd=0.05)
    assert result.subtype == "error_max_budget_usd" and result.text.startswith("router: ")
    assert [s.label for s in result.steps] == ["router"]
    assert model.requests("support") == []


# -------------------------------------------------------------------------------------------- Handoff


@tool
def lookup(order: str) -> str:
    """Look an order up.

    Args:
        order: the order number
    """
    return f"order {order}: shipped on Monday"


def test_handoff_passes_the_conversation_and_the_next_agent_continues_it(tmp_path: Path) -> None:
    model = RoutedModel(
        {
            "main": [],
            "triage-desk": [
                tool_turn(("lookup", {"order": "42"}), text="Let me look."),
                tool_turn(("Handoff", {"agent": "returns", "note": "the customer wants a refund"})),
                text_turn("Passing you to returns."),
            ],
            "returns": [text_turn("Refund started for order 42, shipped Monday.")],
        },
        name=PRICED,
    )
    pattern = Handoff(
        [
            Step("triage-desk", description="first contact", tools=["lookup"]),
            Step("returns", description="refunds and returns", tools=[]),
        ]
    )

    async def body(lead: Agent) -> tuple[PatternResult, float]:
        result = await pattern.run(lead, "Where is order 42? I want my money back.")
        return result, lead.cost.total_usd

    result, total = run(model, body, tmp_path, tools=[lookup])
    assert result.ok and result.text == "Refund started for order 42, shipped Monday."
    assert [s.label for s in result.steps] == ["triage-desk", "returns"]
    assert result.steps[0].picked is not None and result.steps[0].picked.label == "returns"
    given = first_prompt(model, "returns")
    assert given.startswith("triage-desk hands this conversation over to you.")
    order = [
        "[user]\nWhere is order 42? I want my money back.",
        "[triage-desk]\nLet me look.",
        '[triage-desk]\n[called lookup {"order": "42"}]',
        "[lookup result]\norder 42: shipped on Monday",
        "[triage-desk]\nPassing you to returns.",
        "triage-desk's note for you: the customer wants a refund",
    ]
    assert [given.index(part) for part in order] == sorted(given.index(part) for part in order)
    assert "Handoff" not in given  # the pass itself is not part of the conversation
    offered = {t.name: t for t in model.requests("returns")[0].tools}
    assert list(offered) == ["Handoff"] and offered["Handoff"].input_schema["properties"]["agent"]["enum"] == [
        "triage-desk"
    ]
    assert [t.speaker for t in result.conversation][-1] == "returns"
    assert total == pytest.approx(result.cost_usd) and total > 0
    assert verify_tree(lead_log(tmp_path)).paired == 4


def test_handoffs_are_bounded_and_the_window_carries_only_the_last_turns(tmp_path: Path) -> None:
    def pass_to(other: str) -> list[Any]:
        return [tool_turn(("Handoff", {"agent": other})), text_turn(f"over to {other}")]

    model = RoutedModel({"main": [], "a": pass_to("b") * 3, "b": pass_to("a") * 3}, name=PRICED)

    async def body(lead: Agent) -> PatternResult:
        return await Handoff([Step("a"), Step("b")], max_handoffs=3, window=2).run(lead, "ping")

    result = run(model, body, tmp_path)
    assert result.subtype == "error_max_turns"
    assert result.text == "b: 4 handoffs, over the limit (max_handoffs 3)"
    assert [s.label for s in result.steps] == ["a", "b", "a", "b"]
    last = model.requests("b")[-1].messages[0].text
    assert "[user]\nping" in last and last.count("]\nover to") == 2  # the task, and the last two turns


def test_a_spent_budget_stops_a_handoff_with_the_conversation_so_far(tmp_path: Path) -> None:
    model = RoutedModel(
        {
            "main": [],
            "a": [tool_turn(("Handoff", {"agent": "b"}), usage=EXPENSIVE), text_turn("over", usage=EXPENSIVE)],
            "b": [text_turn("never")],
        },
        name=PRICED,
    )

    async def body(lead: Agent) -> PatternResult:
        return await Handoff([Step("a"), Step("b")]).run(lead, "go")

    result = run(model, body, tmp_path, max_budget_usd=0.15)
    assert result.subtype == "error_max_budget_usd"
    assert [s.label for s in result.steps][-1] in {"a", "b"}
    assert model.requests("b") == []
    assert result.conversation[0].text == "go"


def test_a_handoff_in_the_last_allowed_tool_round_still_passes_the_conversation(tmp_path: Path) -> None:
    model = RoutedModel(
        {"main": [], "a": [tool_turn(("Handoff", {"agent": "b", "note": "yours"}))], "b": [text_turn("b took it")]},
        name=PRICED,
    )

    async def body(lead: Agent) -> PatternResult:
        return await Handoff([Step("a", max_tool_rounds=1), Step("b")]).run(lead, "go")

    result = run(model, body, tmp_path)
    assert result.ok and result.text == "b took it"
    assert [(s.label, s.subtype) for s in result.steps] == [("a", "error_max_turns"), ("b", "success")]
    assert "a's note for you: yours" in first_prompt(model, "b")

    # When a later agent fails, the pattern says why it did, not the earlier pass.
    failing = RoutedModel(
        {"main": [], "a": [tool_turn(("Handoff", {"agent": "b"}))], "b": [tool_turn(("Glob", {"pattern": "*"}))]},
        name=PRICED,
    )

    async def fails(lead: Agent) -> PatternResult:
        steps = [Step("a", max_tool_rounds=1), Step("b", max_tool_rounds=1, tools=[])]
        return await Handoff(steps).run(lead, "go")

    stopped = run(failing, fails, tmp_path / "failing")
    assert stopped.subtype == "error_max_turns" and stopped.text.startswith("b: ")


def test_a_hook_of_the_lead_sees_every_step_work(tmp_path: Path) -> None:
    from sagent import Event, Hook, Result

    seen: list[tuple[str, str]] = []

    class Watch(Hook):
        def on_event(self, agent: Agent, event: Event) -> None:
            if isinstance(event, Result):
                seen.append((agent.label, event.text))

    model = RoutedModel({"main": [], "a": [text_turn("one")], "b": [text_turn("two")]}, name=PRICED)

    async def body(lead: Agent) -> PatternResult:
        return await Sequential([Step("a"), Step("b")]).run(lead, "go")

    assert run(model, body, tmp_path, hooks=[Watch()]).ok
    assert seen == [("a", "one"), ("b", "two")]
