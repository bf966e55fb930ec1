"""Compaction: the model writes a summary of the conversation that replaces it, keeping the thread."""

from __future__ import annotations

from dataclasses import replace

from sagent.types import Message, ModelRequest, UserMessage

COMPACT_PREFIX = "[This conversation was compacted. A summary of everything before this point:]"
COMPACT_INSTRUCTION = (
    "Stop working on the task for a moment and summarise this conversation so far, so that it can continue "
    "from your summary alone. Do not call tools. Keep: the user's goal and every instruction or preference "
    "they gave; decisions made and why; files read, created or changed, with what matters in each; commands "
    "run and their results where they matter; errors met and how they were solved; what is done; and what "
    "remains, in order, with the next step first. Quote exact names, paths, values and error messages."
)


def summary_request(request: ModelRequest, history: list[Message], focus: str | None) -> ModelRequest:
    """`request` (the agent's usual one) asking for a summary of `history` instead of the next step."""
    ask = COMPACT_INSTRUCTION + (f"\n\nGive most room to: {focus}" if focus else "")
    return replace(request, messages=(*history, UserMessage.of(ask)))


def summary_message(text: str) -> UserMessage:
    """The message that stands for the whole history after compaction."""
    return UserMessage.of(f"{COMPACT_PREFIX}\n\n{text}")
