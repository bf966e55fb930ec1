"""Seeing what a tool line hides: Ctrl+O prints the recent calls' whole output and keeps later calls in
full until pressed again (as in Claude Code); `/output [N]` pages the N-th newest call's output through
`$PAGER` (`less -R` when unset), or prints it when no pager can run.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from typing import TYPE_CHECKING

from sagent.repl.commands import CommandError, command
from sagent.repl.tool_view import ToolOutput, output_lines

if TYPE_CHECKING:
    from prompt_toolkit.key_binding import KeyBindings

    from sagent.repl.host import ReplHost


def toggle(repl: ReplHost) -> None:
    """Ctrl+O: full tool output on (printing the recent calls' hidden lines now) or off."""
    outputs = repl.renderer.outputs
    shown = outputs.toggle()
    repl.settings.expand_tools = outputs.expanded
    r = repl.renderer
    if not outputs.expanded:
        repl.state.note = "tool output collapsed again (ctrl+o shows it in full)"
    elif shown:
        blocks = [r.c("dim", f"─ the whole output of the last {len(shown)} tool call{'s' if len(shown) > 1 else ''}")]
        blocks += ["\n".join([o.head, *output_lines(o)]) for o in shown]
        repl.commit(blocks)
        repl.state.note = "tool output in full (ctrl+o collapses; /output N pages one call)"
    else:
        repl.state.note = "tool output in full from now on (ctrl+o collapses)"
    repl.refresh()


def add_keys(keys: KeyBindings, repl: ReplHost) -> None:
    """Bind Ctrl+O."""

    @keys.add("c-o")
    def _expand(event: object) -> None:
        toggle(repl)


@command("output", "page the whole output of a recent tool call (1: the last)", "/output [N]")
def _output(repl: ReplHost, arg: str) -> list[str]:
    n = int(arg) if arg.isdigit() else 1 if not arg else 0
    output = repl.renderer.outputs.nth(n)
    if output is None:
        count = len(repl.renderer.outputs.recent)
        raise CommandError(f"no tool call {arg!r}: give 1 to {count}" if count else "no tool call has finished yet")
    pager = _pager()
    if pager is None or repl.app is None or not repl.app.is_running:
        return [output.head, *output_lines(output, limit=10**9)]
    repl.background(_page(repl, output, pager))
    return []


def _pager() -> list[str] | None:
    wanted = os.environ.get("PAGER", "").strip()
    command_line = shlex.split(wanted) if wanted else (["less", "-R"] if shutil.which("less") else [])
    if not command_line or shutil.which(command_line[0]) is None:
        return None
    return command_line


async def _page(repl: ReplHost, output: ToolOutput, pager: list[str]) -> None:
    from prompt_toolkit.application import run_in_terminal

    text = "\n".join([output.head, *output_lines(output, limit=10**9)]) + "\n"

    def show() -> None:
        try:
            subprocess.run(pager, input=text.encode(), check=False)
        except OSError as error:
            repl.commit([repl.renderer.c("yellow", f"/output: the pager {pager[0]} failed: {error}")])

    await run_in_terminal(show, in_executor=True)
