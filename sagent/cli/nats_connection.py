"""The connection to a fleet's NATS server as the command line gives it (`--nats`, `--fleet`, credentials,
timeouts; the environment's SAGENT_NATS_URL, SAGENT_FLEET, SAGENT_NATS_TOKEN, SAGENT_NATS_PASSWORD), for
`sagent serve`, `sagent fleet` and a `-p` run in a fleet."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sagent.fleet_nats.bus import NatsAuth, NatsBus


def connection_parser(prog: str, usage: str) -> argparse.ArgumentParser:
    """A parser of the connection flags, each defaulting to its environment variable where it has one."""
    p = argparse.ArgumentParser(prog=prog, usage=usage, add_help=False)
    p.add_argument("-h", "--help", action="store_true")
    p.add_argument("--nats", default=os.environ.get("SAGENT_NATS_URL", "nats://127.0.0.1:4222"))
    p.add_argument("--fleet", default=os.environ.get("SAGENT_FLEET", "default"))
    p.add_argument("--nats-token", default=os.environ.get("SAGENT_NATS_TOKEN"))
    p.add_argument("--nats-user")
    p.add_argument("--nats-password", default=os.environ.get("SAGENT_NATS_PASSWORD"))
    p.add_argument("--nats-creds")
    p.add_argument("--nats-nkey")
    p.add_argument("--tls-ca")
    p.add_argument("--tls-cert")
    p.add_argument("--tls-key")
    p.add_argument("--connect-timeout", type=float, default=5.0)
    p.add_argument("--heartbeat-timeout", type=float, default=10.0)
    return p


def auth_of(args: argparse.Namespace) -> NatsAuth:
    """The server's credentials the parsed connection flags give."""
    from sagent.fleet_nats.bus import NatsAuth

    return NatsAuth(
        token=args.nats_token,
        user=args.nats_user,
        password=args.nats_password,
        creds=args.nats_creds,
        nkey_seed=args.nats_nkey,
        tls_ca=args.tls_ca,
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
    )


def connect(args: argparse.Namespace) -> NatsBus:
    """The fleet's bus on the server the parsed connection flags name; FleetError when it cannot be reached."""
    from sagent.fleet_nats.bus import NatsBus

    return NatsBus(
        args.nats,
        fleet=args.fleet,
        auth=auth_of(args),
        connect_timeout=args.connect_timeout,
        heartbeat_timeout=args.heartbeat_timeout,
    )
