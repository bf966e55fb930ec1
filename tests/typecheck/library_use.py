"""Code as a user of the library writes it, for the type checker only (`uv run mypy` checks this file; pytest
does not collect it). Each line here failed mypy --strict once: a user's code must type-check as the docs
show it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sagent import (
    Agent,
    AgentDefinition,
    RoutedModel,
    TaskList,
    TaskListChanged,
    Tool,
    ToolContext,
    builtin_tools,
    load_agent_files,
)
from sagent.patterns import Handoff, Parallel, PatternResult, Sequential, Step, StepResult, Triage
from sagent.providers.scripted import text_turn
from sagent.resources.plugin_parts import plugin_hooks
from sagent.resources.plugins import read_plugin
from sagent.sandbox import SandboxPolicy
from sagent.tools import AgentSpawn


class Notes:
    """A tool as docs/tools.md describes one: a plain class with the five members, no capabilities."""

    name = "Notes"
    description = "Keep notes."
    input_schema: dict[str, Any] = {"type": "object", "properties": {}}

    def resource(self, arguments: dict[str, Any], ctx: ToolContext) -> str | None:
        return None

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        return "noted"


def tools() -> list[Tool]:
    # A plain class is a Tool (capabilities are optional), and so is every built-in tool.
    return [Notes(), *builtin_tools()]


def model() -> RoutedModel:
    # A plain dict of lists, as users write it: the parameter is a Mapping, so the dict's value type may be
    # narrower than the declared union.
    scripts = {"main": [text_turn("hi")]}
    return RoutedModel(scripts)


def agent() -> Agent:
    return Agent(model(), tools=tools())


def sandboxed_agent() -> Agent:
    # The sandbox Bash runs in, as the docs show it: one frozen policy value, inherited by sub-agents.
    policy = SandboxPolicy(mode="read-only", allowed_domains=("pypi.org",), deny_read=("~/secrets",))
    return Agent(model(), tools=tools(), sandbox=policy)


def plugin_agent(folder: Path) -> Agent:
    # A plugin folder in Claude Code's layout, its hooks given to an agent, as docs/plugins.md shows it.
    plugin = read_plugin(folder)
    return Agent(model(), tools=tools(), hooks=list(plugin_hooks([plugin], folder)))


async def where_the_work_stands(agent: Agent) -> str:
    # The task list the model keeps (TodoWrite): its changes in the stream, the list on the agent.
    async for event in agent.run("fix the bug"):
        if isinstance(event, TaskListChanged):
            print(event.tasks.line())
    tasks: TaskList = agent.task_list
    active = tasks.active
    return active.active_form if active is not None else tasks.text()


def agent_with_agent_files() -> Agent:
    # Sub-agents defined in files, as docs/agents.md shows them: found from a folder, or written in code.
    found = load_agent_files(".")
    reviewer = AgentDefinition("reviewer", "Reviews code.", "You review code.", tools=("Read", "Grep"))
    if not found.agents:
        return Agent(model(), tools=[Notes(), AgentSpawn([reviewer])])
    return Agent(model(), tools=builtin_tools(agents=[*found.agents, reviewer]))


def agent_with_skills() -> Agent:
    # Skills from folders the program chose, or everything the CLI would find from a working directory.
    from pathlib import Path

    from sagent.resources.skills import load_skills
    from sagent.tools import Skill

    chosen = Skill.from_folders("~/.claude/skills", Path(".claude/skills"))
    found = Skill.from_skills(load_skills(Path.cwd()))
    return Agent(model(), tools=[*tools(), found if found.offered else chosen])


def count(task: str, results: tuple[StepResult, ...]) -> str:
    return f"{task}: {len(results)} answers"


async def patterns(lead: Agent) -> list[PatternResult]:
    # The four patterns as docs/patterns.md writes them: steps as a list, an aggregator agent or function
    # (a lambda too), keyword options.
    review = [Step("security", system="Review security.", tools=["Read"]), Step("style", on="any")]
    return [
        await Sequential([Step("writer"), Step("editor", template="Edit:\n{input}")]).run(lead, "a tagline"),
        await Parallel(review, aggregator=Step("verdict")).run(lead, "the diff"),
        await Parallel(review, aggregator=count).run(lead, "the diff"),
        await Parallel(review, aggregator=lambda task, results: results[0].text).run(lead, "the diff"),
        await Triage([Step("billing", description="charges")], router=Step("router", model="gpt-5.4")).run(lead, "x"),
        await Handoff([Step("desk"), Step("returns")], max_handoffs=3, window=4).run(lead, "refund"),
    ]
