"""Reopening a session log as an agent (`Agent.resume`): its history, what its compactions carried, its
task list, and an answer for each tool call the dead run left unfinished."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from sagent.agent.rounds import record_result
from sagent.agent.session import SessionLog
from sagent.agent.storage import SessionStorage
from sagent.events import ToolFinished
from sagent.tools.base import recover_note
from sagent.types import AssistantMessage, ToolResult

if TYPE_CHECKING:  # annotations only: the agent calls this, never the other way round
    from sagent.agent.agent import Agent
    from sagent.agent.fleet import Fleet
    from sagent.agent.settings import AgentSettings
    from sagent.providers.base import Model

A = TypeVar("A", bound="Agent")


def resume_agent(
    cls: type[A],
    path: Path | SessionStorage,
    model: Model,
    chosen: AgentSettings,
    before_compaction: bool,
    fleet: Fleet | None,
) -> A:
    """An agent of class `cls` continuing the log at `path`, or the one a storage keeps (see `Agent.resume`)."""
    if isinstance(path, SessionStorage):
        if before_compaction:
            raise ValueError("before_compaction forks a log file; a storage's log is continued as it is")
        log, state = SessionLog.open_storage(path)
    else:
        log, state = SessionLog.open(SessionLog.fork_before_compaction(path) if before_compaction else path)
    if chosen.cwd is None and state.header.get("cwd"):
        chosen = replace(chosen, cwd=Path(state.header["cwd"]))
    agent = cls(model, chosen, session=log, history=state.history, fleet=fleet)
    agent.window.thread, agent.task_list = state.thread, state.task_list
    calls = {c.id: c for m in state.history if isinstance(m, AssistantMessage) for c in m.tool_calls}
    for result in state.dangling:
        # The tool may clean up what the dead run left (processes) and say so in the result.
        note = recover_note(agent.tools.get(result.name), calls[result.call_id], agent.context)
        if note:
            result = ToolResult.of(calls[result.call_id], f"{result.text} {note}", is_error=True)
        record_result(agent, ToolFinished(result, 0.0))
    return agent
