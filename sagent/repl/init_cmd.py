"""`/init`: the agent looks at the repository with its tools and writes AGENTS.md, the project memory sagent
(and other coding agents) read at the start of every session. A memory file already there is improved, not
replaced: the prompt tells the model to read it first and keep what is still true."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sagent.agent.memory_init import WRITING_TOOLS, init_prompt, init_target
from sagent.repl.commands import CommandError, command

if TYPE_CHECKING:
    from sagent.repl.host import ReplHost


@command("init", "write AGENTS.md from a look at the repository (improves one already there)")
def _init(repl: ReplHost, arg: str) -> list[str]:
    if arg:
        raise CommandError("usage: /init (takes no arguments)")
    if repl.busy:
        raise CommandError("the agent is working; press Esc first, or wait")
    tools = list(repl.agent.tools)
    if not any(name in tools for name in WRITING_TOOLS):
        raise CommandError(
            f"/init needs the Write or Edit tool, and this agent has {', '.join(tools) or 'none'}; "
            "start sagent with --tools naming them (--tools Read,Glob,Grep,List,Write,Edit)"
        )
    cwd = repl.agent.context.cwd
    target = init_target(cwd)
    how = f"improving {target}, keeping what holds" if target.is_file() else f"writing {target}"
    repl.submit(init_prompt(target, cwd))
    return [repl.renderer.c("dim", f"/init: {how} from a look at the repository; it is read at each session's start")]
