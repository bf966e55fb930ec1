"""The event vocabulary: everything an agent (and a model stream) reports, as one typed stream.

A `Model.stream()` yields the stream events (`TextDelta`, `ThinkingDelta`, `ToolCallDelta`) and ends with
exactly one `ResponseComplete`. The agent forwards the deltas and adds its own events. Surfaces render
this stream, the session log appends it, the cost tracker counts it; no surface has a loop of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from sagent.lib.words import quantity
from sagent.tasks import TaskList
from sagent.types import AssistantMessage, Cost, Message, ToolCall, ToolResult, Usage, UserMessage

# --------------------------------------------------------------------------- model stream (and forwarded)


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str
    type: Literal["text_delta"] = "text_delta"


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    text: str
    type: Literal["thinking_delta"] = "thinking_delta"


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A piece of a tool call being streamed: `name` and `id` arrive first, then argument JSON text."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments_delta: str = ""
    type: Literal["tool_call_delta"] = "tool_call_delta"


@dataclass(frozen=True, slots=True)
class ResponseComplete:
    """The last event of a model stream: the whole assistant message with its usage."""

    message: AssistantMessage
    type: Literal["response_complete"] = "response_complete"


@dataclass(frozen=True, slots=True)
class Retrying:
    """A transient provider error; the request is sent again after `delay` seconds.

    Any partial output streamed since the last request was discarded and will be streamed again.
    """

    attempt: int
    delay: float
    error: str
    type: Literal["retrying"] = "retrying"


ModelEvent = TextDelta | ThinkingDelta | ToolCallDelta | ResponseComplete

# ------------------------------------------------------------------------------------------ agent events


@dataclass(frozen=True, slots=True)
class SessionStarted:
    session_id: str
    cwd: str
    provider: str
    model: str
    tools: tuple[str, ...]
    resumed: bool = False
    type: Literal["session_started"] = "session_started"


@dataclass(frozen=True, slots=True)
class ModelSwitched:
    """The agent moved to another model (possibly another provider); the history goes with it."""

    provider: str
    model: str
    previous_provider: str
    previous_model: str
    type: Literal["model_switched"] = "model_switched"


@dataclass(frozen=True, slots=True)
class MessageAdded:
    """A user, peer or tool-result message entered the history (assistant ones come as TurnFinished)."""

    message: Message
    type: Literal["message_added"] = "message_added"


@dataclass(frozen=True, slots=True)
class ToolStarted:
    call: ToolCall
    type: Literal["tool_started"] = "tool_started"


@dataclass(frozen=True, slots=True)
class ToolFinished:
    result: ToolResult
    duration_ms: float
    type: Literal["tool_finished"] = "tool_finished"


@dataclass(frozen=True, slots=True)
class TurnFinished:
    """One model response is complete. `cost` is this response's; `total_cost_usd` the session's so far."""

    message: AssistantMessage
    usage: Usage
    cost: Cost
    total_cost_usd: float
    duration_ms: float
    type: Literal["turn_finished"] = "turn_finished"


@dataclass(frozen=True, slots=True)
class Compacted:
    """The older history was replaced by a summary the model wrote; the newest `kept` messages stay after it.

    `replaced` is how many messages the summary stands for. `trigger` says why: asked for (`manual`), the
    context crossed the threshold (`auto`), or the provider answered "context too long" (`overflow`). The
    summary was checked against `user_messages` and the file lists, which sagent carries from compaction to
    compaction; `repaired` names what the check had to add back. Tokens are of the whole next request."""

    summary: UserMessage
    replaced: int
    usage: Usage
    cost: Cost
    model: str
    kept: int = 0
    trigger: str = "manual"
    tokens_before: int = 0
    tokens_after: int = 0
    user_messages: tuple[str, ...] = ()
    files_read: tuple[str, ...] = ()
    files_modified: tuple[str, ...] = ()
    repaired: tuple[str, ...] = ()
    type: Literal["compacted"] = "compacted"

    def line(self) -> str:
        """What happened, in one line for people."""
        why = {"auto": "the context reached its threshold", "overflow": "the provider said it was too long"}
        reason = f" ({why[self.trigger]})" if self.trigger in why else ""
        kept = f", the last {self.kept} kept verbatim" if self.kept else ""
        sizes = _sizes(self.tokens_before, self.tokens_after)
        return f"─ {sizes}: {quantity(self.replaced, 'message')} summarised{kept}{reason} · ${self.cost.total:.4f}"


@dataclass(frozen=True, slots=True)
class ContextPruned:
    """Old outputs of reproducible tool calls were replaced by the stubs in `results` to free context."""

    results: tuple[ToolResult, ...]
    tokens_before: int
    tokens_after: int
    type: Literal["context_pruned"] = "context_pruned"

    def line(self) -> str:
        """What happened, in one line for people."""
        sizes = _sizes(self.tokens_before, self.tokens_after)
        return f"─ {sizes}: {len(self.results)} old tool outputs pruned (they can be had again)"


def _sizes(before: int, after: int) -> str:
    return f"context {before / 1000:.1f}k → {after / 1000:.1f}k tokens"


@dataclass(frozen=True, slots=True)
class SmallModelCall:
    """A tool asked a cheap model something on the agent's account (WebFetch, about a large page)."""

    tool: str
    provider: str
    model: str
    usage: Usage
    cost: Cost
    type: Literal["small_model_call"] = "small_model_call"


@dataclass(frozen=True, slots=True)
class ToolResultsCleared:
    """The agent replaced the output of these tool calls with a short note, to free context."""

    call_ids: tuple[str, ...]
    type: Literal["tool_results_cleared"] = "tool_results_cleared"


@dataclass(frozen=True, slots=True)
class Rewound:
    """The conversation went back to just before one of the user's messages (`/rewind`): the history keeps
    its first `kept` messages, and `dropped` messages went, the one rewound to (`prompt` is its text) the
    first of them. `restored` and `deleted` name the files sagent put back as they were before that
    message, from the checkpoints it keeps of every file it writes (a file it created since is deleted);
    `failed` says which could not be, and why ("path: reason"); `left` names the files changed since sagent
    wrote them (by the user, say), left as they are."""

    kept: int
    dropped: int
    prompt: str
    restored: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()
    left: tuple[str, ...] = ()
    type: Literal["rewound"] = "rewound"

    def line(self) -> str:
        """What happened, in one line for people."""
        files = len(self.restored) + len(self.deleted)
        changed = f"; {files} file{'s' if files != 1 else ''} put back" if files else ""
        failed = f"; {len(self.failed)} could not be put back" if self.failed else ""
        left = f"; {len(self.left)} changed since by someone else, left as it is" if self.left else ""
        return f"─ rewound: {self.dropped} message{'s' if self.dropped != 1 else ''} dropped{changed}{failed}{left}"


@dataclass(frozen=True, slots=True)
class TaskListChanged:
    """The agent's task list (`Agent.task_list`, kept with the TodoWrite tool) is now `tasks`, whole.
    `agent` is the label of the agent whose list it is: each agent, a sub-agent too, keeps its own."""

    tasks: TaskList
    agent: str = ""
    type: Literal["task_list_changed"] = "task_list_changed"


ErrorKind = Literal[
    "rate_limited",
    "overloaded",
    "context_too_long",
    "authentication",
    "bad_request",
    "server",
    "connection",
    "malformed_response",
    "provider",
    "internal",
]


@dataclass(frozen=True, slots=True)
class ErrorEvent:
    message: str
    kind: ErrorKind = "internal"
    type: Literal["error"] = "error"


@dataclass(frozen=True, slots=True)
class HookNotice:
    """Something a hook tells the user: a hook that failed (`error`: it crashed, timed out, could not start
    or answered nonsense; the loop went on as if it had not been there), a prompt it blocked or a run it
    stopped (`warning`), a message it sent (`info`). `hook` names it (a user hook's event and command);
    `agent` is the label of the agent it ran for."""

    hook: str
    message: str
    level: Literal["info", "warning", "error"] = "info"
    agent: str = ""
    type: Literal["hook_notice"] = "hook_notice"

    def line(self) -> str:
        """The notice in one line for people."""
        where = f" ({self.agent})" if self.agent and self.agent != "main" else ""
        return f"{self.hook}{where}: {self.message}"


@dataclass(frozen=True, slots=True)
class AdvisorConsulted:
    """The agent's advisor was consulted: why (`trigger`: one of `sagent.advisor.TRIGGERS`), which model,
    whether the provider ran the consultation on its own side (`native`, Anthropic's advisor tool) or
    sagent did, and what it used and cost (counted under `advisor/<model>`). `agent` is the label of the
    agent it advised; `advice`, what the advisor said."""

    trigger: str
    model: str
    usage: Usage
    cost: Cost
    native: bool = False
    agent: str = ""
    advice: str = ""
    """The advice as the executor got it (empty when the provider keeps it encrypted)."""
    type: Literal["advisor_consulted"] = "advisor_consulted"

    def line(self) -> str:
        """The consultation in one line for people."""
        u = self.usage
        how = ", on the provider's side" if self.native else ""
        return (
            f"consulted {self.model} (trigger: {self.trigger}{how}): {u.input_tokens:,} input / "
            f"{u.output_tokens:,} output tokens, ${self.cost.total:.6f}"
        )


ResultSubtype = Literal[
    "success",
    "error_max_turns",
    "error_max_budget_usd",
    "error_during_execution",
    "interrupted",
]


@dataclass(frozen=True, slots=True)
class Result:
    """The end of a run: what the agent answered, or why it stopped."""

    subtype: ResultSubtype
    text: str
    num_turns: int
    usage: Usage
    total_cost_usd: float
    duration_ms: float
    duration_api_ms: float
    session_id: str
    type: Literal["result"] = "result"

    @property
    def is_error(self) -> bool:
        return self.subtype != "success"


Event = (
    TextDelta
    | ThinkingDelta
    | ToolCallDelta
    | Retrying
    | SessionStarted
    | ModelSwitched
    | Compacted
    | ContextPruned
    | ToolResultsCleared
    | Rewound
    | TaskListChanged
    | SmallModelCall
    | MessageAdded
    | ToolStarted
    | ToolFinished
    | TurnFinished
    | ErrorEvent
    | HookNotice
    | AdvisorConsulted
    | Result
)
