"""The whole stream of each model response as `stream_event` records (`--include-partial-messages`), in the
order and shapes of the Anthropic Messages stream that Claude Code writes, whichever provider sagent streams
from: `message_start`; for each content block `content_block_start`, its deltas and `content_block_stop`;
then `message_delta` (the stop reason and output tokens) and `message_stop`, before the `assistant` record.

The Claude Agent SDKs hand these to programs as they come, and their streaming guide reads them by
`event.type`: a tool call is seen starting from its `content_block_start`, text from the deltas. sagent's
events carry only the deltas; `MessageStream` adds the rest around them, one response at a time.
"""

from __future__ import annotations

import copy
from typing import Any

from sagent.cli.records import stream_record
from sagent.events import ErrorEvent, Event, Result, Retrying, TextDelta, ThinkingDelta, ToolCallDelta, TurnFinished

_EMPTY_BLOCKS: dict[str, dict[str, Any]] = {
    "text": {"type": "text", "text": ""},
    "thinking": {"type": "thinking", "thinking": "", "signature": ""},
}


class MessageStream:
    """Follows one agent's responses and gives the stream records to write around each event's own."""

    def __init__(self) -> None:
        self._open = False  # a message_start was written and its message_stop not yet
        self._index = -1  # the index of the latest content block of the open message
        self._block: tuple[str, int] | None = None  # the open block: its kind and, for a tool call, its index

    def around(self, event: Event, record: dict[str, Any] | None, model: str, session_id: str) -> list[dict[str, Any]]:
        """The records to write for `event`, in order: `record` (what `event_record` made of it, or None)
        with the stream records it needs before it, and its own `index` when it is a delta."""
        own = [record] if record is not None else []
        match event:
            case TextDelta() | ThinkingDelta() | ToolCallDelta() if record is not None:
                events = self._opening(model) + self._block_for(event)
                indexed = {**record, "event": {**record["event"], "index": self._index}}
                return [*(stream_record(e, session_id) for e in events), indexed]
            case TurnFinished(message=message) if self._open:
                closing = self._closing()
                closing.append(
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": message.stop_reason, "stop_sequence": None},
                        "usage": {"output_tokens": message.usage.output_tokens},
                    }
                )
                closing.append({"type": "message_stop"})
                self._open = False
                return [*(stream_record(e, session_id) for e in closing), *own]
            case Retrying() | ErrorEvent() | Result():
                self._open, self._block = False, None  # the response that streamed is over: a retry starts anew
        return own

    def _opening(self, model: str) -> list[dict[str, Any]]:
        if self._open:
            return []
        self._open, self._index, self._block = True, -1, None
        message: dict[str, Any] = {
            "id": None,  # the provider's id comes with the assistant record, once the response is whole
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 0, "output_tokens": 0},
        }
        return [{"type": "message_start", "message": message}]

    def _block_for(self, event: TextDelta | ThinkingDelta | ToolCallDelta) -> list[dict[str, Any]]:
        """The stop of the open block and the start of a new one, when `event` begins another block."""
        key = ("tool_use", event.index) if isinstance(event, ToolCallDelta) else (event.type.removesuffix("_delta"), 0)
        if key == self._block:
            return []
        events = self._closing()
        self._block = key
        self._index += 1
        if isinstance(event, ToolCallDelta):
            block: dict[str, Any] = {"type": "tool_use", "id": event.id, "name": event.name, "input": {}}
        else:
            block = copy.deepcopy(_EMPTY_BLOCKS[key[0]])
        events.append({"type": "content_block_start", "index": self._index, "content_block": block})
        return events

    def _closing(self) -> list[dict[str, Any]]:
        if self._block is None:
            return []
        self._block = None
        return [{"type": "content_block_stop", "index": self._index}]
