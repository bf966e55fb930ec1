"""AgentSettings: one frozen value for how an agent works, built once, inherited whole by sub-agents; and
the SpawnRequest that carries a spawn from the AgentSpawn tool to the fleet."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from sagent.advisor import Advisor, AdvisorPolicy
from sagent.agent.agent import Agent
from sagent.agent.compaction import CompactionPolicy
from sagent.agent.fleet import Fleet
from sagent.agent.hooks import Allow, Deny, Hook
from sagent.agent.settings import DEFAULT_MAX_AGENTS, DEFAULT_MAX_DEPTH, AgentSettings
from sagent.cli.main import build_parser
from sagent.events import Result
from sagent.permissions.policy import Permissions
from sagent.providers.base import RetryPolicy
from sagent.providers.scripted import RoutedModel, ScriptedModel, text_turn, tool_turn
from sagent.sandbox import SandboxPolicy
from sagent.tools import AgentSelf, AgentSend, AgentSpawn, Jobs
from sagent.tools.base import ToolContext
from sagent.tools.runtime import SpawnRequest
from sagent.types import ToolCall


def every_setting_changed(cwd: Path) -> dict[str, Any]:
    """A value unlike the default for every setting. A new setting must get one here, or the test fails."""
    advisor = Advisor(ScriptedModel(name="strong"), AdvisorPolicy(review=True))
    return {
        "system": "you are the boss",
        # The advisor's tool and hook are what setting `advisor` adds; given here, nothing is added twice.
        "tools": (AgentSpawn(), AgentSend(), AgentSelf(), Jobs(), advisor.tool),
        "max_tool_rounds": 9,
        "max_budget_usd": 5.0,
        "max_subscription_tokens": 50_000,
        "max_tokens": 1234,
        "thinking_budget": 2048,
        "effort": "low",
        "cwd": cwd,
        "retry": RetryPolicy(max_retries=1),
        "background_after": 30.0,
        "input_preempts": True,
        "preempt_questions": True,
        "compaction": CompactionPolicy(threshold=0.5),
        "max_depth": 5,
        "max_agents": 7,
        "handoff_capsules": 3,
        "history_turns": 5,
        "allow_providers": frozenset({"scripted"}),
        "label": "boss",
        "role": "a note for the boss alone",
        "agent_type": "boss-file",
        "hooks": (Hook(), advisor.hook),
        "approver": _refuse_all,
        "permissions": Permissions.build(mode="plan", deny=["Bash(rm:*)"], cwd=cwd),
        "advisor": advisor,
        "sandbox": SandboxPolicy(mode="read-only", network=True),
        "editor": _NO_EDITOR,  # an editor lending files and terminals (sagent acp): a sub-agent's tools use it too
    }


class _Editor:
    """An editor that lends nothing (its methods are never called here)."""

    reads_files = writes_files = runs_commands = False


_NO_EDITOR = _Editor()


async def _refuse_all(agent: Agent, call: ToolCall, reason: str) -> Allow | Deny:
    return Deny("nobody approves")


# What spawning sets for the child itself, and why (each is asserted below).
SET_BY_SPAWN = {"label", "role", "agent_type", "max_budget_usd", "max_subscription_tokens"}


async def test_a_child_inherits_every_setting_it_is_not_given(tmp_path: Path) -> None:
    values = every_setting_changed(tmp_path)
    assert set(values) == set(AgentSettings.names()), "give the new setting a value in every_setting_changed"
    defaults = AgentSettings()
    for name, value in values.items():
        assert value != getattr(defaults, name), name
    parent = Agent(ScriptedModel([text_turn("done")]), AgentSettings(**values))
    child = parent.spawn("a task", label="kid")
    inherited = child.agent.settings
    for name in AgentSettings.names():
        if name not in SET_BY_SPAWN:
            assert getattr(inherited, name) == values[name], f"{name} was not inherited"
    assert inherited.label == "kid"
    assert inherited.role != values["role"] and '"kid"' in inherited.role and '"boss"' in inherited.role
    assert inherited.agent_type == ""  # not started from an agent file, whatever its parent was
    assert inherited.max_budget_usd is None  # the parent's budget holds the child's spend
    assert inherited.max_subscription_tokens is None  # and its token limit the child's subscription use
    assert child.agent.cost.budgeted() is parent.cost
    assert child.agent.system.startswith("you are the boss\n\n")
    assert (await child.wait()).text == "done"
    await parent.aclose()


async def test_a_child_made_after_a_switch_inherits_the_switched_effort() -> None:
    parent = Agent(ScriptedModel([text_turn("ok")]), effort="low")
    parent.configure(effort="high", thinking_budget=4096)
    child = parent.spawn("go")
    assert (child.agent.effort, child.agent.thinking_budget) == ("high", 4096)
    await child.wait()
    await parent.aclose()


def test_keyword_options_and_settings_build_the_same_agent(tmp_path: Path) -> None:
    by_keyword = Agent(ScriptedModel([]), system="s", max_budget_usd=2.0, cwd=tmp_path, effort="low")
    by_value = Agent(ScriptedModel([]), AgentSettings(system="s", max_budget_usd=2.0, cwd=tmp_path, effort="low"))
    assert by_keyword.settings == by_value.settings
    assert by_keyword.cost.max_budget_usd == 2.0 and by_keyword.context.cwd == tmp_path.resolve()
    # An option replaces the field of settings given too.
    both = Agent(ScriptedModel([]), AgentSettings(system="a", max_tokens=10), system="b")
    assert (both.system, both.max_tokens) == ("b", 10)


def test_an_unknown_option_names_the_settings() -> None:
    with pytest.raises(TypeError, match=r"unknown setting.*max_budget\b.*the settings are: system"):
        Agent(ScriptedModel([]), max_budget=1.0)


def test_settings_are_frozen_and_normalised(tmp_path: Path) -> None:
    settings = AgentSettings(tools=[AgentSpawn()], cwd=str(tmp_path), allow_providers={"openai"})  # type: ignore[arg-type]
    assert isinstance(settings.tools, tuple) and settings.cwd == tmp_path
    assert settings.allow_providers == frozenset({"openai"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.system = "x"  # type: ignore[misc]
    with pytest.raises(ValueError, match="max_agents"):
        AgentSettings(max_agents=0)


def test_the_fleet_limits_come_from_the_settings_unless_a_fleet_is_given() -> None:
    agent = Agent(ScriptedModel([]), max_depth=1, max_agents=2, allow_providers={"scripted"})
    assert (agent.fleet.max_depth, agent.fleet.max_agents, agent.fleet.allow_providers) == (
        1,
        2,
        frozenset({"scripted"}),
    )
    given = Agent(ScriptedModel([]), fleet=Fleet(max_depth=2, max_agents=4))
    assert (given.max_depth, given.settings.max_agents) == (2, 4)


def test_the_command_line_defaults_are_the_settings_defaults() -> None:
    args = build_parser().parse_args(["-p", "task"])
    assert (args.max_depth, args.max_agents) == (DEFAULT_MAX_DEPTH, DEFAULT_MAX_AGENTS)
    assert (AgentSettings().max_depth, AgentSettings().max_agents) == (DEFAULT_MAX_DEPTH, DEFAULT_MAX_AGENTS)
    assert f"(default {DEFAULT_MAX_DEPTH})" in build_parser().format_help()


class RecordingRuntime:
    def __init__(self) -> None:
        self.requests: list[SpawnRequest] = []

    async def spawn(self, request: SpawnRequest) -> str:
        self.requests.append(request)
        return "started"


async def test_agent_spawn_hands_one_spawn_request_to_the_runtime(tmp_path: Path) -> None:
    runtime = RecordingRuntime()
    ctx = ToolContext(cwd=tmp_path, runtime=runtime)  # type: ignore[arg-type]
    arguments = {"prompt": "p", "label": "w", "tools": ["Read"], "max_tool_rounds": 2, "persistent": True}
    assert await AgentSpawn().run(arguments, ctx) == "started"
    assert runtime.requests == [SpawnRequest("p", label="w", tools=("Read",), max_tool_rounds=2, persistent=True)]


async def test_a_spawn_request_from_the_model_reaches_the_child_settings() -> None:
    spawn = {"prompt": "look", "label": "w", "system": "you look", "tools": ["Jobs"], "max_tool_rounds": 3}
    model = RoutedModel({"main": [tool_turn(("AgentSpawn", spawn)), text_turn("all done")], "w": [text_turn("seen")]})
    main = Agent(model, tools=[AgentSpawn(), Jobs()], max_tool_rounds=10)
    events = [e async for e in main.run("go")]
    assert isinstance(events[-1], Result) and events[-1].text == "all done"
    child = main.children["w"].agent.settings
    assert (child.system, child.max_tool_rounds, [t.name for t in child.tools]) == ("you look", 3, ["Jobs"])
    await main.aclose()
