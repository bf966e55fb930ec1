"""`sagent trace` shows each consultation of the advisor: when, for which agent, why, which model, what it
cost, and the first line of its advice; the trace's total counts the advisor's spend."""

from __future__ import annotations

from pathlib import Path

from sagent.advisor import Advisor, AdvisorPolicy
from sagent.agent.agent import Agent
from sagent.agent.session import SessionLog
from sagent.cli.main import main as cli
from sagent.evidence.trace import build_trace
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.tools.base import ToolError, tool
from sagent.types import Usage


@tool
async def Flaky(n: int) -> str:
    """Fails for odd n."""
    if n % 2:
        raise ToolError(f"attempt {n} failed")
    return "worked"


async def test_trace_shows_each_consultation(tmp_path: Path, capsys) -> None:
    strong = ScriptedModel(
        [
            text_turn("Read the failing test first.\nThen the fixture.", Usage(2000, 300)),
            text_turn("Pass an even number.", Usage(1000, 100)),
        ],
        name="claude-opus-4-7",
    )
    policy = AdvisorPolicy(failures=2, confidence=None, stagnation=None, cooldown=0)
    steps = [
        tool_turn(("Advisor", {"question": "where do I start?"})),
        tool_turn(("Flaky", {"n": 1})),
        tool_turn(("Flaky", {"n": 3})),
        text_turn("done"),
    ]
    executor = ScriptedModel(steps, name="claude-haiku-4-5", provider="anthropic")
    log = SessionLog.create(tmp_path, {"provider": "anthropic", "model": "claude-haiku-4-5"}, directory=tmp_path / "s")
    agent = Agent(executor, tools=[Flaky], advisor=Advisor(strong, policy), session=log, cwd=tmp_path)
    await agent.run("fix it")
    await agent.aclose()
    assert log.path is not None

    trace = build_trace(log.path)
    assert [(c.trigger, c.model) for c in trace.consultations] == [
        ("tool", "claude-opus-4-7"),
        ("failures", "claude-opus-4-7"),
    ]
    advisor_usd = float(agent.cost.by_model["advisor/claude-opus-4-7"].cost.total)
    assert advisor_usd > 0 and abs(sum(c.cost_usd for c in trace.consultations) - advisor_usd) < 1e-9
    assert trace.cost_usd >= advisor_usd  # the total counts the advisor's spend

    assert cli(["trace", str(log.path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    advice = [line for line in lines if " advisor " in line]
    assert len(advice) == 2
    assert "main: advisor claude-opus-4-7 (trigger: tool)" in advice[0] and "Read the failing test first." in advice[0]
    assert "Then the fixture" not in advice[0]  # one line of the advice
    assert "(trigger: failures)" in advice[1] and "Pass an even number." in advice[1]
    cost = trace.consultations[0].cost_usd
    assert f"${cost:.4f}" in advice[0]

    page = tmp_path / "trace.html"
    assert cli(["trace", str(log.path), "--html", str(page)]) == 0
    content = page.read_text()
    assert "advisor claude-opus-4-7 (trigger: failures)" in content and "Pass an even number." in content
