"""The sandbox as the surfaces show it: /permissions in the REPL and the stream-json `init` record."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sagent.sandbox.policy import SandboxPolicy, expand
from sagent.sandbox.spawn import sandbox_state


def sandbox_record(policy: SandboxPolicy, roots: tuple[Path, ...]) -> dict[str, Any]:
    """The sandbox as the stream-json `init` record shows it."""
    reason = sandbox_state(policy)
    record: dict[str, Any] = {"mode": policy.mode, "active": policy.confines and reason is None}
    if reason is not None:
        record["unavailable"] = reason
    if policy.confines:
        writable = [str(r) for r in roots] + ["/tmp"] if policy.mode == "workspace-write" else []
        writable += [str(expand(r)) for r in policy.writable_roots] if policy.mode == "workspace-write" else []
        record.update(
            network=policy.network and not policy.allowed_domains,
            allowedDomains=list(policy.allowed_domains),
            writableRoots=writable,
            denyRead=[str(expand(p)) for p in policy.deny_read],
        )
    return record


def sandbox_lines(policy: SandboxPolicy, roots: tuple[Path, ...]) -> list[str]:
    """The sandbox for /permissions: its mode, what is writable, the network, whether it runs here."""
    lines = policy.describe(roots)
    reason = sandbox_state(policy)
    if reason is not None:
        lines[0] += f" — NOT ACTIVE: {reason}; commands run without it"
    return lines
