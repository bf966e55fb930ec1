"""`system`/`session_state_changed` records: what the SDK's program waits on before it closes sagent's input.

The SDKs ask for them (`CLAUDE_CODE_SDK_READS_SESSION_STATE=1`) when their program serves control requests
(a `can_use_tool` callback, hooks, in-process MCP tools): a result ends one turn, not necessarily the run,
so the SDK keeps stdin open until the state reads `idle`. The states:

- `running`: a turn is under way (written when the agent takes up a message);
- `requires_action`: sagent waits for the SDK's answer to a request of its own (a permission question, a
  hook callback, an MCP call), so the SDK must keep stdin open;
- `idle`: the turn's result is written, no message waits and no call runs in the background: nothing more
  is owed until the next message.

Asked for only by the SDK (`CLAUDE_CODE_SDK_READS_SESSION_STATE`), a record carries `sdk_host_only: true`
and the SDK does not show it to the program; `CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS=1` shows them.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from sagent.events import Result

if TYPE_CHECKING:
    from sagent.agent.agent import Agent
    from sagent.events import Event

State = Literal["idle", "running", "requires_action"]

READS_ENV = "CLAUDE_CODE_SDK_READS_SESSION_STATE"
EMITS_ENV = "CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS"


def _on(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


class SessionState:
    """A sink on the main agent that writes each change of the session's state (see the module)."""

    def __init__(self, write: Callable[[dict[str, Any]], None], agent: Agent, *, host_only: bool) -> None:
        self._write = write
        self._agent = agent
        self._host_only = host_only
        self._state: State = "idle"
        self._asking = 0
        self._turn_after_result = False

    @classmethod
    def wanted(cls, environ: Mapping[str, str] | None = None) -> bool | None:
        """None when nobody asked for the records; else whether they are for the SDK alone."""
        env = os.environ if environ is None else environ
        if _on(env.get(EMITS_ENV)):
            return False
        if _on(env.get(READS_ENV)):
            return True
        return None

    @property
    def state(self) -> State:
        return self._state

    def on_event(self, agent: Agent, event: Event) -> None:
        if isinstance(event, Result):
            # After the result's own record (the output's sink writes it once this one returns).
            self._turn_after_result = False
            asyncio.get_running_loop().call_soon(self._settled)
            return
        self._turn_after_result = True
        if agent.running and self._state == "idle":
            self._set("running")

    def asking(self, delta: int) -> None:
        """A request of sagent to the SDK went out (+1) or was answered (-1)."""
        self._asking += delta
        if self._asking > 0 and self._state != "requires_action":
            self._set("requires_action")
        elif self._asking == 0 and self._state == "requires_action":
            self._set("running" if self._agent.running else "idle")

    def message_arrived(self) -> None:
        """A user message arrived: a turn is owed (the agent takes it up now or at its next safe point)."""
        if self._state == "idle":
            self._set("running")

    def _settled(self) -> None:
        if self._turn_after_result:
            return  # a new turn is under way: its own result settles the state
        if self._agent.running:  # the run is winding down after its result: look again shortly
            asyncio.get_running_loop().call_later(0.05, self._settled)
        elif self._agent.jobs.running():  # a call still runs in the background: its result may wake the agent
            asyncio.get_running_loop().call_later(0.5, self._settled)
        elif self._asking == 0 and not self._agent.has_pending_input and self._state != "idle":
            self._set("idle")

    def _set(self, state: State) -> None:
        self._state = state
        record: dict[str, Any] = {
            "type": "system",
            "subtype": "session_state_changed",
            "state": state,
            "session_id": self._agent.session_id,
            "uuid": str(uuid.uuid4()),
        }
        if self._host_only:
            record["sdk_host_only"] = True
        self._write(record)
