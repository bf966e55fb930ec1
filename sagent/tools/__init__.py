"""The built-in tools, each a class named as the model sees it.

    from sagent import tools

    agent = Agent(model, tools=[tools.Read(), tools.Glob(), tools.Grep(), tools.Bash()])
    agent = Agent(model, tools=tools.builtin_tools())        # all of them
    agent = Agent(model, tools=tools.tools_by_name(["Read", "WebFetch"]))
    agent = Agent(model, tools=[*tools.builtin_tools(), tools.Skill.from_folders(".claude/skills")])

A tool built without arguments reads its settings from the environment as `builtin_tools` does: the web
and paper tools allow the hosts in SAGENT_ALLOW_HOSTS, and the paper tools built one by one share one
Scholar (its cache of answers), as the ones `builtin_tools` makes do.
"""

from __future__ import annotations

from collections.abc import Iterable

from sagent.tools.agents import AgentSelf, AgentSend, AgentSpawn, Jobs
from sagent.tools.base import Tool
from sagent.tools.files import Edit, Read, Write
from sagent.tools.memory_tools import Memory, Recall
from sagent.tools.net import Fetcher
from sagent.tools.papers import PaperDetails, PaperFetch, PaperSearch, Scholar
from sagent.tools.runtime import AgentDefinition
from sagent.tools.search import Glob, Grep, List
from sagent.tools.shell import Bash
from sagent.tools.skill import Skill
from sagent.tools.todo import TodoWrite
from sagent.tools.web import WebFetch, WebSearch

CORE = (Read, Write, Edit, Glob, Grep, List, Bash)
PAPERS = (PaperSearch, PaperDetails, PaperFetch)  # they share one Scholar: its cache and its fetcher
WEB = (WebFetch, WebSearch, *PAPERS)  # the web and the literature
FLEET = (AgentSpawn, AgentSend, AgentSelf, Jobs)  # sub-agents, messages, self-tuning, background jobs
MEMORY = (Memory, Recall)  # facts kept for later sessions, and the past sessions searched
TASKS = (TodoWrite,)  # the task list the agent keeps while it works
BUILTIN = CORE + TASKS + WEB + MEMORY + FLEET
ON_DEMAND = (AgentSpawn, TodoWrite, *WEB, *MEMORY, AgentSend, AgentSelf, Jobs)
"""The built-in tools a coding task rarely needs: the CLI offers them on demand (ToolSearch loads one, a call
by name runs it), so their schemas do not ride in every request. The coding prompt names AgentSpawn and
TodoWrite; an AgentSpawn that knows agents defined in files stays offered (its description lists them)."""
BY_CATALOG = (Skill,)  # built here without their catalog: the CLI gives them theirs (sagent.cli.agent_setup)

__all__ = [
    "BUILTIN",
    "BY_CATALOG",
    "CORE",
    "FLEET",
    "MEMORY",
    "ON_DEMAND",
    "PAPERS",
    "TASKS",
    "WEB",
    "AgentSelf",
    "AgentSend",
    "AgentSpawn",
    "Bash",
    "Edit",
    "Glob",
    "Grep",
    "Jobs",
    "List",
    "Memory",
    "PaperDetails",
    "PaperFetch",
    "PaperSearch",
    "Read",
    "Recall",
    "Skill",
    "TodoWrite",
    "WebFetch",
    "WebSearch",
    "Write",
    "builtin_tools",
    "tools_by_name",
]


def builtin_tools(
    fleet: bool = True, *, fetcher: Fetcher | None = None, agents: Iterable[AgentDefinition] = ()
) -> list[Tool]:
    """New instances of every built-in tool; without the fleet tools when `fleet` is False. The web and
    paper tools share `fetcher` (by default one allowing the hosts in SAGENT_ALLOW_HOSTS); AgentSpawn can
    start `agents` by name (sub-agents defined in files: `sagent.resources.agent_files.load_agent_files`)."""
    made = tools_by_name([cls.name for cls in (BUILTIN if fleet else CORE + TASKS + WEB + MEMORY)], fetcher=fetcher)
    agents = tuple(agents)
    return [AgentSpawn(agents) if isinstance(t, AgentSpawn) else t for t in made] if agents else made


def tools_by_name(names: Iterable[str], *, fetcher: Fetcher | None = None) -> list[Tool]:
    """Built-in tools by name; ValueError naming the valid ones for an unknown name. `Skill` is made
    without skills: give it its own (`Skill.from_folders(...)`), as the CLI does."""
    names = list(names)
    by_name = {cls.name: cls for cls in (*BUILTIN, *BY_CATALOG)}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise ValueError(f"unknown tool(s): {', '.join(unknown)}; the tools are: {', '.join(by_name)}")
    fetcher = fetcher or Fetcher.from_env()
    scholar = Scholar.from_env(fetcher=fetcher) if any(by_name[n] in PAPERS for n in names) else None
    made: list[Tool] = []
    for n in names:
        cls = by_name[n]
        if cls in (WebFetch, WebSearch):
            made.append(cls(fetcher=fetcher))
        elif cls in PAPERS:
            made.append(cls(scholar))
        else:
            made.append(cls())
    return made
