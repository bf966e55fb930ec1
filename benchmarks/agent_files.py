"""What sub-agents defined in files cost per request, in the provider-neutral estimate sagent uses for the
context (`sagent.agent.tokens.estimate_request`), with the real coding prompt and every built-in tool, the
rarely used ones offered on demand as the CLI offers them (`sagent.tools.ON_DEMAND`, through ToolSearch):

- the main agent's request with no agent files (target: at most MAIN_TARGET tokens, a quarter of the 4,551 it was
  when every tool's schema rode in every request),

- the main agent's request with and without three agent files (target: more by no more than the agent list
  AgentSpawn's description and schema gain, and AgentSpawn's own schema: offered on demand without agent
  files, it is in every request with them, as its description is where the model learns of them),
- a sub-agent's first request when spawned from an agent file, against a plain AgentSpawn today (target: no
  more than the plain one, beyond the agent list), for a file that names its tools and one that does not.

    uv run python benchmarks/agent_files.py

Exits 1 when a target is missed.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path

from sagent.agent.agent import Agent
from sagent.agent.prompt import coding_system_prompt
from sagent.agent.tokens import estimate_request, estimate_text
from sagent.mcp.search import McpCatalog, McpHook, ToolSearch
from sagent.providers.scripted import RoutedModel, text_turn, tool_turn
from sagent.tools import ON_DEMAND, AgentSpawn, builtin_tools
from sagent.tools.runtime import AgentDefinition
from sagent.types import ModelRequest

MAIN_TARGET = 4_551 // 4

AGENTS = (
    AgentDefinition(
        "reviewer",
        "Reviews a change for bugs and risky edits. Use after editing code.",
        "You are a careful code reviewer. Read the files you are given, look for bugs, and answer with a short "
        "list: file, line, problem, fix. Do not edit anything.",
        tools=("Read", "Grep", "Glob", "LS"),
        model="inherit",
    ),
    AgentDefinition(
        "test-runner",
        "Runs the test suite and reports the failures with their likely cause. Use after a change.",
        "You run the project's tests with Bash, read the failures, and report each with its likely cause.",
        tools=("Bash", "Read", "Grep"),
    ),
    AgentDefinition(
        "explorer",
        "Maps an unfamiliar part of the code base and explains how it fits together.",
        "You explore code and explain it: entry points, the main types, how data flows. Be concise.",
    ),
)


def first_requests(agents: tuple[AgentDefinition, ...], spawn: dict[str, object], cwd: Path) -> dict[str, ModelRequest]:
    """The first request of the main agent and of the sub-agent `spawn` starts (label "kid")."""
    model = RoutedModel(
        {"main": [tool_turn(("AgentSpawn", {**spawn, "label": "kid"})), text_turn("done")], "kid": [text_turn("ok")]}
    )
    tools = [AgentSpawn(agents) if t.name == "AgentSpawn" else t for t in builtin_tools()]
    catalog = McpCatalog(deferred=[t for t in tools if type(t) in ON_DEMAND])
    agent = Agent(
        model,
        tools=[*tools, ToolSearch(catalog)],
        hooks=[McpHook(catalog)],
        system=coding_system_prompt(cwd),
        cwd=cwd,
    )

    async def run() -> None:
        await agent.ask("review my change")
        await agent.aclose()

    asyncio.run(run())
    return {"main": model.requests("main")[0], "kid": model.requests("kid")[0]}


def agent_list_tokens(agents: tuple[AgentDefinition, ...]) -> int:
    """What the agent list itself adds to AgentSpawn: the lines in its description and the `agent` field."""
    plain, offered = AgentSpawn(), AgentSpawn(agents)
    added = offered.description[len(plain.description) :]
    field = json.dumps({"agent": offered.input_schema["properties"]["agent"]})
    return estimate_text(added) + estimate_text(field)


def spawn_tokens() -> int:
    """What AgentSpawn's own schema (name, description, arguments) adds to a request that offers it."""
    plain = AgentSpawn()
    return estimate_text(json.dumps([plain.name, plain.description, plain.input_schema]))


def main() -> int:
    missed = 0
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        # With agent files AgentSpawn is offered in every request (its description lists them); without,
        # it is offered on demand: the files add the agent list and AgentSpawn's own schema.
        listed = agent_list_tokens(AGENTS) + spawn_tokens()
        today = first_requests((), {"prompt": "review app.py"}, cwd)
        with_files = first_requests(AGENTS, {"prompt": "review app.py", "agent": "reviewer"}, cwd)
        all_tools = first_requests(AGENTS, {"prompt": "explain app.py", "agent": "explorer"}, cwd)
    rows = [
        ("main agent's request, no agent files", estimate_request(today["main"]), MAIN_TARGET),
        (
            f"main agent's request, {len(AGENTS)} agent files",
            estimate_request(with_files["main"]),
            estimate_request(today["main"]) + listed,
        ),
        ("  of which the agent list", agent_list_tokens(AGENTS), None),
        ("  and AgentSpawn's schema, offered with agent files", spawn_tokens(), None),
        ("sub-agent's request, plain AgentSpawn (today)", estimate_request(today["kid"]), None),
        (
            "sub-agent's request, agent file naming its tools",
            estimate_request(with_files["kid"]),
            estimate_request(today["kid"]) + listed,
        ),
        (
            "sub-agent's request, agent file with all tools",
            estimate_request(all_tools["kid"]),
            estimate_request(today["kid"]) + listed,
        ),
    ]
    print("request tokens (sagent's estimate: 4 characters a token)")
    for name, value, target in rows:
        if target is None:
            print(f"  {name:<52} {value:>7,}")
            continue
        ok = value <= target
        missed += not ok
        print(f"  {name:<52} {value:>7,}   target <= {target:,}  {'ok' if ok else 'MISSED'}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
