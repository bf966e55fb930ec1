"""Built-in tools offered on demand: a request carries the tools a coding task uses and ToolSearch, whose
description names the others; a search or a call by name loads one, and it stays at the end of the list."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from sagent.agent.agent import Agent
from sagent.mcp.search import on_demand
from sagent.providers.scripted import RoutedModel, ScriptedModel, text_turn, tool_turn
from sagent.tools import ON_DEMAND, builtin_tools
from sagent.types import AssistantMessage, ToolCall, ToolResult, UserMessage
from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response

DEFERRED = {cls.name for cls in ON_DEMAND}


def on_demand_agent(model: Any, tmp_path: Path, history: list[Any] | None = None) -> Agent:
    """An agent wired as the CLI wires one: every built-in tool, the rarely used ones on demand."""
    tools, hook = on_demand(builtin_tools())
    return Agent(model, tools=tools, hooks=[hook], cwd=tmp_path, history=history or [])


def names(request: Any) -> list[str]:
    return [t.name for t in request.tools]


async def test_a_search_loads_a_tool_at_the_end_of_the_next_request_and_a_call_by_name_runs_one(
    tmp_path: Path,
) -> None:
    model = ScriptedModel(
        [
            tool_turn(("ToolSearch", {"query": "select:Recall"})),
            tool_turn(("Recall", {"query": "scale"})),
            tool_turn(("Jobs", {"action": "list"})),  # never searched for: called by its name
            text_turn("done"),
        ]
    )
    agent = on_demand_agent(model, tmp_path)
    await agent.ask("go")
    await agent.aclose()
    first, second, third, fourth = (names(r) for r in model.requests)
    assert not DEFERRED & set(first)
    assert {"Read", "Edit", "Bash", "ToolSearch"} <= set(first)
    description = next(t.description for t in model.requests[0].tools if t.name == "ToolSearch")
    assert all(name in description for name in DEFERRED)
    assert second == [*first, "Recall"]  # the list only grew, at its end
    assert third == second
    assert model.requests[2].tools is model.requests[1].tools  # unchanged: the same objects, encoded once
    assert fourth == [*first, "Recall", "Jobs"]
    results = [m for m in agent.history if isinstance(m, ToolResult)]
    assert "Recall:" in results[0].text and not any(r.is_error for r in results)
    bash = {t.name: t for t in model.requests[0].tools}["Bash"].input_schema["properties"]
    assert "background" not in bash  # offered with Jobs only
    assert "background" in {t.name: t for t in model.requests[3].tools}["Bash"].input_schema["properties"]


async def test_a_sub_agent_given_a_deferred_tool_by_name_is_offered_it(tmp_path: Path) -> None:
    model = RoutedModel(
        {
            "main": [
                tool_turn(("AgentSpawn", {"prompt": "look back", "label": "kid", "tools": ["Recall"]})),
                text_turn("ok"),
            ],
            "kid": [text_turn("nothing found")],
        }
    )
    agent = on_demand_agent(model, tmp_path)
    await agent.ask("go")
    await agent.aclose()
    assert names(model.requests("kid")[0]) == ["Recall"]
    assert "Recall" not in names(model.requests("main")[0])


async def test_a_sub_agent_finds_only_the_deferred_tools_it_was_given(tmp_path: Path) -> None:
    model = RoutedModel(
        {
            "main": [
                tool_turn(("AgentSpawn", {"prompt": "look", "label": "kid", "tools": ["Read", "ToolSearch"]})),
                text_turn("ok"),
            ],
            "kid": [tool_turn(("ToolSearch", {"query": "select:Recall"})), text_turn("none")],
        }
    )
    agent = on_demand_agent(model, tmp_path)
    await agent.ask("go")
    await agent.aclose()
    kid = model.requests("kid")
    answer = next(m for m in kid[1].messages if isinstance(m, ToolResult))
    assert answer.text.startswith("no tool matches") and "Recall" not in names(kid[1])


def sagent(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "sagent.cli.main", *args]
    return subprocess.run(
        command, capture_output=True, text=True, env=env, cwd=cwd, stdin=subprocess.DEVNULL, timeout=120
    )


def run_cli(tmp_path: Path, steps: list[Any], *flags: str) -> tuple[subprocess.CompletedProcess[str], list[dict]]:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True, exist_ok=True)
    env = {
        **{k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))},
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests-0001",
    }
    with FakeAnthropic(steps) as fake:
        out = sagent(["-p", "go", "--base-url", fake.url, "--output-format", "stream-json", *flags], env, project)
        bodies = [r["body"] for r in fake.requests]
    return out, bodies


def test_the_cli_defers_the_rare_tools_and_an_allowed_tools_rule_lets_one_run_unasked(tmp_path: Path) -> None:
    settings = tmp_path / "config" / "sagent" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"permissions": {"headlessDefault": "deny"}}))  # what would ask is refused
    steps = [tool_use_response([("Memory", {"fact": "tests run with uv run pytest"})]), text_response("kept")]
    out, bodies = run_cli(tmp_path, steps)
    assert bodies[1]["messages"][-1]["content"][0]["is_error"]  # Memory asks, and nobody is there
    steps = [tool_use_response([("Memory", {"fact": "tests run with uv run pytest"})]), text_response("kept")]
    out, bodies = run_cli(tmp_path, steps, "--allowed-tools", "Memory")
    assert out.returncode == 0, out.stderr
    first = [t["name"] for t in bodies[0]["tools"]]
    assert not DEFERRED & set(first) and "ToolSearch" in first
    assert [t["name"] for t in bodies[1]["tools"]] == [*first, "Memory"]
    result = bodies[1]["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and not result.get("is_error"), result  # sent only when true
    assert "tests run with uv run pytest" in (tmp_path / "project" / "AGENTS.md").read_text()
    init = json.loads(out.stdout.splitlines()[0])
    assert set(init["tools"]) >= DEFERRED  # the run has every tool; its requests carry some


def test_offer_tools_keeps_a_tool_in_every_request_and_tools_offers_exactly_its_list(tmp_path: Path) -> None:
    out, bodies = run_cli(tmp_path, [text_response("hi")], "--offer-tools", "WebFetch,Jobs")
    assert out.returncode == 0, out.stderr
    first = [t["name"] for t in bodies[0]["tools"]]
    assert {"WebFetch", "Jobs", "ToolSearch"} <= set(first) and "Memory" not in first
    out, bodies = run_cli(tmp_path, [text_response("hi")], "--tools", "Read,Recall")
    assert out.returncode == 0, out.stderr
    assert [t["name"] for t in bodies[0]["tools"]] == ["Read", "Recall"]
    out, bodies = run_cli(tmp_path, [text_response("hi")], "--disallowed-tools", "WebFetch")
    search = next(t for t in bodies[0]["tools"] if t["name"] == "ToolSearch")
    assert "WebFetch" not in search["description"] and "WebSearch" in search["description"]  # never offered
    out, _ = run_cli(tmp_path, [], "--offer-tools", "Nope")
    assert out.returncode == 2 and "--offer-tools: unknown tool(s) Nope" in out.stderr


async def test_a_continued_session_is_offered_again_the_on_demand_tools_its_history_called(tmp_path: Path) -> None:
    call = ToolCall("call_1", "Recall", {"query": "scale"})
    history = [UserMessage.of("look back"), AssistantMessage((call,)), ToolResult.of(call, "no match")]
    model = ScriptedModel([text_turn("done")])
    agent = on_demand_agent(model, tmp_path, history)
    await agent.ask("go on")
    await agent.aclose()
    offered = names(model.requests[0])
    assert offered[-1] == "Recall" and "Memory" not in offered


async def test_a_search_that_finds_nothing_names_the_tools_on_demand(tmp_path: Path) -> None:
    from sagent.tools.base import ToolContext

    tools, _ = on_demand(builtin_tools())
    ctx = ToolContext(cwd=tmp_path)
    answer = await tools[-1].run({"query": "quantum teleport"}, ctx)
    assert isinstance(answer, str) and answer.startswith("no tool matches") and "WebFetch" in answer
    assert ctx.loaded == []


async def test_an_agent_spawn_that_knows_agents_defined_in_files_stays_offered(tmp_path: Path) -> None:
    from sagent.tools import AgentSpawn
    from sagent.tools.runtime import AgentDefinition

    reviewer = AgentDefinition("reviewer", "Reviews a change.", "You review code.")
    tools = [AgentSpawn([reviewer]) if t.name == "AgentSpawn" else t for t in builtin_tools()]
    tools, hook = on_demand(tools)
    model = ScriptedModel([text_turn("done")])
    agent = Agent(model, tools=tools, hooks=[hook], cwd=tmp_path)
    await agent.ask("go")
    await agent.aclose()
    offered = {t.name: t for t in model.requests[0].tools}
    assert "reviewer" in offered["AgentSpawn"].description and "TodoWrite" not in offered


async def test_the_context_measure_counts_only_the_tools_a_request_offers(tmp_path: Path) -> None:
    """Before any response reports the size (a session's start, a resumed one), the context gauge and
    `context_size()` estimate the request as it will be sent: the tools offered on demand are not in it."""
    from sagent.agent.tokens import estimate_text, estimate_tools

    model = ScriptedModel([text_turn("done")])
    agent = on_demand_agent(model, tmp_path)
    every_tool = estimate_tools(agent.request().tools)
    size, tokens = agent.context_size(), agent.context_tokens
    await agent.ask("go")
    await agent.aclose()
    sent = model.requests[0]
    assert size.tools == estimate_tools(sent.tools) < every_tool - 1_000
    assert tokens == estimate_text(sent.system) + estimate_tools(sent.tools)
