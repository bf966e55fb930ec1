"""The agent: `from sagent.agent import Agent`.

    from sagent.agent import Agent

    agent = Agent(model, tools=[...])
    reply = await agent.run("what does this repository do?")   # or: async for event in agent.run(...)
    print(reply.content)

Names load on first use, so importing a submodule (or `sagent` itself) does not load the whole loop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sagent.lib.lazy import lazy_exports

_EXPORTS = {
    "Agent": "sagent.agent.agent",
    "AgentError": "sagent.agent.handle",
    "Reply": "sagent.agent.handle",
    "RunHandle": "sagent.agent.handle",
}

__all__ = ["Agent", "AgentError", "Reply", "RunHandle"]  # the keys of _EXPORTS, spelled out for linters

if TYPE_CHECKING:  # for type checkers and editors; at run time names load on first use
    from sagent.agent.agent import Agent
    from sagent.agent.handle import AgentError, Reply, RunHandle


_load = lazy_exports(__name__, _EXPORTS)


def __getattr__(name: str) -> Any:
    return _load(name)
