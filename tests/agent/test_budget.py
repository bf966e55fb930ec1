"""The budget and the context window, checked before each request is sent, on every path that calls a model:
the main loop, a compaction summary, a tool's question to a small model, and sub-agents. Money is exact."""

from __future__ import annotations

from decimal import Decimal

import pytest

from sagent.agent.agent import Agent
from sagent.agent.compaction import COMPACT_INSTRUCTION, CompactionPolicy
from sagent.agent.cost import BudgetExceededError, CostTracker
from sagent.events import Compacted, Result, TurnFinished
from sagent.providers.catalog import cost_of, request_cost
from sagent.providers.scripted import RoutedModel, ScriptedModel, text_turn, tool_turn
from sagent.tools import AgentSpawn
from sagent.tools.base import ToolError, tool
from sagent.types import Cost, ModelRequest, Usage, UserMessage, to_dict

HAIKU = "claude-haiku-4-5"  # $1 per million input tokens, $5 output, cache writes $1.25
SONNET = "claude-sonnet-4-6"  # $3 input, $15 output, cache writes $3.75
CENT = Usage(input_tokens=6_075, output_tokens=785)  # exactly $0.01 on haiku; 0.009999999999999998 as a float


@tool
def echo(text: str) -> str:
    """Echo the text back.

    Args:
        text: what to echo
    """
    return f"echo: {text}"


async def run(agent: Agent, prompt: str) -> tuple[list, Result]:
    events = [e async for e in agent.run(prompt)]
    assert isinstance(events[-1], Result)
    return events, events[-1]


def test_costs_add_up_exactly() -> None:
    cent = cost_of(HAIKU, CENT)
    assert cent.usd_total == Decimal("0.01")
    total = Cost()
    for _ in range(6):
        total = total + cent
    assert total.usd_total == Decimal("0.06") and total.total == 0.06
    tracker = CostTracker(0.06)
    for _ in range(6):
        assert not tracker.over_budget()
        tracker.add(HAIKU, CENT)
    assert tracker.spent == Decimal("0.06") and tracker.over_budget()
    # Ten responses of $0.0006 print as $0.006 (floats made it 0.005999999999999999).
    ten = CostTracker()
    for _ in range(10):
        ten.add(SONNET, Usage(100, 20))
    assert repr(ten.total_usd) == "0.006"


def test_a_session_log_written_with_float_costs_reads_back_exactly() -> None:
    old = {"input": 0.0003, "output": 0.0003, "cache_read": 0.0, "cache_write": 0.0, "priced": True}
    cost = Cost(**old)
    assert cost.usd_total == Decimal("0.0006")
    assert to_dict(cost) == old  # what is written is plain JSON numbers again
    drifted = Cost(input=0.043576000000000004)  # a total written before amounts were exact
    assert drifted.total == 0.043576000000000004


def test_a_budget_that_is_not_a_finite_amount_is_refused() -> None:
    for bad in (float("nan"), float("inf"), 0.0, -1.0):
        with pytest.raises(ValueError, match="max_budget_usd"):
            CostTracker(bad)


async def test_a_budget_of_six_cents_runs_exactly_six_one_cent_calls() -> None:
    model = ScriptedModel([tool_turn(("echo", {"text": "x"}), usage=CENT) for _ in range(8)], name=HAIKU)
    agent = Agent(model, tools=[echo], max_budget_usd=0.06)
    events, result = await run(agent, "spend")
    assert result.subtype == "error_max_budget_usd"
    assert len(model.requests) == 6  # the sixth fits exactly; a seventh would be one call over
    assert agent.cost.spent == Decimal("0.06") and result.total_cost_usd == 0.06
    assert [e.total_cost_usd for e in events if isinstance(e, TurnFinished)][-1] == 0.06


async def test_a_request_whose_input_alone_crosses_the_budget_is_never_sent() -> None:
    model = ScriptedModel([text_turn("never")], name=SONNET)
    agent = Agent(model, max_budget_usd=0.10)
    _, result = await run(agent, "x" * 200_000)  # about 50,000 tokens: $0.19 at the cache-write price
    assert model.requests == []
    assert result.subtype == "error_max_budget_usd"
    assert "was not sent" in result.text and "$0.1000" in result.text


async def test_a_capped_response_counts_its_worst_case_output_too() -> None:
    model = ScriptedModel([text_turn("never")], name=SONNET)
    agent = Agent(model, max_budget_usd=0.10, max_tokens=10_000)  # up to $0.15 of output
    _, result = await run(agent, "a short question")
    assert model.requests == [] and result.subtype == "error_max_budget_usd"
    assert request_cost(SONNET, 10, max_output=10_000).usd_total > Decimal("0.15")


async def test_the_automatic_compaction_request_is_held_to_the_budget() -> None:
    model = ScriptedModel([text_turn("## Goal\nsummary"), text_turn("done")], name=SONNET)
    policy = CompactionPolicy(threshold=0.2)  # 40,000 tokens of the 200,000 window
    agent = Agent(model, max_budget_usd=0.10, compaction=policy)
    events, result = await run(agent, "y" * 240_000)  # about 60,000 tokens: the summary request costs $0.22
    assert model.requests == []  # neither the summary request nor the main one
    assert not any(isinstance(e, Compacted) for e in events)
    assert result.subtype == "error_max_budget_usd" and "was not sent" in result.text


async def test_a_manual_compaction_that_would_cross_the_budget_is_not_sent() -> None:
    model = ScriptedModel([text_turn("ok")], name=SONNET)
    agent = Agent(model, max_budget_usd=0.10, compaction=CompactionPolicy(threshold=None))
    await run(agent, "short")
    agent.history.append(UserMessage.of("z" * 240_000))  # about 60,000 tokens to summarise: $0.22
    with pytest.raises(BudgetExceededError, match="not sent"):
        await agent.compact()
    assert len(model.requests) == 1


async def test_a_small_model_question_is_held_to_the_budget_and_the_window() -> None:
    model = ScriptedModel([text_turn("an answer")], name=SONNET)  # no small model of its own: asks itself
    agent = Agent(model, max_budget_usd=0.10)
    runtime = agent.context.runtime
    with pytest.raises(ToolError, match=r"not asked: .*was not sent"):
        await runtime.ask_small_model("WebFetch", "Answer from the page.", "p" * 400_000)
    agent.cost.max_budget_usd = None
    with pytest.raises(ToolError, match=r"200,000-token window .* not sent"):
        await runtime.ask_small_model("WebFetch", "Answer from the page.", "p" * 1_000_000)
    assert model.requests == []
    assert await runtime.ask_small_model("WebFetch", "Answer.", "a small page") == "an answer"


async def test_a_request_larger_than_the_window_is_compacted_before_it_is_sent() -> None:
    @tool
    def dump(size: int) -> str:
        """Print `size` characters.

        Args:
            size: how many
        """
        return "d" * size

    def respond(request: ModelRequest):
        last = request.messages[-1]
        asked_for_summary = isinstance(last, UserMessage) and last.text.startswith(COMPACT_INSTRUCTION)
        return text_turn("## Goal\nsummary" if asked_for_summary else "done")

    big = tool_turn(("dump", {"size": 40_000}))
    model = ScriptedModel([big, big, big, *[respond] * 4])
    policy = CompactionPolicy(threshold=None, window=20_000)  # no automatic compaction: only the window
    agent = Agent(model, tools=[dump], compaction=policy)
    events, result = await run(agent, "go")
    assert result.subtype == "success"
    assert [e.trigger for e in events if isinstance(e, Compacted)] == ["overflow"]
    sizes = [len(r.system) + sum(len(repr(m)) for m in r.messages) for r in model.requests]
    assert max(sizes) < 20_000 * 4


async def test_one_message_larger_than_the_window_is_refused_with_a_clear_error() -> None:
    model = ScriptedModel([text_turn("never")], name=SONNET)
    agent = Agent(model)
    _, result = await run(agent, "w" * 1_000_000)  # 250,000 tokens: no summary of it can be asked either
    assert model.requests == []
    assert result.subtype == "error_during_execution"
    assert "200,000-token window" in result.text and "not sent" in result.text


SMALL = Usage(input_tokens=10, output_tokens=10)


def _spawner(prompt: str, answer: str = "child done") -> RoutedModel:
    return RoutedModel(
        {
            "main": [tool_turn(("AgentSpawn", {"prompt": prompt, "label": "c"}), usage=SMALL), text_turn("done")],
            "c": [text_turn(answer, usage=Usage(input_tokens=20_000))],  # $0.06
        },
        name=SONNET,
    )


async def test_a_sub_agents_spend_counts_against_the_trees_budget() -> None:
    model = _spawner("list the files", answer="f" * 40_000)
    main = Agent(model, tools=[AgentSpawn()], max_budget_usd=0.07)
    _, result = await run(main, "delegate")
    # The child's $0.06 leaves less than $0.01: main's next request, which carries the child's answer (about
    # 10,000 tokens, $0.0375; at least half that however the last count is scaled), does not fit.
    assert len(model.requests("c")) == 1 and len(model.requests("main")) == 1
    assert result.subtype == "error_max_budget_usd" and "was not sent" in result.text
    assert main.children["c"].agent.cost.own_spent == Decimal("0.06")
    assert main.cost.spent == Decimal("0.06") + cost_of(SONNET, SMALL).usd_total
    await main.aclose()


async def test_a_sub_agent_cannot_send_what_its_parents_budget_cannot_pay() -> None:
    model = _spawner("q" * 200_000)  # the child's first request alone is about $0.19
    main = Agent(model, tools=[AgentSpawn()], max_budget_usd=0.10)
    await run(main, "delegate")
    assert model.requests("c") == []
    child = main.children["c"]
    assert child.result is not None and child.result.subtype == "error_max_budget_usd"
    assert "by the tree of agents c belongs to" in child.result.text
    await main.aclose()


async def test_requests_in_flight_hold_their_estimate_so_parallel_agents_cannot_overspend() -> None:
    spawn = [("AgentSpawn", {"prompt": "r" * 60_000, "label": label}) for label in ("a", "b", "c")]
    scripts = {
        "main": [tool_turn(*spawn, usage=SMALL), text_turn("main done")],
        **{label: ScriptedModel([text_turn(f"{label} done")], name=SONNET, delay=0.2) for label in "abc"},
    }
    model = RoutedModel(scripts, name=SONNET)
    # Each child's first request is about 15,000 tokens: $0.056 at the cache-write price. Two fit in $0.12.
    main = Agent(model, tools=[AgentSpawn()], max_budget_usd=0.12)
    await run(main, "three at once")
    sent = [label for label in "abc" if model.requests(label)]
    assert len(sent) == 2, sent
    refused = [c for c in main.children.values() if not model.requests(c.label)]
    assert refused[0].result is not None and "in flight" in refused[0].result.text
    assert main.cost.reserved == 0
    await main.aclose()
