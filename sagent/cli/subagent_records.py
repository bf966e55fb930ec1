"""Sub-agents' records in `--output-format stream-json`: each sub-agent's assistant turns and tool results
(and its deltas, with `--include-partial-messages`) as records whose `parent_tool_use_id` is the id of the
AgentSpawn call that started it, as Claude Code writes them, so a consumer sees a child's progress instead
of silence until its parent's tool result. A hook does it: sub-agents run their parent's hooks."""

from __future__ import annotations

import json
from typing import IO, TYPE_CHECKING

from sagent.agent.hooks import ALLOW, Hook, ToolDecision
from sagent.cli.records import event_record

if TYPE_CHECKING:
    from sagent.agent.agent import Agent
    from sagent.events import Event
    from sagent.types import ToolCall

SPAWN = "AgentSpawn"


class SubAgentRecords(Hook):
    """Writes the records of every agent below the root to `stdout`, one JSON line each."""

    def __init__(self, stdout: IO[str], *, partial: bool) -> None:
        self.stdout = stdout
        self.partial = partial
        self._spawns: dict[int, list[ToolCall]] = {}  # by parent (id of the agent): its AgentSpawn calls
        self._call_of: dict[int, str] = {}  # by sub-agent: the id of the call that started it
        self._remote_call_of: dict[tuple[int, str], str] = {}  # by parent and label, for sub-agents elsewhere

    async def before_tool(self, agent: Agent, call: ToolCall) -> ToolDecision:
        if call.name == SPAWN:
            self._spawns.setdefault(id(agent), []).append(call)
        return ALLOW

    def on_event(self, agent: Agent, event: Event) -> None:
        if agent.parent is None:
            return
        call_id = self._call_of.get(id(agent))
        if call_id is None:
            call_id = self._call_of[id(agent)] = self._claim(agent.parent, agent.label)
        self._write(event, agent.session_id, call_id)

    def on_remote_event(self, parent: Agent, label: str, session_id: str, event: Event) -> None:
        """A sub-agent on another process (AgentSpawn `on`): its records, as a local sub-agent's."""
        key = (id(parent), label)
        call_id = self._remote_call_of.get(key)
        if call_id is None:
            call_id = self._remote_call_of[key] = self._claim(parent, label)
        self._write(event, session_id, call_id)

    def _write(self, event: Event, session_id: str, call_id: str) -> None:
        record = event_record(event, session_id, partial=self.partial)
        if record is None or "parent_tool_use_id" not in record:
            return  # the child's init, retries and results: its parent's tool result tells how it ended
        record["parent_tool_use_id"] = call_id
        self.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")
        self.stdout.flush()

    def _claim(self, parent: Agent, label: str) -> str:
        """The AgentSpawn call of `parent` that started its sub-agent `label`: the one naming that label,
        else the first unclaimed one without a label (calls start their children in order)."""
        calls = self._spawns.get(id(parent), [])
        chosen = next((c for c in calls if c.arguments.get("label") == label), None)
        chosen = chosen or next((c for c in calls if not c.arguments.get("label")), None)
        if chosen is None:
            return ""
        calls.remove(chosen)
        return chosen.id
