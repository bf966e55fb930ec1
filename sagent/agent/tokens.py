"""Token accounting: how big the next request will be, before it is sent, and what it is made of.

The provider reports the exact prompt size of every response. The next request holds that prompt, the
answer, and whatever was added since (tool results, queued messages), so its size is the reported count
plus an estimate of the additions. When the history is rewritten (compaction, pruning, cleared results) or
the model changes, the report no longer describes the history; the size is then estimated from the text,
scaled by how far the last estimate was from the last report.

Estimates count characters: about four per token for English and code with the tokenizers in use. Only
the difference since the last report is estimated in the common case, so the error stays small.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from sagent.lib.words import quantity
from sagent.types import (
    ImagePart,
    Message,
    ModelRequest,
    PeerMessage,
    ServerToolPart,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResult,
    ToolSpec,
    Usage,
)

CHARS_PER_TOKEN = 4
IMAGE_TOKENS = 1_600  # about what a screen-sized image costs on the major providers
MESSAGE_OVERHEAD = 4  # role markers and separators around every message


def estimate_text(text: str) -> int:
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def estimate_message(message: Message) -> int:
    if isinstance(message, PeerMessage):
        return MESSAGE_OVERHEAD + estimate_text(message.sender) + estimate_text(message.text)
    total = MESSAGE_OVERHEAD
    for part in message.content:
        if isinstance(part, TextPart):
            total += estimate_text(part.text)
        elif isinstance(part, ImagePart):
            total += IMAGE_TOKENS
        elif isinstance(part, ThinkingPart):
            total += estimate_text(part.text)
        elif isinstance(part, ServerToolPart):
            total += estimate_text(part.blocks)
        elif isinstance(part, ToolCall):
            total += estimate_text(part.name) + estimate_text(json.dumps(part.arguments, ensure_ascii=False))
    return total


def estimate_messages(messages: Sequence[Message]) -> int:
    return sum(estimate_message(m) for m in messages)


def estimate_tools(tools: Sequence[ToolSpec]) -> int:
    return sum(estimate_text(t.name + t.description + json.dumps(t.input_schema)) for t in tools)


def estimate_request(request: ModelRequest) -> int:
    """The size of a whole request from its text alone (a request that is not the agent's own history)."""
    return estimate_text(request.system) + estimate_tools(request.tools) + estimate_messages(request.messages)


@dataclass(frozen=True, slots=True)
class ContextSize:
    """The size of the next request, by part, in tokens. `measured` is True when it rests on the provider's
    count of the last response (plus an estimate of what was added since), False when it is an estimate."""

    system: int
    tools: int
    messages: int  # user, assistant and peer messages
    tool_results: int
    window: int | None = None
    measured: bool = False

    @property
    def total(self) -> int:
        return self.system + self.tools + self.messages + self.tool_results

    @property
    def share(self) -> float | None:
        """The fraction of the window the request fills, when the window is known."""
        return self.total / self.window if self.window else None

    def lines(self) -> list[str]:
        """A readable breakdown, one part a line."""
        share = f" of {self.window:,} ({100 * (self.share or 0):.1f}%)" if self.window else ""
        how = "measured at the last response, plus an estimate since" if self.measured else "estimated"
        total = max(self.total, 1)
        lines = [f"context: {quantity(self.total, 'token')}{share}, {how}"]
        for name, value in (
            ("system prompt", self.system),
            ("tools", self.tools),
            ("messages", self.messages),
            ("tool results", self.tool_results),
        ):
            lines.append(f"  {name:<14} {value:>9,}  {100 * value / total:5.1f}%")
        return lines


class ContextMeter:
    """Remembers the last provider-reported size and the history it described. Estimates are kept
    incrementally, so a response costs an estimate of the new messages only, not of the whole history."""

    def __init__(self) -> None:
        self._reported = 0  # prompt plus answer of the last response
        self._covered = 0  # how many history messages that count covers; 0 when it no longer describes it
        self._estimated = 0  # the estimate of those messages
        self._scale = 1.0  # reported / estimated at the last report: corrects later estimates
        self._fixed: tuple[object, int] = (None, 0)  # (system and tool names, their estimate)
        self._cached = 0  # prompt tokens the provider held in its cache after the last response

    def observe(self, usage: Usage, system: str, tools: Sequence[ToolSpec], history: Sequence[Message]) -> None:
        """After a response, with `history` holding the answer: its usage is the truth about that history."""
        reported = usage.total_input_tokens + usage.output_tokens
        if reported <= 0:  # a provider that reports no usage (the local server): keep estimating
            self.rewritten()
            return
        if self._covered and self._covered <= len(history):
            self._estimated += estimate_messages(history[self._covered :])
        else:
            self._estimated = estimate_messages(history)
        self._reported, self._covered = reported, len(history)
        self._cached = usage.cache_read_tokens + usage.cache_write_tokens
        estimated = self._fixed_part(system, tools) + self._estimated
        if estimated > 0:
            self._scale = min(3.0, max(0.5, reported / estimated))

    def _fixed_part(self, system: str, tools: Sequence[ToolSpec]) -> int:
        key = (system, tuple((t.name, t.description) for t in tools))
        if self._fixed[0] != key:
            self._fixed = (key, estimate_text(system) + estimate_tools(tools))
        return self._fixed[1]

    def rewritten(self) -> None:
        """The history no longer is the one last reported on (compacted, pruned, model switched)."""
        self._covered = 0
        self._cached = 0

    def cached_tokens(self) -> int:
        """How much of the next request's prompt the provider is expected to read from its cache: the part
        the last response wrote to or read from it, while the history still starts with that prompt."""
        return self._cached if self._covered else 0

    def next_total(self, system: str, tools: Sequence[ToolSpec], history: Sequence[Message]) -> int:
        """The size of the next request; cheap when the last report still holds (only the new messages are
        estimated)."""
        known = self.since_report(history)
        return known if known is not None else self.estimate(system, tools, history)

    def since_report(self, history: Sequence[Message]) -> int | None:
        """The last reported count plus the scaled estimate of what `history` added since; None when the
        report no longer describes `history`."""
        if self._covered and self._covered <= len(history):
            return self._reported + round(estimate_messages(history[self._covered :]) * self._scale)
        return None

    def estimate(self, system: str, tools: Sequence[ToolSpec], history: Sequence[Message]) -> int:
        """The size of a request from its text alone, corrected by the last report."""
        return round((self._fixed_part(system, tools) + estimate_messages(history)) * self._scale)

    def measure(
        self, system: str, tools: Sequence[ToolSpec], history: Sequence[Message], window: int | None = None
    ) -> ContextSize:
        """The next request by part. The parts are estimated and scaled so they add up to the best total."""
        parts: _Parts = (
            estimate_text(system),
            estimate_tools(tools),
            sum(estimate_message(m) for m in history if not isinstance(m, ToolResult)),
            sum(estimate_message(m) for m in history if isinstance(m, ToolResult)),
        )
        known = self.since_report(history)
        total = known if known is not None else round(sum(parts) * self._scale)
        system_part, tools_part, messages_part, results_part = _apportion(parts, total)
        return ContextSize(
            system_part, tools_part, messages_part, results_part, window=window, measured=known is not None
        )


_Parts = tuple[int, int, int, int]  # system, tools, messages, tool results: ContextSize's order


def _apportion(parts: _Parts, total: int) -> _Parts:
    """`parts` scaled to add up to `total` exactly."""
    whole = sum(parts)
    if whole <= 0:
        return (0, 0, total, 0)
    system, tools, messages, results = (part * total // whole for part in parts)
    messages += total - (system + tools + messages + results)  # the rounding remainder goes to the messages
    return (system, tools, messages, results)
