"""Compaction: free context without losing the thread.

Three steps, cheapest first:

1. Prune. Outputs of reproducible tool calls (file reads, searches, command output) older than the recent
   window become a one-line stub that says how to get them again. Nothing the model decided is lost.
2. Summarise, when pruning was not enough. The model writes a structured summary of the older history
   (goal, constraints, decisions, progress, errors and fixes, the user's messages verbatim, files read and
   changed, next step); the most recent turns stay verbatim after it.
3. Check. The summary is read back against what sagent itself knows of the thread (every user message,
   every file read or changed): whatever the model left out is added verbatim, so no summary can lose the
   user's words or the file lists.

The functions here are pure: they take a history and return what replaces it. A `HistoryChange` carries
one result (the event that records it, and the history after it) to the agent, the only one that assigns
its history: it persists the event first, so the session log keeps the whole history from before every
compaction.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from sagent.agent.tokens import estimate_message
from sagent.events import Compacted, ContextPruned, Rewound, ToolResultsCleared
from sagent.lib.words import quantity
from sagent.redaction import redact
from sagent.tasks import TaskList
from sagent.types import (
    AssistantMessage,
    Message,
    ModelRequest,
    PeerMessage,
    TextPart,
    ToolCall,
    ToolResult,
    UserMessage,
)

COMPACT_PREFIX = "[This conversation was compacted. A summary of everything before this point:]"
COMPACT_INSTRUCTION = """\
Stop working on the task for a moment and write a summary of the conversation above, so that the work can \
continue from your summary alone: the conversation itself will be replaced by it. Do not call tools. Use \
exactly these sections, in this order:

## Goal
What the user wants, in their terms, and what counts as done.
## Constraints and preferences
Every instruction, rule and preference the user gave.
## Decisions
What was decided, and why.
## Progress
What is done, with the evidence (tests run, output seen).
## Errors and fixes
Each error met, its exact message, and how it was fixed (or that it was not).
## User messages
Every message the user wrote, verbatim, in order, each on its own line starting with "> ".
## Files
Read: every file read. Modified: every file created or changed, with what changed.
## Next step
What remains, in order, the next step first.

Quote exact names, paths, values, commands and error messages. Leave out tool output that can be read \
again; keep what was learned from it."""

USER_SECTION = "## User messages (kept verbatim by sagent)"
FILES_SECTION = "## Files (kept by sagent)"
TASKS_SECTION = "## Task list (kept by sagent: your TodoWrite list as it stands; [x] done, [>] in progress)"
MAX_USER_MESSAGE = 8_000  # characters of one user message carried verbatim; longer ones keep their head
READS = frozenset({"Read"})
WRITES = frozenset({"Edit", "Write"})

Trigger = Literal["manual", "auto", "overflow"]


@dataclass(frozen=True, slots=True)
class HistoryChange:
    """One change of an agent's history, as a value: `event` records it in the session log, `history` is
    the whole history after it. Compaction and clearing return these; `Agent.apply` logs the event, then
    takes the history."""

    event: Compacted | ContextPruned | ToolResultsCleared | Rewound
    history: tuple[Message, ...]


@dataclass(frozen=True, slots=True)
class CompactionPolicy:
    """When and how much to compact.

    `threshold` is the fraction of the model's context window at which the agent compacts before its next
    request; None turns automatic compaction off (manual compaction and recovery from a provider's
    "context too long" still work). `per_model` overrides it for model ids. `recent` is the fraction of the
    window (at most `recent_max` tokens) of the newest history that stays verbatim: neither pruned nor
    summarised. After pruning, the agent summarises only when the context is still over `after_prune` of the
    threshold, so one compaction buys room for many turns. `window` is the context window assumed for
    models the catalog does not know (None: no automatic compaction for them)."""

    threshold: float | None = 0.8
    per_model: Mapping[str, float | None] = field(default_factory=dict)
    recent: float = 0.2
    recent_max: int = 40_000
    after_prune: float = 0.7
    window: int | None = None
    min_prune_tokens: int = 100  # outputs smaller than this are not worth a stub

    def __post_init__(self) -> None:
        for value in (self.threshold, *self.per_model.values()):
            if value is not None and not 0 < value <= 1:
                raise ValueError(f"a compaction threshold is a fraction of the window in (0, 1], not {value}")

    def threshold_for(self, model: str) -> float | None:
        return self.per_model.get(model, self.threshold)

    def recent_tokens(self, window: int) -> int:
        return min(self.recent_max, int(window * self.recent))


@dataclass(frozen=True, slots=True)
class Thread:
    """What sagent itself knows must survive every compaction: the user's messages, the files touched."""

    user_messages: tuple[str, ...] = ()
    files_read: tuple[str, ...] = ()
    files_modified: tuple[str, ...] = ()

    def extended(self, history: Sequence[Message]) -> Thread:
        """This thread plus what `history` adds (summaries already carried are not counted again): the
        user's words, and the paths of the Read, Edit and Write calls whose result came back without error."""
        users = list(self.user_messages)
        read, modified = list(self.files_read), list(self.files_modified)
        calls: dict[str, ToolCall] = {}
        for message in history:
            if _from_the_user(message):
                users.append(_carried(message.text))
            elif isinstance(message, AssistantMessage):
                calls.update((c.id, c) for c in message.tool_calls)
            elif isinstance(message, ToolResult) and not message.is_error:
                # Only a call that succeeded touched its file: one a rule denied, a missing file, an edit that
                # did not apply, or a call with no result yet, did not.
                call = calls.pop(message.call_id, None)
                path = call.arguments.get("path") if call is not None else None
                if call is None or not isinstance(path, str):
                    continue
                if call.name in READS and path not in read:
                    read.append(path)
                elif call.name in WRITES and path not in modified:
                    modified.append(path)
        return Thread(tuple(users), tuple(read), tuple(modified))


def _from_the_user(message: Message) -> bool:
    """A person's words: their messages (not summaries), and what they send to a sub-agent."""
    if isinstance(message, PeerMessage):
        return message.sender == "user"
    return isinstance(message, UserMessage) and not is_summary(message) and bool(message.text.strip())


def is_summary(message: Message) -> bool:
    return isinstance(message, UserMessage) and message.text.startswith(COMPACT_PREFIX)


def _carried(text: str) -> str:
    text = text.strip()
    if len(text) <= MAX_USER_MESSAGE:
        return text
    text = redact(text)  # before the cut, which could leave a part of a secret no later redaction finds
    return text[:MAX_USER_MESSAGE] + f" [… {len(text) - MAX_USER_MESSAGE:,} more characters, in the session log]"


# ------------------------------------------------------------------------------------------- where to cut


def recent_start(history: Sequence[Message], keep_tokens: int) -> int:
    """The index where the verbatim recent part begins: as many of the newest messages as fit in
    `keep_tokens`, starting at a message that is not a tool result (a result never loses its call)."""
    start, used = len(history), 0
    for index in range(len(history) - 1, -1, -1):
        used += estimate_message(history[index])
        if used > keep_tokens:
            break
        if not isinstance(history[index], ToolResult):
            start = index
    return start


# ---------------------------------------------------------------------------------------------- pruning


def prune(
    history: Sequence[Message], before: int, reproducible: Callable[[str], bool], min_tokens: int = 100
) -> tuple[ToolResult, ...]:
    """Stubs for the outputs of reproducible tool calls in `history[:before]` that are worth replacing."""
    calls = {c.id: c for m in history[:before] if isinstance(m, AssistantMessage) for c in m.tool_calls}
    stubs = []
    for message in history[:before]:
        if not isinstance(message, ToolResult) or not reproducible(message.name) or is_stub(message):
            continue
        if estimate_message(message) < min_tokens:
            continue
        call = calls.get(message.call_id)
        arguments = json.dumps(call.arguments, ensure_ascii=False) if call is not None else "{}"
        if len(arguments) > 300:
            arguments = redact(arguments)[:300] + "…"
        note = f"{PRUNED} call {message.name} with {arguments} again to see it]"
        stubs.append(ToolResult(message.call_id, message.name, (TextPart(note),), message.is_error))
    return tuple(stubs)


PRUNED = "[output pruned to save context;"


def is_stub(result: ToolResult) -> bool:
    return result.text.startswith(PRUNED)


def replace_results(history: Sequence[Message], results: Sequence[ToolResult]) -> list[Message]:
    """`history` with the tool results of the same call ids swapped for `results`."""
    by_id = {r.call_id: r for r in results}
    return [by_id.get(m.call_id, m) if isinstance(m, ToolResult) else m for m in history]


# ------------------------------------------------------------------------------------------ summarising


def summary_request(request: ModelRequest, older: Sequence[Message], focus: str | None) -> ModelRequest:
    """`request` (the agent's usual one, so its system prompt and tools stay a cached prefix) asking for a
    summary of `older` instead of the next step."""
    ask = COMPACT_INSTRUCTION + (f"\n\nGive most room to: {focus}" if focus else "")
    return replace(request, messages=(*older, UserMessage.of(ask)))


def halves(messages: Sequence[Message]) -> int | None:
    """A cut near the middle of `messages` that leaves no tool result apart from its call, or None."""
    middle = len(messages) // 2
    for offset in range(len(messages)):
        for index in (middle + offset, middle - offset):
            if 0 < index < len(messages) and not isinstance(messages[index], ToolResult):
                return index
    return None


def check_summary(text: str, thread: Thread) -> tuple[str, tuple[str, ...]]:
    """The summary with whatever it lost of `thread` added back verbatim, and the names of what was added.

    A user message counts as kept when its words appear in the summary in order (spacing and "> " quote
    marks aside); a file when its path appears."""
    flat = _flat(text)
    missing_users = [m for m in thread.user_messages if _flat(m) not in flat]
    missing_read = [p for p in thread.files_read if p not in text]
    missing_modified = [p for p in thread.files_modified if p not in text]
    added: list[str] = []
    parts = [text.strip()]
    if not re.search(r"^#+\s*goal", text, re.I | re.M) and thread.user_messages:
        parts.append("## Goal (the user's first message, kept by sagent)\n> " + _quote(thread.user_messages[0]))
        added.append("goal")
    if missing_users:
        parts.append(USER_SECTION + "\n" + "\n".join("> " + _quote(m) for m in missing_users))
        added.append(quantity(len(missing_users), "user message"))
    if missing_read or missing_modified:
        lines = [FILES_SECTION]
        if missing_read:
            lines.append("Read: " + ", ".join(missing_read))
        if missing_modified:
            lines.append("Modified: " + ", ".join(missing_modified))
        parts.append("\n".join(lines))
        added.append(quantity(len(missing_read) + len(missing_modified), "file path"))
    return "\n\n".join(parts), tuple(added)


def with_task_list(text: str, tasks: TaskList) -> str:
    """The summary with the agent's task list after it: the model goes on with the list it kept, whatever
    the summary says of it (the calls that set it are among the messages replaced)."""
    return f"{text}\n\n{TASKS_SECTION}\n{tasks.text()}" if tasks else text


def _flat(text: str) -> str:
    return " ".join(re.sub(r"(^|\n)\s*>\s?", r"\1", text).split())


def _quote(text: str) -> str:
    return text.replace("\n", "\n> ")


def summary_message(text: str) -> UserMessage:
    """The message that stands for the older history after compaction."""
    return UserMessage.of(f"{COMPACT_PREFIX}\n\n{text}")
