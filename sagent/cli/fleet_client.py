"""A headless run in a fleet across processes: `sagent -p TASK --fleet NAME [--nats URL] [--label LABEL]`.

The run's agent joins the fleet on the NATS server while it runs: the fleet's served agents (and every
other agent of the fleet) reach it by its label with AgentSend, it reaches them, lists them with
AgentSelf, and may run sub-agents on the fleet's serve processes (AgentSpawn `on`). A label the command
line did not name (`cli-PID`) leaves the fleet at the end; a label it named keeps its place, so what is
sent to it after the run waits in its inbox for the next run under that label. The server's credentials
come from the environment, as for `sagent fleet` (SAGENT_NATS_TOKEN, SAGENT_NATS_PASSWORD).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Awaitable, Callable
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


async def run_in_fleet(
    args: argparse.Namespace,
    build: Callable[[NatsBus, str], Agent],
    work: Callable[[Agent], Awaitable[int]],
) -> int:
    """Connect to the fleet, build the agent on it under its label (`build`), run `work` with it, and leave
    the fleet (an unnamed label) and the server at the end. A fleet error is one line and exit 1 (2 for
    a bad name or a label taken)."""
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
            agent = build(bus, label)
        except FleetError as error:
            sys.stderr.write(f"sagent: {error}\n")
            return EXIT_USAGE
        return await work(agent)
    finally:
        if args.label is None:
            with contextlib.suppress(FleetError):
                bus.forget(label)
        bus.close()
