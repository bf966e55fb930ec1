"""The names a fleet uses on the NATS server, in one place: every subject of fleet F starts `sagent.F.`,
so an agent hears only its own fleet (and server permissions can be granted per fleet)."""

from __future__ import annotations

import re

from sagent.agent.fleet import FleetError

_WORD = re.compile(r"[A-Za-z0-9_-]{1,64}")


def check_fleet(name: str) -> str:
    """`name` when it can name a fleet (letters, digits, `_`, `-`), else FleetError."""
    if not _WORD.fullmatch(name):
        raise FleetError(f"a fleet name is letters, digits, '_' or '-' (at most 64), got {name!r}")
    return name


def check_label(label: str) -> str:
    """`label` when an agent across processes can have it (a NATS subject token), else FleetError."""
    if not _WORD.fullmatch(label):
        raise FleetError(f"an agent's label on a NATS fleet is letters, digits, '_' or '-', got {label!r}")
    return label


def agent_subject(fleet: str, label: str, leaf: str) -> str:
    """`sagent.<fleet>.agent.<label>.<leaf>`: inbox, receipt, events, spawn."""
    return f"sagent.{fleet}.agent.{label}.{leaf}"


def inbox_stream(fleet: str) -> str:
    return f"sagent_{fleet}_inbox"


def inbox_subjects(fleet: str) -> str:
    return f"sagent.{fleet}.agent.*.inbox"


def inbox_consumer(label: str) -> str:
    return f"inbox_{label}"


def members_bucket(fleet: str) -> str:
    """The labels the fleet knows (an agent that is down keeps its place, and its messages wait)."""
    return f"sagent_{fleet}_members"


def live_bucket(fleet: str) -> str:
    """The agents running now: each entry is a heartbeat and expires after the heartbeat timeout."""
    return f"sagent_{fleet}_live"
