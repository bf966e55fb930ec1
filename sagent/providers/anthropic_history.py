"""The conversation as Anthropic's Messages API takes it: each message's content blocks, consecutive
user-side messages merged into one turn, cache breakpoints on the last two user turns, and the JSON of it
all, encoded once per message for the whole session (`HistoryCache`)."""

from __future__ import annotations

import hashlib
import json
import operator
import re
from typing import Any

from sagent.providers.message_cache import ENCODER
from sagent.types import (
    AssistantMessage,
    ImagePart,
    Message,
    PeerMessage,
    ServerToolPart,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResult,
    UserMessage,
)

PROVIDER = "anthropic"
CACHE = {"type": "ephemeral"}
_VALID_ID = re.compile(r"^[a-zA-Z0-9_-]+$")


def tool_id(call_id: str) -> str:
    """An id Anthropic accepts; ids from other providers are mapped the same way every time."""
    if _VALID_ID.match(call_id):
        return call_id
    return "toolu_" + hashlib.sha256(call_id.encode()).hexdigest()[:24]


# ------------------------------------------------------------------------------------------- history


def _user_blocks(message: UserMessage | PeerMessage | ToolResult) -> list[dict[str, Any]]:
    if isinstance(message, PeerMessage):
        return [{"type": "text", "text": f"[message from {message.sender}]\n{message.text}"}]
    content = [_content_block(p) for p in message.content]
    if isinstance(message, ToolResult):
        # A result of one text goes as a string, and `is_error` only when it is one (false is the default):
        # the same result in fewer bytes, which every later request of the session carries again.
        result: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_id(message.call_id)}
        if not content:
            result["content"] = "(no output)"
        elif len(content) == 1 and content[0]["type"] == "text":
            result["content"] = content[0]["text"]
        else:
            result["content"] = content
        if message.is_error:
            result["is_error"] = True
        return [result]
    return content


def _content_block(part: TextPart | ImagePart) -> dict[str, Any]:
    if isinstance(part, ImagePart):
        return {
            "type": "image",
            "source": {"type": "base64", "media_type": part.media_type, "data": part.data},
        }
    return {"type": "text", "text": part.text or " "}


def _assistant_blocks(message: AssistantMessage, server_tools: bool) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, ServerToolPart):
            # Anthropic's own blocks go back as they came while the request offers the tool; otherwise
            # (or from another provider) what the tool said is plain text.
            if server_tools and part.provider == PROVIDER:
                blocks.extend(json.loads(part.blocks))
            elif part.note:
                blocks.append({"type": "text", "text": part.note})
        elif isinstance(part, ThinkingPart):
            if part.provider == PROVIDER and part.redacted:
                blocks.append({"type": "redacted_thinking", "data": part.signature})
            elif part.provider == PROVIDER and part.signature:
                blocks.append({"type": "thinking", "thinking": part.text, "signature": part.signature})
            elif part.text:  # another provider's reasoning: Anthropic cannot verify it, so it becomes text
                blocks.append({"type": "text", "text": f"<thinking>{part.text}</thinking>"})
        elif isinstance(part, TextPart):
            if part.text:
                blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, ToolCall):
            blocks.append({"type": "tool_use", "id": tool_id(part.id), "name": part.name, "input": part.arguments})
    return blocks or [{"type": "text", "text": "(no content)"}]


def convert_history(history: tuple[Message, ...], *, server_tools: bool = False) -> list[dict[str, Any]]:
    """Messages API turns: consecutive user-side messages (tool results, user and peer text) merge into one
    user turn, as the API requires alternation. The last two user turns get cache breakpoints. With
    `server_tools` (the request offers the advisor tool), earlier consultations go back as their blocks."""
    return _turns([(_role(m), _blocks(m, server_tools)) for m in history])


def _role(message: Message) -> str:
    return "assistant" if isinstance(message, AssistantMessage) else "user"


def _blocks(message: Message, server_tools: bool) -> list[dict[str, Any]]:
    if isinstance(message, AssistantMessage):
        return _assistant_blocks(message, server_tools)
    return _user_blocks(message)


def _turns(converted: list[tuple[str, list[dict[str, Any]]]]) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = []
    for role, blocks in converted:
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": list(blocks)})
    user_turns = [t for t in turns if t["role"] == "user"]
    for turn in user_turns[-2:]:
        turn["content"][-1] = {**turn["content"][-1], "cache_control": CACHE}
    return turns


class HistoryCache:
    """The JSON of `convert_history(history)`, built a request at a time: a history that begins with the
    last one's messages (the same objects, or equal ones) has only its new messages converted and encoded,
    and the turns that can no longer change (all but the last turn and the last two user turns, which carry
    the cache breakpoints) are kept as one encoded prefix. Any other history (compacted, rewound, a tool
    result cleared, the advisor offered or not) is converted again from the start."""

    def __init__(self) -> None:
        self._start(False)

    def _start(self, server_tools: bool) -> None:
        self._messages: tuple[Message, ...] = ()
        self._server_tools = server_tools
        self._blocks: list[str] = []  # each block's JSON, in order
        self._dicts: list[dict[str, Any]] = []  # the blocks themselves
        self._marked: dict[int, str] = {}  # a block's JSON with the cache breakpoint, made when first needed
        self._turns: list[tuple[str, int, int]] = []  # (role, first block, end block) of each turn
        self._users: list[int] = []  # the indexes of the user turns
        self._settled = 0  # how many turns are in `_prefix`
        self._prefix = ""  # their JSON, comma-separated

    def json(self, history: tuple[Message, ...], *, server_tools: bool = False) -> str:
        """`ENCODER.encode(convert_history(history, server_tools=server_tools))`."""
        known = len(self._messages)
        same = len(history) >= known and all(map(operator.is_, history, self._messages))
        if server_tools != self._server_tools or not same:
            self._start(server_tools)
            known = 0
        for message in history[known:]:
            blocks = _blocks(message, server_tools)
            self._add(_role(message), [ENCODER.encode(block) for block in blocks])
            self._dicts += blocks
        self._messages = history
        # Turns before the last turn and before the second-to-last user turn are settled for good.
        edge = min(len(self._turns) - 1, *(self._users[-2:] or [len(self._turns)]))
        while self._settled < edge:
            text = self._turn(self._settled, marked=False)
            self._prefix = f"{self._prefix},{text}" if self._prefix else text
            self._settled += 1
        marked = set(self._users[-2:])
        tail = [self._turn(n, marked=n in marked) for n in range(self._settled, len(self._turns))]
        return "[" + ",".join(([self._prefix] if self._prefix else []) + tail) + "]"

    def _add(self, role: str, blocks: list[str]) -> None:
        start = len(self._blocks)
        self._blocks += blocks
        if self._turns and self._turns[-1][0] == role:
            self._turns[-1] = (role, self._turns[-1][1], len(self._blocks))
        else:
            if role == "user":
                self._users.append(len(self._turns))
            self._turns.append((role, start, len(self._blocks)))

    def _turn(self, n: int, *, marked: bool) -> str:
        role, start, end = self._turns[n]
        blocks = self._blocks[start:end]
        if marked and blocks:  # the cache breakpoint, on the turn's last block
            last = end - 1
            if last not in self._marked:
                self._marked[last] = ENCODER.encode({**self._dicts[last], "cache_control": CACHE})
            blocks[-1] = self._marked[last]
        return '{"role":' + ENCODER.encode(role) + ',"content":[' + ",".join(blocks) + "]}"
