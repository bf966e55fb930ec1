"""Code as a user of the library writes it, for the type checker only (`uv run mypy` checks this file; pytest
does not collect it). Each line here failed mypy --strict once: a user's code must type-check as the docs
show it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sagent import Agent, RoutedModel, TaskList, TaskListChanged, Tool, ToolContext, builtin_tools
from sagent.providers.scripted import text_turn
from sagent.resources.plugin_parts import plugin_hooks
from sagent.resources.plugins import read_plugin
from sagent.sandbox import SandboxPolicy


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
