"""The seams between the agent and its surfaces: compaction returns values that only the agent applies,
sinks take the events, and the public controls the REPL uses instead of the agent's members."""

from __future__ import annotations

import ast
from pathlib import Path

from sagent.agent.agent import Agent
from sagent.agent.compaction import HistoryChange
from sagent.events import Compacted, Event, MessageAdded, Result, ToolResultsCleared
from sagent.providers.scripted import RoutedModel, ScriptedModel, text_turn, tool_turn
from sagent.tools import AgentSpawn
from sagent.types import AssistantMessage, TextPart, UserMessage

REPL = Path(__file__).resolve().parents[2] / "sagent" / "repl"


class Collect:
    def __init__(self) -> None:
        self.seen: list[tuple[str, Event]] = []

    def on_event(self, agent: Agent, event: Event) -> None:
        self.seen.append((agent.label, event))


async def test_compaction_yields_changes_and_the_history_changes_only_when_the_agent_applies_them() -> None:
    history = [UserMessage.of("u" * 4000), AssistantMessage((TextPart("a" * 4000),)), UserMessage.of("go on")]
    agent = Agent(ScriptedModel([text_turn("## Goal\nthe summary")]), history=history)
    before = list(agent.history)
    steps = agent.window.compact(agent.history, "keep the goal", "manual", keep_recent=False)
    [change] = [c async for c in steps]
    assert isinstance(change, HistoryChange) and isinstance(change.event, Compacted)
    assert agent.history == before  # worked out, not applied
    seen_at_emit: list[int] = []

    class WhenLogged(Collect):
        def on_event(self, agent: Agent, event: Event) -> None:
            seen_at_emit.append(len(agent.history))  # the event is out before the history changes

    agent.add_sink(WhenLogged())
    assert agent.apply(change) is change.event
    assert agent.history == list(change.history) and len(agent.history) == 1
    assert seen_at_emit == [3]
    await agent.aclose()


async def test_a_sink_gets_every_event_of_its_agent_in_order_and_sub_agents_do_not_inherit_it() -> None:
    model = RoutedModel(
        {
            "main": [tool_turn(("AgentSpawn", {"prompt": "hi", "label": "kid"})), text_turn("done")],
            "kid": [text_turn("kid answer")],
        }
    )
    agent = Agent(model, tools=[AgentSpawn()])
    sink = Collect()
    agent.add_sink(sink)
    events = [e async for e in agent.run("spawn one")]
    assert [e for _, e in sink.seen] == events  # the same events as the stream, in order
    assert {label for label, _ in sink.seen} == {"main"}
    assert isinstance(events[-1], Result)
    agent.remove_sink(sink)
    agent.remove_sink(sink)  # twice is harmless
    agent.send("again")
    model_after = [e async for e in agent.run()]
    assert model_after and len(sink.seen) == len(events)
    await agent.aclose()


async def test_the_public_controls_a_surface_uses() -> None:
    agent = Agent(ScriptedModel([text_turn("ok")]), effort="high")
    agent.configure(effort=None, thinking_budget=2048)
    assert (agent.effort, agent.thinking_budget) == (None, 2048)
    assert agent.snapshot(measure=False).context_tokens is None and agent.snapshot().context_tokens is not None
    assert "compact" in agent.compaction_line() and agent.context_window is None
    agent.apply(HistoryChange(ToolResultsCleared(()), (UserMessage.of("replaced"),)))
    assert [m.text for m in agent.history if isinstance(m, UserMessage)] == ["replaced"]
    events = [e async for e in agent.run("hello")]
    assert any(isinstance(e, MessageAdded) for e in events)
    closed: list[str] = []

    async def close() -> None:
        closed.append("closed")

    agent.model.aclose = close  # type: ignore[attr-defined]
    await agent.aclose(keep_model=True)
    assert closed == [] and agent.closed


def test_the_repl_uses_only_the_agents_public_surface() -> None:
    """No REPL module reads the agent's window, job table, children, fleet or cost tracker, writes
    owns_model, or imports what the agent keeps for itself."""
    forbidden_attributes = {"window", "jobs", "children", "fleet", "owns_model", "cost", "gate", "parent", "_inbox"}
    for path in sorted(REPL.glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in forbidden_attributes:
                base = node.value
                name = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
                assert name not in ("agent", "old"), f"{path.name}:{node.lineno} reads agent.{node.attr}"
            if isinstance(node, ast.ImportFrom) and node.module in ("sagent.agent.agent", "sagent.agent.fleet"):
                names = {a.name for a in node.names}
                assert not names & {"USER", "Envelope"}, f"{path.name}:{node.lineno} imports {names}"
