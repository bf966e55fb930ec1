"""The subscription token limit (`max_subscription_tokens`): a model CLI on the user's plan is not priced, so
no USD budget stops it; the token limit does, for the agent and for its whole tree, before a request is sent."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from sagent.agent.agent import Agent
from sagent.agent.cost import CostTracker
from sagent.events import Result, ToolFinished
from sagent.providers.scripted import RoutedModel, ScriptedModel, text_turn, tool_turn
from sagent.tools import AgentSpawn
from sagent.tools.base import tool
from sagent.types import Cost, Usage

SUBSCRIBED = "gpt-5.4 (subscription)"  # how a CLI-backed model names its responses
THOUSAND = Usage(input_tokens=600, output_tokens=100, cache_read_tokens=300)


@tool
def echo(text: str) -> str:
    """Echo the text back.

    Args:
        text: what to echo
    """
    return f"echo: {text}"


async def test_an_agent_on_a_subscription_stops_at_its_token_limit_before_the_next_request() -> None:
    model = ScriptedModel([tool_turn(("echo", {"text": str(n)}), usage=THOUSAND) for n in range(5)], name=SUBSCRIBED)
    agent = Agent(model, tools=[echo], max_subscription_tokens=1_500)
    events = [e async for e in agent.run("go")]
    result = events[-1]
    assert isinstance(result, Result) and result.subtype == "error_max_budget_usd"
    assert "max_subscription_tokens" in result.text and "2,000 subscription tokens" in result.text
    assert len(model.requests) == 2  # the third request was never sent
    ran = [e for e in events if isinstance(e, ToolFinished) and not e.result.is_error]
    assert len(ran) == 1  # the second response's tool call was not run either
    await agent.aclose()


def test_only_subscription_use_counts_and_a_limit_holds_for_the_whole_tree() -> None:
    root = CostTracker(max_subscription_tokens=1_000)
    child = CostTracker(parent=root)
    child.add("claude-sonnet-4-6", Usage(5_000, 500))  # priced API use: the USD budget's business
    assert not root.over_budget() and child.refusing(Cost()) is None
    child.add(SUBSCRIBED, THOUSAND)
    assert root.subscription_tokens == 1_000 and root.over_budget()
    assert child.refusing(Cost()) is root  # the child's next request is refused by its parent's limit
    assert "by the tree of agents kid belongs to" in child.stop_reason("kid")
    with pytest.raises(ValueError, match="above 0"):
        CostTracker(max_subscription_tokens=0)


async def test_a_sub_agent_on_a_subscription_is_stopped_by_its_parents_token_limit() -> None:
    model = RoutedModel(
        {
            "main": [tool_turn(("AgentSpawn", {"prompt": "work", "label": "kid"})), text_turn("parent done")],
            "kid": ScriptedModel(
                [tool_turn(("echo", {"text": "x"}), usage=THOUSAND) for _ in range(4)], name=SUBSCRIBED
            ),
        }
    )
    agent = Agent(model, tools=[AgentSpawn(), echo], max_subscription_tokens=1_500)
    events = [e async for e in agent.run("delegate")]
    spawned = next(e for e in events if isinstance(e, ToolFinished) and e.result.name == "AgentSpawn")
    assert "max_subscription_tokens" in spawned.result.text
    assert agent.cost.subscription_tokens == 2_000  # two responses, then the child's third request refused
    await agent.aclose()


def test_the_flag_refuses_a_limit_below_one(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "sagent.cli.main", "-p", "hi", "--max-subscription-tokens", "0", "--cwd", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2 and "--max-subscription-tokens must be at least 1" in out.stderr
    assert "Traceback" not in out.stderr
