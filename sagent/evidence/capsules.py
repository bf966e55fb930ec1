"""Sealed handoffs: every spawn, message and child result between agents, recorded in both agents' logs.

A capsule is what one agent handed another, named by its content:

    {"kind": "capsule", "role": "sent", "id": "<sha256 of the body's canonical JSON>",
     "capsule": {"v": 1, "type": "spawn", "sender": {"label": "main", "session": "2026…"},
                 "receiver": {"label": "a", "session": "2026…"}, "parents": ["<id>"],
                 "budget": {"max_tool_rounds": null, "max_depth": 3, "usd_left": null, "tools": [...]},
                 "prompt_sha256": "<sha256 of the text as sent>", "model": "anthropic/claude-…",
                 "sent_at": "…", "n": 4}}

`type` is `spawn` (the task a sub-agent starts on), `message` (AgentSend text) or `result` (a sub-agent's
answer, or its report on going idle). The sender writes it (`role: sent`) before the handoff happens, the
receiver (`role: received`) as it takes it; both records carry the same body, so the id matches across the
two files. `parents` are the capsules the sender had received last (what it was acting on), so the capsules
of a tree form a graph from the first task to the last answer. `model` is the receiver's model, the one the
text went to; `budget` is what a spawn granted (a result carries what the sub-agent spent instead).

A spawn or message may carry the last N capsules of the sender's history ahead of its text
(`sagent.evidence.handoffs`, `AgentSettings.handoff_capsules`, `SpawnRequest.capsules`); its body then has
`context`: `{"capsules": N, "carried": k, "of": total, "tokens": t, "tokens_all": T, "saved": T - t}`, and
`prompt_sha256` is of the text as sent, carried handoffs included.

`sagent.evidence.verify` checks the ids and the pairs. The prompt itself is in the logs as a message; the
capsule holds its hash, so a capsule says what was sent without copying it.
"""

from __future__ import annotations

import hashlib
import itertools
import weakref
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from sagent.evidence import handoffs
from sagent.lib.json import canonical_json

if TYPE_CHECKING:
    from sagent.agent.agent import Agent
    from sagent.agent.session import SessionLog

CAPSULE_KIND = "capsule"
VERSION = 1

HandoffType = Literal["spawn", "message", "result"]
Role = Literal["sent", "received"]

_counter = itertools.count(1)
# The capsule each log last received (what its agent acts on): the parents of the next it sends.
_last_received: weakref.WeakKeyDictionary[SessionLog, str] = weakref.WeakKeyDictionary()


def sha256_text(text: str) -> str:
    """The SHA-256 (hex) of `text` as UTF-8 (lone surrogates kept by escaping)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def capsule_id(body: Mapping[str, Any]) -> str:
    """A capsule's content id: the SHA-256 of its body's canonical JSON."""
    return hashlib.sha256(canonical_json(body)).hexdigest()


def capsule_record(body: Mapping[str, Any], role: Role) -> dict[str, Any]:
    """The log record of a capsule, as sender or receiver writes it."""
    return {"kind": CAPSULE_KIND, "role": role, "id": capsule_id(body), "capsule": dict(body)}


def build(
    kind: HandoffType,
    sender: Agent,
    receiver: Agent | None,
    receiver_label: str,
    text: str,
    *,
    budget: Mapping[str, Any] | None = None,
    extra_parents: tuple[str, ...] = (),
    context: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """The body of a capsule from `sender` to `receiver` (None when it runs elsewhere: its session and
    model are then unknown here) carrying `text`."""
    parents = [p for p in (_last_received.get(sender.session), *extra_parents) if p]
    body = {
        "v": VERSION,
        "type": kind,
        "sender": {"label": sender.label, "session": sender.session.id},
        "receiver": {"label": receiver_label, "session": receiver.session.id if receiver is not None else None},
        "parents": sorted(set(parents)),
        "budget": dict(budget) if budget is not None else None,
        "prompt_sha256": sha256_text(text),
        "model": f"{receiver.model.provider}/{receiver.model.name}" if receiver is not None else None,
        "sent_at": datetime.now(UTC).isoformat(),
        "n": next(_counter),
    }
    if context is not None:
        body["context"] = dict(context)
    return body


def write(log: SessionLog, body: Mapping[str, Any], role: Role, text: str | None = None) -> str:
    """Record the capsule in `log` (raises `SessionWriteError` like any record); its id. A received one
    becomes the parent of what this log's agent sends next; with its `text` (without carried handoffs) it
    joins the log's handoff history (`sagent.evidence.handoffs`)."""
    record = capsule_record(body, role)
    log.append(record)
    if role == "received":
        _last_received[log] = record["id"]
    if text is not None:
        handoffs.remember(log, str(record["id"]), body, text)
    return str(record["id"])


# ------------------------------------------------------------------------------ the three handoffs


def seal_spawn(
    parent: Agent, child: Agent, prompt: str, *, task: str | None = None, context: Mapping[str, int] | None = None
) -> str:
    """A spawn, in the parent's log and then the child's, before the child starts; the capsule id. `prompt`
    is the text as sent; `task` the task alone when `prompt` carries earlier handoffs (`context` says how
    many, and what that saved)."""
    limit = parent.cost.budgeted()
    budget = {
        "max_tool_rounds": child.settings.max_tool_rounds,
        "max_depth": child.max_depth,
        "usd_left": float(limit.budget - limit.spent) if limit is not None and limit.budget is not None else None,
        "tools": sorted(child.tools),
    }
    body = build("spawn", parent, child, child.label, prompt, budget=budget, context=context)
    write(parent.session, body, "sent", task if task is not None else prompt)
    return write(child.session, body, "received", task if task is not None else prompt)


def seal_message(sender: Agent, to: str, text: str) -> tuple[dict[str, Any], str]:
    """An AgentSend message, in the sender's log: the body, which travels with the message for the
    receiver to record on delivery (`receive`), and the text to send: `text`, with the last handoffs of the
    sender's history ahead of it when its `handoff_capsules` setting asks for them."""
    sent, context = handoffs.bounded(sender.session, sender.settings.handoff_capsules, text, receiver=to)
    body = build("message", sender, sender.fleet.agents.get(to), to, sent, context=context)
    write(sender.session, body, "sent", text)
    return body, sent


def receive(receiver: Agent, body: Mapping[str, Any], text: str | None = None) -> None:
    """Record a capsule that arrived with a message (its `text`, for the receiver's handoff history), in
    the receiver's log."""
    filled = dict(body)
    write(receiver.session, filled, "received", handoffs.task_of(text, body) if text is not None else None)


def seal_result(child: Agent, parent: Agent, text: str, spawned: str | None = None) -> dict[str, Any]:
    """A sub-agent's answer (or idle report), in the child's log; the body, for the parent to `receive`.
    `spawned` (the spawn capsule) is a parent of it too."""
    spent = {"usd": child.cost.total_usd, "responses": sum(s.responses for s in child.cost.by_model.values())}
    body = build("result", child, parent, parent.label, text, budget=spent, extra_parents=(spawned,) if spawned else ())
    write(child.session, body, "sent", text)
    return body


# ----------------------------------------------------------------- a sub-agent on another process


def seal_spawn_elsewhere(
    parent: Agent,
    label: str,
    prompt: str,
    budget: Mapping[str, Any],
    *,
    task: str | None = None,
    context: Mapping[str, int] | None = None,
) -> str:
    """A spawn on another process (AgentSpawn with `on`), in the parent's log; the capsule id. The
    child's log is that process's: the capsule's receiver has no session here. `task` and `context` as
    for `seal_spawn`."""
    body = build("spawn", parent, None, label, prompt, budget=budget, context=context)
    return write(parent.session, body, "sent", task if task is not None else prompt)


def receive_result_elsewhere(parent: Agent, label: str, text: str, spent: Mapping[str, Any], spawned: str) -> str:
    """The answer of a sub-agent on another process, in the parent's log as received; its parent is the
    spawn capsule `spawned`."""
    body = build("result", parent, parent, parent.label, text, budget=spent)
    body.update(sender={"label": label, "session": None}, parents=[spawned])
    return write(parent.session, body, "received", text)
