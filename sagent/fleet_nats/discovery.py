"""Who is in the fleet now: each running agent puts a heartbeat (label, host, model, status, context size,
cost) in the fleet's `live` bucket every few seconds; the bucket forgets an entry the heartbeat timeout
after it was last written, so an agent that vanished (killed, its machine gone) drops out by itself."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nats.js.kv import KeyValue

    from sagent.agent.agent import Agent


@dataclass(frozen=True, slots=True)
class AgentInfo:
    """One running agent of the fleet, as its last heartbeat told."""

    label: str
    host: str
    pid: int
    model: str
    status: str  # working | idle
    context_tokens: int
    cost_usd: float
    seen: float  # when the heartbeat was written (seconds since the epoch)

    def row(self) -> str:
        """One line of `sagent fleet ls`."""
        return (
            f"{self.label:<16} {self.host + ':' + str(self.pid):<24} {self.model:<32} {self.status:<8} "
            f"{self.context_tokens:>9,} ${self.cost_usd:.4f}"
        )


HEADER = f"{'label':<16} {'host':<24} {'model':<32} {'status':<8} {'context':>9} cost"


def heartbeat(agent: Agent | None, label: str, host: str) -> bytes:
    """The heartbeat of `label` (read on the agent's own loop, where its state is consistent)."""
    fields: dict[str, Any] = {"label": label, "host": host, "pid": os.getpid(), "seen": time.time()}
    if agent is not None:
        fields |= {
            "model": f"{agent.model.provider}/{agent.model.name}",
            "status": "working" if agent.running else "idle",
            "context_tokens": agent.context_tokens,
            "cost_usd": agent.cost.total_usd,
        }
    return json.dumps(fields).encode()


def parse(data: bytes) -> AgentInfo | None:
    """An AgentInfo from a heartbeat, None when it is not one."""
    try:
        f = json.loads(data)
        return AgentInfo(
            label=str(f["label"]),
            host=str(f.get("host", "?")),
            pid=int(f.get("pid", 0)),
            model=str(f.get("model", "-")),
            status=str(f.get("status", "idle")),
            context_tokens=int(f.get("context_tokens", 0)),
            cost_usd=float(f.get("cost_usd", 0.0)),
            seen=float(f.get("seen", 0.0)),
        )
    except (ValueError, TypeError, KeyError):
        return None


async def read_agents(live: KeyValue) -> list[AgentInfo]:
    """The agents whose heartbeat has not expired, by label."""
    from nats.js.errors import KeyDeletedError, KeyNotFoundError, NoKeysError

    try:
        keys = await live.keys()
    except NoKeysError:
        return []
    found = []
    for key in sorted(keys):
        try:
            entry = await live.get(key)
        except (KeyNotFoundError, KeyDeletedError):
            continue
        info = parse(entry.value or b"")
        if info is not None:
            found.append(info)
    return found
