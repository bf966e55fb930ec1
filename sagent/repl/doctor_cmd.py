"""`/doctor`: `sagent doctor`'s checks from inside the REPL, run beside it (they start a few programs to ask
their versions), each problem with how to fix it."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from sagent.repl.commands import command

if TYPE_CHECKING:
    from sagent.repl.host import ReplHost

COLOURS = {"ok": "green", "warn": "yellow", "fail": "red", "info": "dim"}


@command("doctor", "check the install, keys, subscription CLIs, sandbox, ripgrep, NATS, local model")
def _doctor(repl: ReplHost, arg: str) -> list[str]:
    repl.background(report(repl))
    return [repl.renderer.c("dim", "checking the install…")]


async def report(repl: ReplHost) -> None:
    """Run the checks in a thread (the REPL stays responsive) and print them."""
    from sagent.cli.doctor import lines_of, run_checks

    checks = await asyncio.to_thread(run_checks, repl.agent.context.cwd)
    repl.commit(lines_of(checks, lambda status, mark: repl.renderer.c(COLOURS[status], mark)))
    repl.refresh()
