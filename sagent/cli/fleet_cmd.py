"""`sagent serve` and `sagent fleet`: agents hosted for good on a NATS server, and the commands that list,
message, watch and stop them from any terminal or machine that reaches the server."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sagent.cli.nats_connection import connect, connection_parser

if TYPE_CHECKING:
    from sagent.fleet_nats.bus import NatsBus

EXIT_USAGE = 2
EXIT_ERROR = 1

FLEET_USAGE = """\
usage: sagent fleet ls | send LABEL TEXT | attach LABEL | stop LABEL   [CONNECTION]

  ls             the agents running in the fleet: label, host, model, status, context size, cost
  send L TEXT    message the agent L as the user (it waits in L's inbox while L is down)
  attach L       stream L's events; each line typed is sent to L; Ctrl+D or Ctrl+C detaches (L keeps running)
  stop L         stop L and take it out of the fleet (says when it has stopped; one not running
                 now gets the stop when it comes back)

CONNECTION (also for `sagent serve`):
  --nats URL          the NATS server (default $SAGENT_NATS_URL, else nats://127.0.0.1:4222)
  --fleet NAME        the fleet (default $SAGENT_FLEET, else default)
  --nats-token T      a token ($SAGENT_NATS_TOKEN)     --nats-user U --nats-password P
  --nats-creds FILE   a creds file (JWT and nkey)      --nats-nkey FILE   an nkey seed file
  --tls-ca FILE       --tls-cert FILE --tls-key FILE   TLS to the server
  --connect-timeout S seconds to wait for the server (default 5)
  --heartbeat-timeout S  an agent silent this long drops out of `ls` (default 10; set when the fleet is made)
"""

SERVE_USAGE = """\
usage: sagent serve --label LABEL [--worker] [--nats URL] [--fleet NAME] [CONNECTION] [AGENT FLAGS]

Host the agent LABEL of the fleet until SIGTERM (or `sagent fleet stop LABEL`): it works on every message
sent to it (`sagent fleet send`, AgentSend from any agent of the fleet), with the same flags and settings
files as `sagent -p` (model, tools, budget, ...). Restarted, it continues its session and receives the
messages that arrived while it was down. Other agents may run one-shot sub-agents on it (AgentSpawn with
`on: LABEL`); with --worker, also those spawned `on: "any"` (the fleet's workers share them). Such a
sub-agent is held to the stricter of this process's permissions and its parent tree's, which travel with
the spawn (a spawn without them is refused); its questions go to its parent's approver, if any. See
`sagent fleet --help` for CONNECTION.
"""


def fleet_command(argv: list[str]) -> int:
    """`sagent fleet ...`: 0 done, 1 the server or the agent failed, 2 bad usage or an unknown label."""
    from sagent.agent.fleet import FleetError

    parser = connection_parser("sagent fleet", FLEET_USAGE)
    parser.add_argument("action", nargs="?", choices=("ls", "send", "attach", "stop"))
    parser.add_argument("label", nargs="?")
    parser.add_argument("text", nargs="*")
    try:
        args = parser.parse_args(argv)
    except SystemExit:
        return EXIT_USAGE
    if args.help or args.action is None:
        (sys.stdout if args.help else sys.stderr).write(FLEET_USAGE)
        return 0 if args.help else EXIT_USAGE
    if args.action != "ls" and not args.label:
        sys.stderr.write(f"sagent fleet {args.action}: name the agent's label\n")
        return EXIT_USAGE
    try:
        bus = connect(args)
    except FleetError as error:
        sys.stderr.write(f"sagent fleet: {error}\n")
        return EXIT_ERROR
    try:
        if args.action == "ls":
            return _list(bus)
        if args.action == "send":
            return _send(bus, args.label, " ".join(args.text))
        if args.action == "stop":
            return _stop(bus, args.label)
        return _attach(bus, args.label)
    except FleetError as error:
        sys.stderr.write(f"sagent fleet: {error}\n")
        return EXIT_USAGE
    finally:
        bus.close()


def _list(bus: NatsBus) -> int:
    from sagent.fleet_nats.discovery import HEADER

    agents = bus.agents()
    if not agents:
        print(f"no agent is running in the fleet {bus.fleet!r}")
        return 0
    print(HEADER)
    for info in agents:
        print(info.row())
    return 0


def _send(bus: NatsBus, label: str, text: str) -> int:
    from sagent.agent.fleet import Envelope

    if not text.strip():
        sys.stderr.write("sagent fleet send: the message is empty\n")
        return EXIT_USAGE
    print(bus.deliver(Envelope("user", label, text)).describe())
    return 0


STOP_WAIT = 30.0  # seconds `sagent fleet stop` waits to see a running agent go


def _stop(bus: NatsBus, label: str) -> int:
    """Stop `label`: a running agent is stopped now (said when it is gone); one that is not running gets the
    stop in its inbox, which ends it when it comes back."""
    import time

    from sagent.agent.fleet import Envelope

    was_running = bus.running(label)  # asked first: a stopping agent soon stops answering for its receipt
    bus.deliver(Envelope("user", label, control="stop"))
    if not was_running and not bus.running(label):
        print(f"{label} is not running now; the stop waits in its inbox and ends it when it comes back")
        return 0
    print(f"stopping {label}", flush=True)
    deadline = time.monotonic() + STOP_WAIT
    while time.monotonic() < deadline:
        if not bus.running(label) and label not in bus.labels():
            print(f"{label} has stopped and left the fleet")
            return 0
        time.sleep(0.1)
    print(f"{label} is still finishing its work; it stops at its next safe point")
    return 0


def _attach(bus: NatsBus, label: str) -> int:
    """Print the agent's events as they happen; send each line typed; detach at end of input or Ctrl+C."""
    from sagent.agent.fleet import Envelope, FleetError
    from sagent.fleet_nats import names

    if label not in bus.labels():
        raise FleetError(f"no agent is called {label!r} in the fleet {bus.fleet!r}")

    async def show(msg: Any) -> None:
        _render(json.loads(msg.data))

    async def subscribe() -> Any:
        return await bus.nc.subscribe(names.agent_subject(bus.fleet, label, "events"), cb=show)

    sub = bus.call(subscribe(), 10)
    sys.stderr.write(f"attached to {label} in the fleet {bus.fleet!r}; type to send, Ctrl+D to detach\n")
    sys.stderr.flush()
    try:
        for line in sys.stdin:
            if line.strip():
                sys.stderr.write(bus.deliver(Envelope("user", label, line.rstrip("\n"))).describe() + "\n")
    except KeyboardInterrupt:
        pass
    finally:
        bus.call(sub.unsubscribe(), 5)
    sys.stderr.write(f"detached from {label}; it keeps running\n")
    return 0


def _render(event: dict[str, Any]) -> None:
    kind = event.get("type")
    if kind == "text_delta":
        sys.stdout.write(str(event.get("text", "")))
    elif kind == "tool_started":
        call = event.get("call") or {}
        sys.stdout.write(f"\n[{call.get('name', 'tool')}]\n")
    elif kind == "message_added":
        message = event.get("message") or {}
        sender = message.get("sender", "user")
        text = message.get("text") or ""
        if isinstance(text, str) and text:
            sys.stdout.write(f"\n<{sender}> {text}\n")
    elif kind == "result":
        sys.stdout.write(f"\n[{event.get('subtype')}, ${float(event.get('total_cost_usd') or 0):.4f}]\n")
    sys.stdout.flush()


def serve_command(argv: list[str]) -> int:
    """`sagent serve`: 0 after a clean shutdown, 1 when the server or the agent failed, 2 bad usage."""
    from sagent.agent.fleet import FleetError
    from sagent.cli.flags import build_parser, checked, parse_with_settings

    connection = connection_parser("sagent serve", SERVE_USAGE)
    connection.add_argument("--label")
    connection.add_argument("--worker", action="store_true")
    known, rest = connection.parse_known_args(argv)
    if known.help:
        sys.stdout.write(SERVE_USAGE)
        return 0
    if not known.label:
        sys.stderr.write("sagent serve: give the agent's --label\n")
        return EXIT_USAGE
    args = parse_with_settings(build_parser(), rest)
    if args is None:
        return EXIT_USAGE
    problem = checked(args)
    if problem or args.prompt is not None:
        sys.stderr.write(f"sagent serve: error: {problem or 'a served agent takes its tasks as messages, not -p'}\n")
        return EXIT_USAGE
    from sagent.fleet_nats.names import check_fleet, check_label

    try:
        check_fleet(known.fleet)
        check_label(known.label)
    except FleetError as error:
        sys.stderr.write(f"sagent serve: {error}\n")
        return EXIT_USAGE
    try:
        bus = connect(known)
    except FleetError as error:  # the server cannot be reached or refused the credentials
        sys.stderr.write(f"sagent serve: {error}\n")
        return EXIT_ERROR
    try:
        return asyncio.run(_serve(args, known, bus))
    finally:
        bus.close()


async def _serve(args: argparse.Namespace, known: argparse.Namespace, bus: NatsBus) -> int:
    from sagent.agent.fleet import FleetError
    from sagent.agent.session import SessionError
    from sagent.cli.agent_setup import UsageError
    from sagent.cli.run import make_agent, model_and_tools, setup_failure
    from sagent.fleet_nats.serve import Served, remember_session, remembered_session
    from sagent.providers import prefetch
    from sagent.providers.base import ProviderError

    cwd = Path(args.cwd or ".").resolve()
    session_path = remembered_session(bus.fleet, known.label)
    try:
        model, tools = model_and_tools(args, session_path)
        prefetch.start(model.provider)  # the SDK's import overlaps the wait for the first message
        agent = make_agent(args, model, tools, cwd, session_path, label=known.label, bus=bus)
    except FleetError as error:
        sys.stderr.write(f"sagent serve: {error}\n")
        return EXIT_USAGE
    except (UsageError, ProviderError, SessionError) as error:
        return setup_failure(error)
    remember_session(bus.fleet, known.label, agent.session.path)
    resumed = "continuing its session" if session_path else "a new session"

    def ready() -> None:
        sys.stderr.write(
            f"sagent serve: {known.label} is serving in the fleet {bus.fleet!r} at {bus.url} ({resumed})\n"
        )
        sys.stderr.flush()

    served = Served(agent, bus, worker=known.worker)
    try:
        keep_place = await served.run(ready)
    except FleetError as error:  # the server went away before the agent could take spawn requests
        sys.stderr.write(f"sagent serve: {error}\n")
        return EXIT_ERROR
    finally:
        await agent.aclose()
    if not bus.connected:  # the server went away: say so in one line, and leave what it stored as it is
        sys.stderr.write(
            f"sagent serve: {known.label} shut down; the NATS server at {bus.url} cannot be reached now, so "
            "its place in the fleet stays as the server last stored it\n"
        )
        return EXIT_ERROR
    if not keep_place:
        try:
            bus.forget(known.label)
        except FleetError as error:
            sys.stderr.write(f"sagent serve: {known.label} was stopped but could not leave the fleet: {error}\n")
            return EXIT_ERROR
        sys.stderr.write(f"sagent serve: {known.label} was stopped and has left the fleet\n")
    else:
        sys.stderr.write(f"sagent serve: {known.label} shut down; messages to it wait for its restart\n")
    return 0
