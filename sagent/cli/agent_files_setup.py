"""The command line's part of agent files: read them once per run, say on stderr what could not be used, and
give the run's AgentSpawn the agents it may start by name (see `sagent.resources.agent_files`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sagent.tools.base import Tool


def agent_file_tools(args: argparse.Namespace, cwd: Path, tools: list[Tool]) -> list[Tool]:
    """`tools` with an AgentSpawn that knows the agent files in reach from `cwd`; the files are read the first
    time (kept on `args.agent_files`), and their problems reported then, once."""
    if not any(t.name == "AgentSpawn" for t in tools):
        return tools
    from sagent.resources.agent_files import AgentFiles, definitions_from_mapping, load_agent_files, with_agent_files

    found = getattr(args, "agent_files", None)
    if not isinstance(found, AgentFiles):
        found = load_agent_files(cwd)
        # A folder not trusted is named by the settings loader's one line (agent folders among its files).
        notes = found.broken_lines()
        given = getattr(args, "agents", None)
        if isinstance(given, dict):  # --agents JSON: the session's own, over the files
            more, problems = definitions_from_mapping(given, "--agents")
            agents = {agent.name: agent for agent in (*found.agents, *more)}
            found = AgentFiles(tuple(agents[name] for name in sorted(agents)), found.broken, found.untrusted_note)
            notes += problems
        args.agent_files = found
        for line in notes:
            sys.stderr.write(f"sagent: warning: {line}\n")
    return with_agent_files(tools, found.agents)
