"""An agent's work, mirrored into Slack: its answer in a thread under its name, its progress as edits of
one message (not a flood), and its tool calls, messages from other agents and costs in its log channel.

`Mirror` is the agent's event sink: it turns events into posts queued for one task per agent, which makes
the Slack calls in order; progress lines that are overtaken before they are sent are dropped, so a fast
agent edits its message a few times, not once per event.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from sagent.events import Event, MessageAdded, Result, ToolFinished, ToolStarted, TurnFinished
from sagent.slack.api import MAX_TEXT, SlackApi
from sagent.types import PeerMessage

if TYPE_CHECKING:
    from sagent.agent.agent import Agent

OpKind = Literal["progress", "answer", "log"]


@dataclass(frozen=True, slots=True)
class Target:
    """Where an agent answers: a channel and the thread there."""

    channel: str
    thread_ts: str


@dataclass(frozen=True, slots=True)
class _Op:
    kind: OpKind
    text: str


class Mirror:
    """The Slack side of one agent; `owned(channel, ts)` is called for each message it posts."""

    def __init__(self, name: str, api: SlackApi, log_channel: str | None, owned: Callable[[str, str], None]) -> None:
        self.name = name
        self.api = api
        self.log_channel = log_channel
        self.target: Target | None = None
        self._owned = owned
        self._ops: deque[_Op | None] = deque()
        self._wake = asyncio.Event()
        self._status: str | None = None  # the ts of this run's progress message, once posted
        self._task = asyncio.create_task(self._post_all(), name=f"sagent slack mirror {name}")

    def answer_to(self, target: Target) -> None:
        """Answer the next input in `target` (a new progress message there)."""
        if target != self.target:
            self.target = target
            self._put(_Op("progress", ""))  # marks the start of a new reply

    def on_event(self, agent: Agent, event: Event) -> None:
        """Take one of the agent's events (the sink protocol)."""
        if isinstance(event, ToolStarted):
            call = event.call
            self._put(_Op("progress", f"_{self.name} is running {call.name}…_"))
            self._log(f"🔧 `{call.name}` {_short(json.dumps(call.arguments, ensure_ascii=False), 600)}")
        elif isinstance(event, ToolFinished):
            result = event.result
            mark = "✗" if result.is_error else "✓"
            self._log(f"{mark} `{result.name}` {event.duration_ms:.0f} ms: {_short(result.text, 300)}")
        elif isinstance(event, MessageAdded) and isinstance(event.message, PeerMessage):
            self._log(f"✉️ from {event.message.sender}: {_short(event.message.text, 1500)}")
        elif isinstance(event, TurnFinished):
            self._log(f"💲 {event.cost.total:.4f} this response, {event.total_cost_usd:.4f} in all")
            if event.message.tool_calls:
                self._put(_Op("progress", f"_{self.name} is working…_"))
        elif isinstance(event, Result):
            text = event.text if not event.is_error else f"⚠️ stopped ({event.subtype}): {event.text}"
            self._put(_Op("answer", text or "(no answer)"))

    def starting(self) -> None:
        """Input arrived: show at once that the agent is on it."""
        self._put(_Op("progress", f"_{self.name} is working…_"))

    def _put(self, op: _Op | None) -> None:
        self._ops.append(op)
        self._wake.set()

    def _log(self, text: str) -> None:
        if self.log_channel is not None:
            self._put(_Op("log", text))

    async def aclose(self) -> None:
        """Post what is queued, then stop."""
        self._put(None)
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    async def _post_all(self) -> None:
        while True:
            if not self._ops:
                self._wake.clear()
                await self._wake.wait()
                continue
            op = self._ops.popleft()
            if op is None:
                return
            if op.kind == "progress" and self._overtaken():
                continue
            try:
                await self._post(op)
            except Exception as error:  # a post that fails must not stop the next ones
                import sys

                sys.stderr.write(f"sagent-slack: posting for {self.name} failed: {error}\n")

    def _overtaken(self) -> bool:
        """True when a later progress line or the answer is already queued (this one would be edited
        away before anyone read it)."""
        return any(o is not None and o.kind in ("progress", "answer") for o in self._ops)

    async def _post(self, op: _Op) -> None:
        if op.kind == "log":
            if self.log_channel is not None:
                await self.api.post(self.log_channel, op.text, username=f"{self.name} log")
            return
        target = self.target
        if target is None:  # woken by another agent before anyone wrote to it: its answer goes to its log
            if op.kind == "answer" and self.log_channel is not None:
                await self.api.post(self.log_channel, f"💬 {op.text}", username=self.name, agent=self.name)
            return
        if op.kind == "progress" and not op.text:
            self._status = None
            return
        if op.kind == "progress":
            if self._status is None:
                self._status = await self._new(target, op.text)
            else:
                await self.api.update(target.channel, self._status, op.text)
            return
        chunks = [op.text[i : i + MAX_TEXT] for i in range(0, len(op.text), MAX_TEXT)] or [op.text]
        if self._status is not None:
            await self.api.update(target.channel, self._status, chunks[0])
            chunks = chunks[1:]
        for chunk in chunks:
            await self._new(target, chunk)
        self._status = None

    async def _new(self, target: Target, text: str) -> str | None:
        ts = await self.api.post(target.channel, text, thread_ts=target.thread_ts, username=self.name, agent=self.name)
        if ts is not None:
            self._owned(target.channel, ts)
        return ts


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
