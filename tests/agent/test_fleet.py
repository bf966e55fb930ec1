"""Sub-agents: spawn trees, peer messages, coordinator controls, background jobs and the tree budget,
driven by scripted models (one script per agent label)."""

from __future__ import annotations

import asyncio

import pytest

from sagent.agent.agent import Agent
from sagent.agent.fleet import Fleet, FleetError
from sagent.events import ModelSwitched, Result, ToolFinished, TurnFinished
from sagent.providers.scripted import RoutedModel, ScriptedModel, text_turn, tool_turn
from sagent.tools import AgentSelf, AgentSend, AgentSpawn, Jobs
from sagent.tools.base import tool
from sagent.types import ModelRequest, PeerMessage, ToolResult, Usage

PRICED = "claude-sonnet-4-6"  # in the catalog, so every response has a real cost


def fleet_tools() -> list:
    return [AgentSpawn(), AgentSend(), AgentSelf(), Jobs()]


def tool_texts(request: ModelRequest) -> list[str]:
    return [m.text for m in request.messages if isinstance(m, ToolResult)]


async def run_to_end(agent: Agent, prompt: str | None = None) -> tuple[list, Result]:
    events = [event async for event in agent.run(prompt)]
    assert isinstance(events[-1], Result)
    return events, events[-1]


def every_agent(root: Agent) -> list[Agent]:
    found = [root]
    for child in root.children.values():
        found += every_agent(child.agent)
    return found


def meeting(parties: int):
    """A tool every party must reach before any of them goes on: it only returns when they run at once."""
    barrier = asyncio.Barrier(parties)

    @tool
    async def meet() -> str:
        """Wait for the other agents."""
        await asyncio.wait_for(barrier.wait(), 5)
        return "met"

    return meet


async def test_a_three_level_tree_runs_children_concurrently_and_rolls_up_every_cost() -> None:
    model = RoutedModel(
        {
            "main": [
                tool_turn(
                    ("AgentSpawn", {"prompt": "explore module a", "label": "a"}),
                    ("AgentSpawn", {"prompt": "explore module b", "label": "b"}),
                ),
                lambda request: text_turn("main: " + " || ".join(tool_texts(request))),
            ],
            "a": [
                tool_turn(("meet", {})),
                tool_turn(("AgentSpawn", {"prompt": "dig into a.util", "label": "g"})),
                lambda request: text_turn("a found " + tool_texts(request)[-1]),
            ],
            "b": [tool_turn(("meet", {})), text_turn("b found beta")],
            "g": [text_turn("g found gamma")],
        },
        name=PRICED,
        provider="anthropic",
    )
    main = Agent(model, tools=[*fleet_tools(), meeting(2)], system="You are a careful engineer.")
    events, result = await run_to_end(main, "map the project")

    assert result.subtype == "success"
    # a and b met in their first tool round, so they ran at the same time; g's answer came up two levels.
    assert "b found beta" in result.text
    assert "a found g (anthropic/claude-sonnet-4-6, 1 response" in result.text and "g found gamma" in result.text
    a, b = main.children["a"].agent, main.children["b"].agent
    g = a.children["g"].agent
    assert (a.depth, b.depth, g.depth) == (1, 1, 2)
    assert g.parent is a and a.parent is main
    # Each child kept the parent's own system prompt and got its label; none sees the others' notes.
    assert g.system.startswith("You are a careful engineer.") and '"g"' in g.system and '"a"' in g.system
    assert 'sub-agent "a"' not in g.system
    # Cost: every agent has its own; the root's total is the sum of every response in the tree, live.
    own = {agent.label: agent.cost.own_usd for agent in every_agent(main)}
    assert all(spent > 0 for spent in own.values())
    assert main.cost.total_usd == pytest.approx(sum(own.values()))
    assert a.cost.total_usd == pytest.approx(own["a"] + own["g"])
    assert result.total_cost_usd == pytest.approx(main.cost.total_usd)
    turns = [e for e in events if isinstance(e, TurnFinished)]
    assert turns[-1].total_cost_usd == pytest.approx(main.cost.total_usd)
    assert main.cost.by_model[PRICED].responses == 8  # main 2, a 3, b 2, g 1
    # One-shot children leave the fleet when done.
    assert list(main.fleet.agents) == ["main"]
    await main.aclose()


async def test_limits_refuse_spawns_with_clear_errors() -> None:
    built: list[tuple] = []

    def models(provider: str | None, name: str | None) -> ScriptedModel:
        built.append((provider, name))
        return ScriptedModel([text_turn("hi")] * 5, provider=provider or "scripted", name=name or "m")

    fleet = Fleet(max_depth=1, max_agents=3, allow_providers={"scripted"}, models=models)
    main = Agent(ScriptedModel([]), tools=fleet_tools(), fleet=fleet)
    worker = main.spawn("wait for work", label="worker", persistent=True)
    # A child at the depth limit is not offered AgentSpawn, and a direct spawn says why.
    assert "AgentSpawn" not in worker.agent.tools and "AgentSend" in worker.agent.tools
    with pytest.raises(FleetError, match=r"depth 2, beyond the limit of 1 \(max_depth\)"):
        worker.agent.spawn("deeper")
    with pytest.raises(FleetError, match="names the person or sagent itself"):
        main.spawn("pose", label="user")
    with pytest.raises(FleetError, match="label 'worker' is taken"):
        main.spawn("again", label="worker")
    with pytest.raises(FleetError, match="provider 'openai' is not allowed here"):
        main.spawn("elsewhere", provider="openai")
    main.spawn("other", label="other", provider="scripted", model="small", persistent=True)
    assert built[-1] == ("scripted", "small")
    with pytest.raises(FleetError, match=r"3 agents are running, the limit \(max_agents\)"):
        main.spawn("one too many")
    with pytest.raises(FleetError, match="unknown tool"):
        Agent(ScriptedModel([]), tools=fleet_tools(), label="x", fleet=Fleet()).spawn("t", tools=["Bash"])
    await main.aclose()
    assert main.fleet.agents == {}


async def test_the_spawn_tool_reports_a_refusal_to_the_model() -> None:
    model = RoutedModel(
        {
            "main": [
                tool_turn(("AgentSpawn", {"prompt": "a", "label": "one"}), ("AgentSpawn", {"prompt": "b"})),
                text_turn("ok"),
            ],
            "one": [text_turn("done")],
        }
    )
    main = Agent(model, tools=fleet_tools(), fleet=Fleet(max_agents=2))
    events, result = await run_to_end(main, "go")
    finished = [e.result for e in events if isinstance(e, ToolFinished)]
    assert sum(r.is_error for r in finished) == 1
    refused = next(r for r in finished if r.is_error)
    assert "limit (max_agents)" in refused.text
    assert result.subtype == "success"
    await main.aclose()


async def test_persistent_workers_message_each_other_and_report_when_idle() -> None:
    model = RoutedModel(
        {
            "main": [
                tool_turn(
                    ("AgentSpawn", {"prompt": "ask w2 for the port", "label": "w1", "persistent": True}),
                    ("AgentSpawn", {"prompt": "wait for questions", "label": "w2", "persistent": True}),
                ),
                text_turn("waiting for the workers"),
                *[lambda r: text_turn(f"heard {sum(isinstance(m, PeerMessage) for m in r.messages)}")] * 4,
            ],
            "w1": [
                tool_turn(("AgentSend", {"to": "w2", "message": "which port?"})),
                text_turn("asked w2"),
                lambda r: text_turn(f"w1 learned: {r.messages[-1].text}"),
            ],
            "w2": [
                text_turn("ready"),
                lambda r: tool_turn(("AgentSend", {"to": "w1", "message": "port 8080"})),
                text_turn("answered w1"),
            ],
        }
    )
    main = Agent(model, tools=fleet_tools())
    _, result = await run_to_end(main, "coordinate")
    assert result.subtype == "success"
    w1_requests = model.requests("w1")
    assert any(
        isinstance(m, PeerMessage) and m.sender == "w2" and m.text == "port 8080" for m in w1_requests[-1].messages
    )
    w2_requests = model.requests("w2")
    assert any(isinstance(m, PeerMessage) and m.sender == "w1" for m in w2_requests[-1].messages)
    # main waited for both to go idle: their reports reached it, each naming its sender.
    reports = [m for m in main.history if isinstance(m, PeerMessage)]
    assert {m.sender for m in reports} == {"w1", "w2"}
    assert any("w1 learned: port 8080" in m.text for m in reports)
    # The tools stay the same from request to request while peers come and go (they open the cached
    # prefix); who is reachable is in AgentSelf status instead.
    assert all(r.tools == w1_requests[0].tools for r in w1_requests)
    assert all(r.tools == model.requests("main")[0].tools for r in model.requests("main"))
    status = main.context.agent().status()
    assert "reachable with AgentSend:" in status and "  w1: your sub-agent, scripted/scripted, idle" in status
    await main.aclose()
    assert main.fleet.agents == {}


async def test_a_coordinator_switches_a_workers_model_mid_task() -> None:
    gate = asyncio.Event()
    second = ScriptedModel(
        [lambda r: text_turn(f"finished on the new model after {tool_texts(r)[-1]}")], name="model-2"
    )

    def models(provider: str | None, name: str | None) -> ScriptedModel:
        assert (provider, name) == ("scripted", "model-2")
        gate.set()  # the control has reached the worker: let its tool finish
        return second

    @tool
    async def build() -> str:
        """Build the project."""
        await asyncio.wait_for(gate.wait(), 5)
        return "build ok"

    model = RoutedModel(
        {
            "main": [
                tool_turn(("AgentSpawn", {"prompt": "build it", "label": "w", "persistent": True})),
                tool_turn(
                    ("AgentSend", {"to": "w", "control": "switch_model", "provider": "scripted", "model": "model-2"})
                ),
                text_turn("switched the worker"),
                text_turn("the worker is done"),
            ],
            "w": [tool_turn(("build", {}))],
        },
        name="model-1",
    )
    main = Agent(model, tools=[*fleet_tools(), build], fleet=Fleet(models=models))
    _, result = await run_to_end(main, "build with a worker")
    assert result.subtype == "success"
    receipt = tool_texts(model.requests("main")[2])[-1]
    assert "switch_model sent to w" in receipt and "it is working" in receipt
    worker = main.children["w"]
    assert worker.agent.model is second
    # The worker's first response came from model-1; after the switch its history went on to model-2.
    assert len(model.requests("w")) == 1
    assert tool_texts(second.requests[0]) == ["build ok"]
    assert worker.result is not None and worker.result.text == "finished on the new model after build ok"
    # A worker cannot control its coordinator.
    with pytest.raises(FleetError, match="does not coordinate 'main'"):
        worker.agent.control("main", "stop")
    await main.aclose()


async def test_a_budget_cap_hit_by_a_grandchild_stops_the_whole_tree() -> None:
    cap = 1.0
    started_after_cap: dict[str, int] = {}
    holder: list[Agent] = []

    def step(label: str, response):
        def answer(request: ModelRequest):
            if holder[0].cost.over_budget():
                started_after_cap[label] = started_after_cap.get(label, 0) + 1
            return response

        return answer

    expensive = Usage(input_tokens=1_000_000)  # $3 on claude-sonnet-4-6
    slow_b = ScriptedModel(
        [step("b", tool_turn(("meet", {}))), step("b", tool_turn(("meet", {}))), step("b", text_turn("b"))],
        name=PRICED,
        provider="anthropic",
        delay=0.2,
    )
    model = RoutedModel(
        {
            "main": [
                step(
                    "main",
                    tool_turn(
                        ("AgentSpawn", {"prompt": "a", "label": "a"}), ("AgentSpawn", {"prompt": "b", "label": "b"})
                    ),
                ),
                step("main", text_turn("main done")),
            ],
            "a": [step("a", tool_turn(("AgentSpawn", {"prompt": "g", "label": "g"}))), step("a", text_turn("a done"))],
            "g": [step("g", tool_turn(("meet", {}), usage=expensive)), step("g", text_turn("g done"))],
            "b": slow_b,
        },
        name=PRICED,
        provider="anthropic",
    )

    @tool
    async def meet() -> str:
        """Meet."""
        return "met"

    main = Agent(model, tools=[*fleet_tools(), meet], max_budget_usd=cap)
    holder.append(main)
    _, result = await run_to_end(main, "go")

    # g's response crossed the cap. b was streaming then: that response finished (one more, in flight) and
    # no agent started another paid call.
    assert started_after_cap == {}
    assert len(slow_b.requests) == 1
    assert result.subtype == "error_max_budget_usd"
    assert "by the tree" not in result.text and "reaches the budget of $1.0000" in result.text
    children = {c.label: c for c in main.children.values()}
    g = children["a"].agent.children["g"]
    for child in (children["a"], children["b"], g):
        assert child.result is not None and child.result.subtype == "error_max_budget_usd", child.label
    assert "by the tree of agents" in g.result.text
    assert main.cost.total_usd == pytest.approx(sum(a.cost.own_usd for a in every_agent(main)))
    assert main.cost.total_usd >= cap
    await main.aclose()


async def test_self_status_switch_and_clear_tool_results() -> None:
    @tool
    def look(path: str) -> str:
        """Look at a file.

        Args:
            path: the file
        """
        return f"contents of {path} " * 50

    second = ScriptedModel([lambda r: text_turn("on model-2")], name="model-2")
    model = ScriptedModel(
        [
            tool_turn(("look", {"path": "a.py"}), ("look", {"path": "b.py"})),
            tool_turn(
                ("AgentSelf", {"action": "status"}), ("AgentSelf", {"action": "clear_tool_results", "keep_last": 1})
            ),
            tool_turn(("AgentSelf", {"action": "switch", "model": "model-2", "effort": "high"})),
        ],
        name="model-1",
    )
    main = Agent(model, tools=[*fleet_tools(), look], fleet=Fleet(models=lambda p, n: second))
    events, result = await run_to_end(main, "look around")
    assert result.text == "on model-2"
    status = tool_texts(model.requests[2])[2]
    assert "label: main" in status and "model: scripted/model-1" in status and "context:" in status
    assert "tool results" in status and "reachable with AgentSend: no other agent is running now" in status
    # The first look's output was cleared (the last one kept); the change is in the log for a resume.
    cleared = tool_texts(model.requests[2])[:2]
    assert cleared[0].startswith("[output cleared") and cleared[1].startswith("contents of b.py")
    assert any(isinstance(e, ModelSwitched) and e.model == "model-2" for e in events)
    assert main.effort == "high" and len(second.requests) == 1
    await main.aclose()


async def test_a_switch_to_a_model_too_small_for_the_context_is_refused() -> None:
    big = Usage(input_tokens=300_000)
    model = ScriptedModel(
        [
            tool_turn(("AgentSelf", {"action": "switch", "model": "gpt-4.1-mini"}), usage=big),
            text_turn("stayed"),
        ],
        name="model-1",
    )
    small = ScriptedModel([], name="claude-haiku-4-5", provider="anthropic")
    main = Agent(model, tools=fleet_tools(), fleet=Fleet(models=lambda p, n: small))
    events, result = await run_to_end(main, "switch")
    refusal = next(e.result for e in events if isinstance(e, ToolFinished))
    assert refusal.is_error and "cannot switch: claude-haiku-4-5 holds 200,000 tokens" in refusal.text
    assert main.model is model and result.text == "stayed"
    await main.aclose()


async def test_the_library_spawns_waits_and_messages_an_idle_worker_which_wakes() -> None:
    model = RoutedModel(
        {
            "tests": [text_turn("2 failures in test_parser.py")],
            "docs": [text_turn("ready"), lambda r: text_turn(f"re-checked: {r.messages[-1].text}")],
        },
        name=PRICED,
        provider="anthropic",
    )
    main = Agent(model, tools=fleet_tools())
    tests = main.spawn("Run the tests.", label="tests")
    docs = main.spawn("Check the docs.", label="docs", persistent=True)
    results = await asyncio.gather(tests.wait(), docs.wait())
    assert [r.text for r in results] == ["2 failures in test_parser.py", "ready"]
    assert docs.status == "idle" and tests.status == "stopped"
    receipt = main.send("docs", "look at README.md again")
    assert receipt.to == "docs" and not receipt.was_working
    assert "it was idle and starts on it now" in receipt.describe()
    while docs.status != "idle" or docs.agent.has_pending_input:
        await asyncio.sleep(0.01)
    assert docs.result is not None and docs.result.text == "re-checked: look at README.md again"
    # Its reports reached main's inbox, to be read when main next runs.
    assert main.has_pending_input
    assert main.cost.total_usd == pytest.approx(tests.agent.cost.own_usd + docs.agent.cost.own_usd)
    await main.aclose()
    assert docs.status == "stopped"


async def test_compaction_by_the_agent_itself_and_a_coordinators_compact_and_stop() -> None:
    gate = asyncio.Event()

    @tool
    async def build() -> str:
        """Build."""
        await asyncio.wait_for(gate.wait(), 5)
        return "build ok"

    def summary_or(step):
        def answer(request: ModelRequest):
            if "write a summary of the conversation above" in request.messages[-1].text:
                return text_turn(f"SUMMARY of {len(request.messages) - 1} messages")
            return step(request) if callable(step) else step

        return answer

    model = RoutedModel(
        {
            "main": [
                tool_turn(("AgentSpawn", {"prompt": "build", "label": "w", "persistent": True})),
                tool_turn(("AgentSend", {"to": "w", "control": "compact", "focus": "the build"})),
                tool_turn(("AgentSelf", {"action": "compact", "focus": "the workers"})),
                summary_or(text_turn("x")),
                summary_or(lambda r: tool_turn(("AgentSend", {"to": "w", "control": "stop"}))),
                summary_or(lambda r: text_turn(f"main sees {r.messages[0].text[:40]!r}")),
                *[summary_or(text_turn("noted"))] * 3,
            ],
            "w": [
                tool_turn(("build", {})),
                *[summary_or(lambda r: text_turn(f"w sees {len(r.messages)} messages"))] * 2,
            ],
        }
    )
    main = Agent(model, tools=[*fleet_tools(), build])
    run = main.run("build, compacting as you go")
    async for event in run:
        if isinstance(event, ToolFinished) and event.result.text.startswith("compact sent to w"):
            gate.set()
    worker = main.children["w"]
    w_requests = model.requests("w")
    # The coordinator's compact reached the worker mid-task: its next request was the summary alone.
    assert "SUMMARY of 3 messages\n" in w_requests[-1].messages[0].text
    assert len(w_requests[-1].messages) == 1 and worker.result is not None
    assert worker.result.text == "w sees 1 messages"
    # The main agent compacted itself between its responses, keeping the focus it asked for.
    asks = [r for r in model.requests("main") if "write a summary of the conversation above" in r.messages[-1].text]
    assert len(asks) == 1 and "Give most room to: the workers" in asks[0].messages[-1].text
    after = model.requests("main")[4].messages
    assert "SUMMARY of 5 messages\n" in after[0].text  # the older part; the AgentSelf call stays verbatim
    assert [type(m).__name__ for m in after[1:]] == ["AssistantMessage", "ToolResult"]
    # stop ended the persistent worker; it told main it stopped.
    assert worker.status == "stopped" and worker.agent.closed
    assert any(isinstance(m, PeerMessage) and m.sender == "w" and m.text.startswith("[stopped") for m in main.history)
    await main.aclose()


async def test_a_coordinator_cranks_a_workers_thinking_and_drops_its_file_reads() -> None:
    gate = asyncio.Event()

    @tool
    async def read_file(path: str) -> str:
        """Read a file."""
        return f"the whole of {path}: " + "x" * 200

    @tool
    async def build() -> str:
        """Build the project."""
        await asyncio.wait_for(gate.wait(), 5)
        return "build ok"

    def open_gate(request: ModelRequest):  # type: ignore[no-untyped-def]
        gate.set()
        return text_turn("tuned the worker")

    model = RoutedModel(
        {
            "main": [
                tool_turn(("AgentSpawn", {"prompt": "build it", "label": "w", "persistent": True})),
                tool_turn(
                    ("AgentSend", {"to": "w", "control": "tune", "effort": "high", "thinking": 4096}),
                    ("AgentSend", {"to": "w", "control": "clear_tool_results", "tools": ["read_file"]}),
                ),
                open_gate,
                text_turn("the worker is done"),
            ],
            "w": [
                tool_turn(("read_file", {"path": "a.py"}), ("read_file", {"path": "b.py"})),
                tool_turn(("build", {})),
                text_turn("built"),
            ],
        }
    )
    main = Agent(model, tools=[*fleet_tools(), read_file, build])
    _, result = await run_to_end(main, "build with a worker")
    assert result.subtype == "success"
    receipts = tool_texts(model.requests("main")[2])
    assert any("tune sent to w" in r for r in receipts) and any("clear_tool_results sent to w" in r for r in receipts)
    last = model.requests("w")[-1]
    assert last.effort == "high" and last.thinking_budget == 4096
    texts = tool_texts(last)
    assert "build ok" in texts and not any("the whole of" in t for t in texts)


async def test_controls_that_lack_what_they_need_are_refused_with_the_reason() -> None:
    model = RoutedModel(
        {
            "main": [
                tool_turn(("AgentSpawn", {"prompt": "wait", "label": "w", "persistent": True})),
                tool_turn(
                    ("AgentSend", {"to": "w", "control": "tune"}),
                    ("AgentSend", {"to": "w", "control": "tune", "effort": "extreme"}),
                    ("AgentSend", {"to": "w", "control": "clear_tool_results"}),
                ),
                text_turn("done"),
            ],
            "w": [text_turn("waiting")],
        }
    )
    main = Agent(model, tools=fleet_tools())
    await run_to_end(main, "go")
    texts = tool_texts(model.requests("main")[2])
    assert any("tune needs an effort or a thinking budget" in t for t in texts)
    assert any("extreme" in t and "xhigh" in t for t in texts)  # the schema's or the fleet's refusal
    assert any("needs the tools whose results go, or keep_last" in t for t in texts)


def test_controls_cross_processes_with_every_field_checked() -> None:
    import json

    from sagent.agent.fleet import Envelope
    from sagent.fleet_nats.wire import envelope_bytes, envelope_of

    sent = Envelope("main", "w", control="clear_tool_results", tools=("Read",), keep_last=None)
    assert envelope_of(envelope_bytes(sent)) == sent
    tuned = Envelope("main", "w", control="tune", effort="max", thinking=0)
    assert envelope_of(envelope_bytes(tuned)) == tuned
    for bad in ({"tools": "Read"}, {"thinking": "lots"}, {"keep_last": True}, {"control": "reboot"}):
        with pytest.raises(FleetError):
            envelope_of(json.dumps({"sender": "main", "to": "w", "control": "tune", **bad}).encode())
