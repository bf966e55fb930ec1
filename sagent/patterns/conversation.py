"""The conversation a Handoff passes from agent to agent, as turns of text: who spoke and what.

An agent's part of it is read from its history (`turns_of`): what it said, the tools it called with their
arguments, and their results, each cut to `TOOL_RESULT_CHARS`. The same reading serves an agent in this
process and one on a `sagent serve` process (which sends its turns back with its answer).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from sagent.types import AssistantMessage, Message, ToolResult

TOOL_RESULT_CHARS = 2000  # of one tool result, in a conversation handed to the next agent


@dataclass(frozen=True, slots=True)
class Turn:
    """One entry of a conversation a Handoff passes on: who spoke ("user", an agent's label, or a tool's
    result as "<Tool> result") and what."""

    speaker: str
    text: str


def turns_of(label: str, history: Sequence[Message], *, leave_out: str | None = None) -> list[Turn]:
    """What the agent `label` added to its conversation after its prompt: its text, its tool calls and
    their results (cut to `TOOL_RESULT_CHARS`), leaving out the calls of the tool `leave_out`."""
    turns: list[Turn] = []
    for message in history[1:]:
        if isinstance(message, AssistantMessage):
            if message.text.strip():
                turns.append(Turn(label, message.text.strip()))
            for call in message.tool_calls:
                if call.name != leave_out:
                    turns.append(Turn(label, f"[called {call.name} {json.dumps(call.arguments, ensure_ascii=False)}]"))
        elif isinstance(message, ToolResult) and message.name != leave_out:
            text = message.text
            if len(text) > TOOL_RESULT_CHARS:
                text = text[:TOOL_RESULT_CHARS] + f"\n[... {len(text) - TOOL_RESULT_CHARS} more characters]"
            turns.append(Turn(f"{message.name} result", text))
    return turns


def last_within(turns: Sequence[Turn], limit: int) -> list[Turn]:
    """The last of `turns` whose texts hold at most `limit` characters together (what fits a reply)."""
    kept: list[Turn] = []
    size = 0
    for turn in reversed(turns):
        size += len(turn.speaker) + len(turn.text)
        if size > limit:
            break
        kept.append(turn)
    return kept[::-1]
