"""Bounded handoffs: what an agent hands another may carry the last N capsules of its own handoff history
(the tasks, answers and messages it sent and received, oldest first) ahead of the text, instead of the
whole history, with the tokens that saves recorded in the capsule.

    text, report = bounded(sender_log, 4, "review b.py", receiver="b")
    # text:   "[Earlier handoffs: the last 4 of 9, oldest first]\n(1) spawn main → a: check a.py\n…
    #          [Your task]\nreview b.py"
    # report: {"capsules": 4, "carried": 4, "of": 9, "tokens": 61, "tokens_all": 170, "saved": 109}

The history of each session log is kept as its capsules are written (`remember`, called by
`sagent.evidence.capsules.write`), with the bare text of each handoff (never a carried block, so blocks do
not nest). Handoffs the receiver was a party to are not carried to it: it has them already. `tokens` is
the estimate of the block carried, `tokens_all` of the block carrying every earlier handoff, `saved` the
difference. The history lives in memory: a session continued in a new process starts it afresh.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sagent.agent.tokens import estimate_text

if TYPE_CHECKING:
    from sagent.agent.session import SessionLog

DEFAULT_CAPSULES = 4
"""The number of capsules a bounded handoff carries when asked for without a number (the seed's)."""


@dataclass(frozen=True, slots=True)
class Handoff:
    """One capsule of a log's history, with the text it sealed."""

    id: str
    type: str
    sender: str
    receiver: str
    text: str

    def line(self, number: int) -> str:
        return f"({number}) {self.type} {self.sender} → {self.receiver}: {self.text}"


TASK = "[Your task]"
_history: weakref.WeakKeyDictionary[SessionLog, list[Handoff]] = weakref.WeakKeyDictionary()


def remember(log: SessionLog, capsule_id: str, body: Mapping[str, Any], text: str) -> None:
    """Add a capsule written to `log` (sent or received) with its text to the log's history."""
    sender, receiver = body.get("sender") or {}, body.get("receiver") or {}
    handoff = Handoff(capsule_id, str(body.get("type")), str(sender.get("label")), str(receiver.get("label")), text)
    seen = _history.setdefault(log, [])
    if not any(h.id == capsule_id for h in seen[-4:]):  # a log holding both ends of one capsule keeps it once
        seen.append(handoff)


def history(log: SessionLog) -> list[Handoff]:
    """The handoffs `log`'s agent sent and received, oldest first."""
    return list(_history.get(log, ()))


def block(handoffs: list[Handoff], total: int, task: str) -> str:
    """`task` with `handoffs` (of `total` earlier ones) ahead of it."""
    if not handoffs:
        return task
    head = f"[Earlier handoffs: the last {len(handoffs)} of {total}, oldest first]"
    lines = [h.line(i) for i, h in enumerate(handoffs, 1)]
    return "\n".join([head, *lines, TASK, task])


def task_of(text: str, body: Mapping[str, Any]) -> str:
    """The task alone of a handoff's `text`, which carries earlier handoffs when its capsule `body` says so."""
    if not (body.get("context") or {}).get("carried"):
        return text
    return text.split(f"\n{TASK}\n", 1)[-1]


def bounded(log: SessionLog, capsules: int, task: str, *, receiver: str) -> tuple[str, dict[str, int] | None]:
    """`task` as handed to `receiver` carrying the last `capsules` handoffs of `log`'s history that
    `receiver` was no party to, and the report of what that saved against carrying them all (None when
    `capsules` is 0: the task goes alone, as it always did)."""
    if capsules <= 0:
        return task, None
    earlier = [h for h in history(log) if receiver not in (h.sender, h.receiver)]
    carried = earlier[-capsules:]
    text = block(carried, len(earlier), task)
    tokens = estimate_text(text) - estimate_text(task) if carried else 0
    every = estimate_text(block(earlier, len(earlier), task)) - estimate_text(task) if earlier else 0
    report = {
        "capsules": capsules,
        "carried": len(carried),
        "of": len(earlier),
        "tokens": tokens,
        "tokens_all": every,
        "saved": every - tokens,
    }
    return text, report
