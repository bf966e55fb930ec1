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
   `shape_request(agent, request)` says, without waiting, what it would change in the system prompt and
   the tools: the agent measures its next request by it between requests.
2. `after_response(agent, message)`: each response, once it has joined the history.
3. `before_tool(agent, call)`: each tool call, before it runs: `ALLOW`, `Deny(reason)`, `Rewrite(args)` or
   `Ask(reason)` (the agent's `approver` decides: the REPL asks its user).
4. `after_tool(agent, call, result)`: each tool call that ran or was denied, with its result; it may return
   a changed result (feedback for the model appended, say) that the model then gets.
5. `on_event(agent, event)`: every event the agent emits, after the session log has it.

And around the rounds, once each:

- `on_session_start(agent, source)`: an agent's first run starts (`"startup"`, or `"resume"` for a session
  continued); it may return context for the model, which joins the history before the first prompt.
- `on_prompt(agent, message)`: a user's message is about to join the history: `PROCEED`, or a
  `PromptDecision` that blocks it (the model never sees it; the user is told why) or adds context after it.
- `on_stop(agent, message, active)`: the model answered without tool calls and the run is about to end
  successfully; a returned reason keeps it going, the reason being the model's next input.
- `before_compact(agent, trigger, focus)`: the history is about to be compacted.

And when a call needs the approver's answer: `on_permission_request(agent, call, reason)` may answer first.

A hook that has something to tell the user (a failure, a message) calls `agent.notify(HookNotice(...))`:
the notice is logged like every event and shown in the main agent's stream (headless stderr, the REPL).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from sagent.events import Event
from sagent.types import AssistantMessage, ModelRequest, ToolCall, ToolResult, UserMessage

if TYPE_CHECKING:
    from sagent.agent.agent import Agent
    from sagent.agent.compaction import Trigger


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
    call runs, as it did before anything asked, unless `refuse_unattended` (the policy could not check a
    deny rule: the call is refused when nobody can be asked)."""

    reason: str = ""
    refuse_unattended: bool = False


ToolDecision = Allow | Deny | Rewrite | Ask
"""What `Hook.before_tool` decides for one tool call."""


class Approver(Protocol):
    """Answers an `Ask` for one tool call: the REPL prompts its user; a test or an application decides in
    code. It may be called for several calls at once (a round's calls run concurrently), so one that talks
    to a person asks one question at a time."""

    async def __call__(self, agent: Agent, call: ToolCall, reason: str) -> Allow | Deny | Rewrite:
        """`ALLOW` to run `call` (with the arguments it carries), `Deny(reason)` to refuse it, `Rewrite(arguments)`
        to run it with the arguments the approver changed (checked against the tool's schema as any)."""
        ...


ALLOW = Allow()


@dataclass(frozen=True, slots=True)
class PromptDecision:
    """What `Hook.on_prompt` decides for one user message: `block` (a reason) keeps it out of the history,
    and the user is told the reason; `context` is added for the model right after the message."""

    block: str | None = None
    context: str = ""


PROCEED = PromptDecision()
"""The message joins the history as it is."""

SessionSource = Literal["startup", "resume"]
"""Why a session starts: a new one, or one continued from its log."""

MAX_STOP_CONTINUES = 8
"""How many times the `on_stop` hooks may keep one run going: past it the run ends as it would have (and
the user is told), so a hook that always objects cannot loop forever."""


class Hook:
    """The loop's extension points, each a no-op here. Override the ones you need."""

    async def before_request(self, agent: Agent, request: ModelRequest) -> ModelRequest:
        """Called before each request of the agent's loop is sent (not for compaction summaries or a tool's
        question to a small model). Return the request to send: `request` itself, or a changed copy
        (`dataclasses.replace`). The next hook gets what this one returned. The budget and window checks
        apply to the request as the last hook returned it. An exception ends the run as an internal error."""
        return request

    def shape_request(self, agent: Agent, request: ModelRequest) -> ModelRequest:
        """The request as `before_request` would change its system prompt and tools, worked out now, without
        waiting and without side effects: how the agent measures its next request between requests (its
        context gauge, `Agent.context_size()`, the estimate before a first response). A hook whose
        `before_request` offers other tools, or another system prompt, says so here too (and its
        `before_request` may return this)."""
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

    async def after_tool(self, agent: Agent, call: ToolCall, result: ToolResult) -> ToolResult | None:
        """Called after each tool call ran (or was denied), with its result, before the loop takes it. Calls
        cut short by an interrupt or moved to the background are reported when they end, if they do.
        Return None to keep the result, or a `ToolResult` for the same call to replace it (the model and
        the session log get that one; the next hook sees it): how a hook feeds text back to the model
        about a call that ran. A denied call's result starts with `denied: `."""
        return None

    async def on_session_start(self, agent: Agent, source: SessionSource) -> str | None:
        """Called once per agent, as its first run starts (sub-agents too: `agent.parent` tells them
        apart), after `SessionStarted` is logged and before the first message joins the history. Return
        text the model should have as context (it joins the history first, as a message from the hook) or
        None. An exception ends the run as an internal error."""
        return None

    async def on_prompt(self, agent: Agent, message: UserMessage) -> PromptDecision:
        """Called for each user message (not a peer's message or a job's result) as it is about to join the
        history, at a safe point. Return `PROCEED`, or a `PromptDecision` that blocks the message (it never
        joins the history and the user gets a notice with the reason; when nothing else is left for the
        model to answer, the run ends: an error when it had not called the model yet) or adds context
        after it. The first hook that blocks wins; contexts of the others are kept in order. An exception
        ends the run as an internal error."""
        return PROCEED

    async def on_stop(self, agent: Agent, message: AssistantMessage, active: bool) -> str | None:
        """Called when the model answered without tool calls and nothing is waiting, just before the run
        would end with success (a sub-agent's run too). Return None to let it end, or a reason to keep it
        going: the reason joins the history as a message from the hook and the model is called again.
        `active` is True when this run already goes on because of an `on_stop` answer, so a hook can avoid
        looping; past `MAX_STOP_CONTINUES` the run ends regardless. An exception ends the run as an
        internal error."""
        return None

    async def on_permission_request(self, agent: Agent, call: ToolCall, reason: str) -> ToolDecision | None:
        """Called when a call needs an answer from the approver (a hook or the policy asked; `reason` says
        why), before the approver is asked, and also when there is no approver: `ALLOW`, `Deny(reason)` or
        `Rewrite(arguments)` (allowed with these arguments) answers in its place; None (or an `Ask`) leaves
        the question to the next hook, then to the approver. An exception denies the call."""
        return None

    async def recheck(self, agent: Agent, call: ToolCall) -> Deny | None:
        """Called when the approver (or an `on_permission_request` hook) allowed a call with changed
        arguments, after every hook judged the call as it was: a `Deny` if this hook refuses the call as it
        will now run (a deny rule, a protected path), else None. Not called for other calls; a hook that
        keeps per-call state from `before_tool` updates it here for the changed call. An exception denies
        the call."""
        return None

    async def before_compact(self, agent: Agent, trigger: Trigger, focus: str | None) -> None:
        """Called before the agent's history is compacted (`trigger`: `manual` when asked for, `auto` when
        the window filled, `overflow` when the provider refused a request as too long), with the `focus` the
        summary is to keep, while the history is still whole: for a hook that saves or reports it first.
        An exception ends the compaction (and a run that was compacting) as an internal error."""

    def on_event(self, agent: Agent, event: Event) -> None:
        """Called with every event the agent emits, in order, after the session log has written it (persist,
        then act), and before the loop acts on it. Keep it quick: the loop waits for it. An exception
        ends the run as an internal error."""
