"""sagent's events as the editor's `session/update` notifications, for one session.

A tool call is announced once (`tool_call`, status pending) as soon as the model's response that holds it
is complete, or earlier when a permission question about it comes first; it goes `in_progress` when it
starts running and `completed` or `failed` when its result is in. Edit and Write carry the diff of the
file; a Bash call run in the editor's terminal carries that terminal. An ExitPlanMode call's plan is
sent as the session's plan, and so is the agent's task list (TodoWrite) each time it changes. A loaded session's
history is replayed the same way, its task list last.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sagent.acp.tools_view import ReadText, diff_of, kind_of, locations_of, plan_entries, task_entries, title_of
from sagent.events import (
    ErrorEvent,
    Event,
    HookNotice,
    Retrying,
    TaskListChanged,
    TextDelta,
    ThinkingDelta,
    ToolFinished,
    ToolStarted,
    TurnFinished,
)
from sagent.permissions.modes import PLAN_TOOL
from sagent.types import (
    AssistantMessage,
    Message,
    PeerMessage,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResult,
    UserMessage,
)

if TYPE_CHECKING:
    from acp.interfaces import Client
    from acp.schema import ToolCallUpdate

    from sagent.agent.agent import Agent
    from sagent.tasks import TaskList


class SessionUpdates:
    """Sends one session's updates to the editor, and remembers what it said of each tool call."""

    def __init__(self, client: Client, session_id: str, read: ReadText) -> None:
        self.client = client
        self.session_id = session_id
        self.read = read
        self._announced: dict[str, asyncio.Task[list[Any]]] = {}  # call id -> its diff, once worked out
        self._running: set[str] = set()  # calls told in_progress
        self._running_bash: list[str] = []  # Bash calls in progress, oldest first, for the editor's terminals
        self.terminals: dict[str, str] = {}  # call id -> the editor's terminal it runs in
        self.last_error = ""

    async def send(self, update: Any) -> None:
        await self.client.session_update(session_id=self.session_id, update=update)

    # ------------------------------------------------------------------------------ tool calls

    async def announce(self, agent: Agent, call: ToolCall) -> list[Any]:
        """Tell the editor about `call` (once, however many ask); its diff content."""
        task = self._announced.get(call.id)
        if task is None:
            task = self._announced[call.id] = asyncio.ensure_future(self._announce(agent, call))
        return await asyncio.shield(task)

    async def _announce(self, agent: Agent, call: ToolCall) -> list[Any]:
        from acp.schema import AgentPlanUpdate, ToolCallStart

        cwd = str(agent.context.cwd)
        diff = await diff_of(call, cwd, self.read)
        who = "" if agent.parent is None else f"[{agent.label}] "
        await self.send(
            ToolCallStart(
                session_update="tool_call",
                tool_call_id=call.id,
                title=who + title_of(call, cwd),
                kind=kind_of(call.name),
                status="pending",
                content=diff or None,
                locations=locations_of(call, cwd) or None,
                raw_input=dict(call.arguments),
            )
        )
        if call.name == PLAN_TOOL:
            entries = plan_entries(call)
            if entries:
                await self.send(AgentPlanUpdate(session_update="plan", entries=entries))
        return diff

    def question(self, agent: Agent, call: ToolCall, diff: list[Any]) -> ToolCallUpdate:
        """The tool call as a permission question shows it."""
        from acp.schema import ToolCallUpdate

        cwd = str(agent.context.cwd)
        return ToolCallUpdate(
            tool_call_id=call.id,
            title=title_of(call, cwd),
            kind=kind_of(call.name),
            status="pending",
            content=diff or None,
            locations=locations_of(call, cwd) or None,
            raw_input=dict(call.arguments),
        )

    async def started(self, agent: Agent, call: ToolCall) -> None:
        """The round took `call` up: it runs now, unless the permission policy asks about it first (then it
        runs once the user allows it: `running`, from the approver)."""
        from sagent.agent.hooks import Ask
        from sagent.permissions.policy import decide

        await self.announce(agent, call)
        if not isinstance(decide(agent, call), Ask):
            await self.running(call)

    async def running(self, call: ToolCall) -> None:
        """`call` runs now (once)."""
        from acp.schema import ToolCallProgress

        if call.id in self._running:
            return
        self._running.add(call.id)
        if call.name == "Bash":
            self._running_bash.append(call.id)
        await self.send(ToolCallProgress(session_update="tool_call_update", tool_call_id=call.id, status="in_progress"))

    async def finished(self, agent: Agent, call: ToolCall | None, result: ToolResult) -> None:
        from acp.schema import ContentToolCallContent, TerminalToolCallContent, TextContentBlock, ToolCallProgress

        if call is not None:
            await self.announce(agent, call)
        if result.call_id in self._running_bash:
            self._running_bash.remove(result.call_id)
        task = self._announced.get(result.call_id)
        diff = task.result() if task is not None and task.done() and not result.is_error else []
        content: list[Any] = list(diff)
        terminal = self.terminals.pop(result.call_id, None)
        if terminal is not None:
            content.append(TerminalToolCallContent(type="terminal", terminal_id=terminal))
        text = result.text
        if text and not diff:
            block = TextContentBlock(type="text", text=_fenced(text) if call and call.name == "Bash" else text)
            content.append(ContentToolCallContent(type="content", content=block))
        await self.send(
            ToolCallProgress(
                session_update="tool_call_update",
                tool_call_id=result.call_id,
                status="failed" if result.is_error else "completed",
                content=content or None,
                raw_output={"text": text, "is_error": result.is_error},
            )
        )

    async def terminal_opened(self, terminal_id: str) -> None:
        """The editor's terminal `terminal_id` runs the oldest Bash call in progress: show it there."""
        from acp.schema import TerminalToolCallContent, ToolCallProgress

        waiting = [c for c in self._running_bash if c not in self.terminals]
        if not waiting:
            return
        self.terminals[waiting[0]] = terminal_id
        content: list[Any] = [TerminalToolCallContent(type="terminal", terminal_id=terminal_id)]
        await self.send(ToolCallProgress(session_update="tool_call_update", tool_call_id=waiting[0], content=content))

    # ---------------------------------------------------------------------------------- events

    async def on_event(self, agent: Agent, event: Event, calls: dict[str, ToolCall]) -> None:
        """One event of the session's main agent; `calls` collects the tool calls seen, by id."""
        from acp.schema import AgentMessageChunk, AgentThoughtChunk, TextContentBlock

        if isinstance(event, TextDelta) and event.text:
            block = TextContentBlock(type="text", text=event.text)
            await self.send(AgentMessageChunk(session_update="agent_message_chunk", content=block))
        elif isinstance(event, ThinkingDelta) and event.text:
            block = TextContentBlock(type="text", text=event.text)
            await self.send(AgentThoughtChunk(session_update="agent_thought_chunk", content=block))
        elif isinstance(event, TurnFinished):
            for call in event.message.tool_calls:
                calls[call.id] = call
                await self.announce(agent, call)
            await self.usage(agent, event.total_cost_usd)
        elif isinstance(event, ToolStarted):
            calls[event.call.id] = event.call
            await self.started(agent, event.call)
        elif isinstance(event, ToolFinished):
            await self.finished(agent, calls.get(event.result.call_id), event.result)
        elif isinstance(event, ErrorEvent):
            self.last_error = event.message
            _log(f"error: {event.message}")
        elif isinstance(event, Retrying):
            _log(f"retrying in {event.delay:.1f} s (attempt {event.attempt}): {event.error}")
        elif isinstance(event, HookNotice):
            _log(event.line())
        elif isinstance(event, TaskListChanged):
            await self.plan(event.tasks)

    async def plan(self, tasks: TaskList) -> None:
        """The agent's task list as the session's plan: the editor replaces the plan it shows with it."""
        from acp.schema import AgentPlanUpdate

        await self.send(AgentPlanUpdate(session_update="plan", entries=task_entries(tasks)))

    async def usage(self, agent: Agent, cost_usd: float) -> None:
        """How much of the model's window the context fills now, and what the session has cost."""
        from acp.schema import Cost, UsageUpdate

        window = agent.context_window
        if not window:
            return  # a model whose window sagent does not know: nothing honest to say
        used = min(max(agent.context_tokens, 0), window)
        cost = Cost(amount=cost_usd, currency="USD")
        await self.send(UsageUpdate(session_update="usage_update", used=used, size=window, cost=cost))

    # ---------------------------------------------------------------------------------- replay

    async def replay(self, agent: Agent, history: list[Message]) -> None:
        """A loaded session's conversation, as it happened: the user's messages, the answers, the thinking,
        and each tool call with its result."""
        calls: dict[str, ToolCall] = {}
        read, self.read = self.read, _nothing  # an old edit's diff is its own two strings, not today's file
        try:
            await self._replay(agent, history, calls)
        finally:
            self.read = read
        if agent.task_list:
            await self.plan(agent.task_list)

    async def _replay(self, agent: Agent, history: list[Message], calls: dict[str, ToolCall]) -> None:
        from acp.schema import AgentMessageChunk, AgentThoughtChunk, TextContentBlock, UserMessageChunk

        for message in history:
            if isinstance(message, UserMessage | PeerMessage):
                text = message.text if isinstance(message, UserMessage) else f"[{message.sender}] {message.text}"
                if text:
                    block = TextContentBlock(type="text", text=text)
                    await self.send(UserMessageChunk(session_update="user_message_chunk", content=block))
            elif isinstance(message, AssistantMessage):
                for part in message.content:
                    if isinstance(part, TextPart) and part.text:
                        block = TextContentBlock(type="text", text=part.text)
                        await self.send(AgentMessageChunk(session_update="agent_message_chunk", content=block))
                    elif isinstance(part, ThinkingPart) and part.text:
                        block = TextContentBlock(type="text", text=part.text)
                        await self.send(AgentThoughtChunk(session_update="agent_thought_chunk", content=block))
                    elif isinstance(part, ToolCall):
                        calls[part.id] = part
                        await self.announce(agent, part)
            elif isinstance(message, ToolResult):
                await self.finished(agent, calls.get(message.call_id), message)


async def _nothing(path: Path) -> str | None:
    return None


def _fenced(text: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}\n{text.rstrip()}\n{fence}"


def _log(line: str) -> None:
    sys.stderr.write(f"sagent acp: {line}\n")
    sys.stderr.flush()


def read_disk(path: Path) -> str | None:
    """A file's text on disk (None when it cannot be read), for diffs without an editor's buffers."""
    try:
        return path.read_bytes()[:2_000_000].decode("utf-8", errors="replace")
    except OSError:
        return None
