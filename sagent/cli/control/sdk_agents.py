"""A Claude Agent SDK program's `agents` (`ClaudeAgentOptions.agents`, sent in its initialize request): they
join the agent files AgentSpawn can start, winning over a file of the same name, as the program's options
win over files in Claude Code. The initialize answer lists every agent the run can start."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sagent.agent.agent import Agent


def attach_program_agents(agent: Agent, given: object, say: Callable[[str], None]) -> None:
    """Give `agent`'s AgentSpawn the program's agents; what cannot be used is said through `say`."""
    from sagent.resources.agent_files import definitions_from_mapping
    from sagent.tools.agents import AgentSpawn

    found, problems = definitions_from_mapping(given, "the SDK program's")
    for problem in problems:
        say(problem)
    spawn = agent.tools.get("AgentSpawn")
    if not isinstance(spawn, AgentSpawn):
        if found:
            say("the SDK program's agents cannot start: AgentSpawn (Claude Code's Task) is not among the tools")
        return
    if not found:
        return
    offered = AgentSpawn({**spawn.agents, **{d.name: d for d in found}}.values())
    agent.tools["AgentSpawn"] = offered
    agent.configure(tools=tuple(offered if t is spawn else t for t in agent.settings.tools))


def agent_infos(agent: Agent) -> list[dict[str, Any]]:
    """The agents AgentSpawn can start, as Claude Code's initialize answer lists them."""
    spawn = agent.tools.get("AgentSpawn")
    agents = getattr(spawn, "agents", None) or {}
    return [
        {"name": a.name, "description": a.description, **({"model": a.model} if a.model else {})}
        for a in agents.values()
    ]
