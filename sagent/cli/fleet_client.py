"""A run in a fleet across processes: `sagent [-p TASK] --fleet NAME [--nats URL] [--label LABEL]`.

The run's agent (a headless run's, or the REPL's) joins the fleet on the NATS server while it runs: the
fleet's served agents (and every other agent of the fleet) reach it by its label with AgentSend, it
reaches them, lists them with AgentSelf, and may run sub-agents on the fleet's serve processes
(AgentSpawn `on`). A label the command line did not name (`cli-PID`) leaves the fleet at the end; a label
it named keeps its place, so what is sent to it after the run waits in its inbox for the next run under
that label. The REPL's /clear, /resume and /fork move the label to the new agent (`FleetSeat.rebuild`).
The server's credentials come from the environment, as for `sagent fleet` (SAGENT_NATS_TOKEN,
SAGENT_NATS_PASSWORD).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sagent.agent.agent import Agent
    from sagent.fleet_nats.bus import NatsBus

EXIT_ERROR = 1
EXIT_USAGE = 2


def connection_of(args: argparse.Namespace) -> argparse.Namespace:
    """The connection settings of `sagent fleet` (defaults and environment), with this run's fleet and URL."""
    from sagent.cli.nats_connection import connection_parser

    known, _ = connection_parser("sagent", "").parse_known_args([])
    known.fleet = args.fleet
    if args.nats:
        known.nats = args.nats
    return known


@dataclass(frozen=True, slots=True)
class FleetSeat:
    """The run's place in a fleet: the bus to the NATS server and the label its agent has there."""

    bus: NatsBus
    label: str

    def others(self, agent: Agent) -> list[str]:
        """One line per agent of the fleet running in other processes than `agent` and its sub-agents (label,
        model, status, host and process, spend), by their heartbeats; FleetError when the server cannot
        list them now."""
        return [
            f"{info.label:<16} {info.model:<30} {info.status:<8} {info.host}:{info.pid}  ${info.cost_usd:.4f}"
            for info in self.bus.agents()
            if info.label not in agent.fleet.agents
        ]

    def rebuild(self, old: Agent, build: Callable[[], Agent]) -> Agent:
        """A new agent under the same label (`build` makes it on this seat), for the REPL's /clear, /resume
        and /fork: the old agent gives the label up first, so the new one can take it; what is sent in
        between waits in the label's durable inbox. When the new agent cannot be built, the old one takes
        its label back and the error goes on."""
        from sagent.agent.fleet import FleetError

        old.fleet.leave(old)
        try:
            return build()
        except BaseException:
            if not old.closed:
                with contextlib.suppress(FleetError):
                    old.fleet.join(old)
            raise


async def run_in_fleet(
    args: argparse.Namespace,
    build: Callable[[FleetSeat], Agent],
    work: Callable[[Agent], Awaitable[int]],
) -> int:
    """Connect to the fleet, build the agent on it under its label (`build`), run `work` with it, and leave
    the fleet (an unnamed label) and the server at the end. A fleet error is one line and exit 1 (2 for
    a bad name or a label taken), before `work` starts."""
    from sagent.agent.fleet import FleetError
    from sagent.cli.nats_connection import connect
    from sagent.fleet_nats.names import check_fleet, check_label

    label = args.label or f"cli-{os.getpid()}"
    try:
        check_fleet(args.fleet)
        check_label(label)
    except FleetError as error:
        sys.stderr.write(f"sagent: {error}\n")
        return EXIT_USAGE
    try:
        bus = connect(connection_of(args))
    except FleetError as error:  # the server cannot be reached or refused the credentials
        sys.stderr.write(f"sagent: {error}\n")
        return EXIT_ERROR
    try:
        try:
            agent = build(FleetSeat(bus, label))
        except FleetError as error:
            sys.stderr.write(f"sagent: {error}\n")
            return EXIT_USAGE
        return await work(agent)
    finally:
        if args.label is None:
            with contextlib.suppress(FleetError):
                bus.forget(label)
        bus.close()
