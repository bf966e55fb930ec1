"""Hooks: the fixed points where code outside the loop may watch or steer it.

    class NoBash(Hook):
        async def before_tool(self, agent, call):
            return Deny("Bash is not allowed here") if call.name == "Bash" else ALLOW

    agent = Agent(model, tools=builtin_tools(), hooks=[NoBash()])

A hook subclasses `Hook` and overrides only the methods it needs; the others do nothing. An agent's hooks
run in the order given, and its sub-agents run the same hooks (they are a setting, inherited like the
others). Each method receives the agent it runs in, so one hook can serve a whole tree of agents and tell
them apart by `agent.label`.

Where the loop calls them, in the order of one round:

1. `before_request(agent, request)`: each request of the loop, just before it is sent.
2. `after_response(agent, message)`: each response, once it has joined the history.
3. `before_tool(agent, call)`: each tool call, before it runs: `ALLOW`, `Deny(reason)`, `Rewrite(args)` or
   `Ask(reason)` (the agent's `approver` decides: the REPL asks its user).
4. `after_tool(agent, call, result)`: each tool call that ran or was denied, with its result.
5. `on_event(agent, event)`: every event the agent emits, after the session log has it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from sagent.events import Event
from sagent.types import AssistantMessage, ModelRequest, ToolCall, ToolResult

if TYPE_CHECKING:
    from sagent.agent.agent import Agent


@dataclass(frozen=True, slots=True)
class Allow:
    """Run the tool call as the model wrote it."""


@dataclass(frozen=True, slots=True)
class Deny:
    """Do not run the tool call: the model gets an error result that gives `reason`."""

    reason: str


@dataclass(frozen=True, slots=True)
class Rewrite:
    """Run the tool call with these arguments instead (checked against the tool's schema like the model's)."""

    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Ask:
    """Ask whoever approves tool calls (the agent's `approver`) whether the call runs; `reason` says why
    this call needs asking (the mode or rule that asks). With no approver, nobody is there to ask and the
    call runs, as it did before anything asked."""

    reason: str = ""


ToolDecision = Allow | Deny | Rewrite | Ask
"""What `Hook.before_tool` decides for one tool call."""


class Approver(Protocol):
    """Answers an `Ask` for one tool call: the REPL prompts its user; a test or an application decides in
    code. It may be called for several calls at once (a round's calls run concurrently), so one that talks
    to a person asks one question at a time."""

    async def __call__(self, agent: Agent, call: ToolCall, reason: str) -> Allow | Deny:
        """`ALLOW` to run `call` (with the arguments it carries), `Deny(reason)` to refuse it."""
        ...


ALLOW = Allow()


class Hook:
    """The loop's extension points, each a no-op here. Override the ones you need."""

    async def before_request(self, agent: Agent, request: ModelRequest) -> ModelRequest:
        """Called before each request of the agent's loop is sent (not for compaction summaries or a tool's
        question to a small model). Return the request to send: `request` itself, or a changed copy
        (`dataclasses.replace`). The next hook gets what this one returned. The budget and window checks
        apply to the request as the last hook returned it. An exception ends the run as an internal error."""
        return request

    async def after_response(self, agent: Agent, message: AssistantMessage) -> None:
        """Called once per model response, after it joined the history (an interrupted response too, with
        what was streamed). Changing the message is not possible: it is a frozen value the log already has."""

    async def before_tool(self, agent: Agent, call: ToolCall) -> ToolDecision:
        """Called for each tool call before it runs, concurrently with the round's other calls (as the
        calls themselves run). Return `ALLOW`, `Deny(reason)` (the tool never runs; the model gets an error
        result naming the reason), `Rewrite(arguments)` (the tool runs with these; the history keeps the
        call as the model wrote it) or `Ask(reason)` (the agent's approver decides, once every hook had its
        say). Hooks are asked in order: the first `Deny` wins at once, a `Rewrite` is what the next hook
        sees, and an `Ask` from any hook goes to the approver after the last (deny beats ask beats allow).
        An exception denies the call (its text is the reason): a failing approval hook never lets a call
        through."""
        return ALLOW

    async def after_tool(self, agent: Agent, call: ToolCall, result: ToolResult) -> None:
        """Called after each tool call ran (or was denied), with its result, before the loop takes it. Calls
        cut short by an interrupt or moved to the background are reported when they end, if they do."""

    def on_event(self, agent: Agent, event: Event) -> None:
        """Called with every event the agent emits, in order, after the session log has written it (persist,
        then act), and before the loop acts on it. Keep it quick: the loop waits for it. An exception
        ends the run as an internal error."""
