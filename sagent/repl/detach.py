"""`/bg LABEL`: move one running tool call to the background by name (the label of the sub-agent it
spawned, its tool, or its id) while the others keep the round waiting; `/bg` alone (or Ctrl+B) moves all."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sagent.agent.calls import is_named

if TYPE_CHECKING:
    from sagent.repl.host import ReplHost


def check_running(repl: ReplHost, name: str) -> str:
    """Ask the agent to move the running calls `name` picks to the background; the line the user reads.
    ValueError naming what runs when `name` picks none."""
    asking = repl.renderer.asking  # a call whose question waits has not started: nothing to move yet
    running = [r.call for r in repl.renderer.running.values() if r.call.id not in asking]
    chosen = [call for call in running if is_named(call, name)]
    if not chosen:
        names = sorted({str(c.arguments.get("label") or c.name) for c in running}) or ["nothing"]
        raise ValueError(f"no running tool call is called {name!r}; running: {', '.join(names)}")
    repl.agent.background(name)
    what = ", ".join(f"{c.name}({c.arguments['label']})" if "label" in c.arguments else c.name for c in chosen)
    return f"moving {what} to the background; the other calls keep running; /jobs lists it"
