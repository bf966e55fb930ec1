"""The conversation as Gemini's `streamGenerateContent` takes it: each message's parts, consecutive
user-side messages merged into one turn, and the JSON of it all as google-genai encodes a request, built a
request at a time (`HistoryCache`)."""

from __future__ import annotations

import base64
import json
import operator
from typing import Any

from sagent.types import (
    AssistantMessage,
    ImagePart,
    Message,
    PeerMessage,
    ServerToolPart,
    TextPart,
    ThinkingPart,
    ToolResult,
    UserMessage,
)

PROVIDER = "google"
ENCODER = json.JSONEncoder()
"""google-genai's encoding of a request body (`json.dumps` with its defaults: ASCII, `, ` and `: `)."""


# Parts are built in the JSON the SDK would send for them (as `google.genai` encodes bytes: URL-safe base64).


def _wire_bytes(standard_base64: str) -> str:
    return base64.urlsafe_b64encode(base64.b64decode(standard_base64)).decode("ascii")


def _parts_of_user(message: UserMessage | PeerMessage | ToolResult) -> list[dict[str, Any]]:
    if isinstance(message, PeerMessage):
        return [{"text": f"[message from {message.sender}]\n{message.text}"}]
    images: list[dict[str, Any]] = [
        {"inlineData": {"mime_type": p.media_type, "data": _wire_bytes(p.data)}}
        for p in message.content
        if isinstance(p, ImagePart)
    ]
    if isinstance(message, ToolResult):
        key = "error" if message.is_error else "output"
        response = {"id": message.call_id, "name": message.name, "response": {key: message.text or "(no output)"}}
        return [{"functionResponse": response}, *images]
    texts: list[dict[str, Any]] = [{"text": p.text} for p in message.content if isinstance(p, TextPart)]
    return texts + images


def _signed(part: dict[str, Any], signature: str | None) -> dict[str, Any]:
    if signature is not None:
        part["thoughtSignature"] = signature
    return part


def _parts_of_assistant(message: AssistantMessage) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    pending: str | None = None  # a signature waiting for the part it belongs to
    for part in message.content:
        if isinstance(part, ThinkingPart):
            if part.provider == PROVIDER and not part.text and part.signature:
                pending = _wire_bytes(part.signature)
            elif part.provider == PROVIDER:
                signature = _wire_bytes(part.signature) if part.signature else None
                out.append(_signed({"text": part.text, "thought": True}, signature))
            elif part.text:  # another provider's reasoning: Gemini cannot use it, so it becomes text
                out.append({"text": f"<thinking>{part.text}</thinking>"})
            continue
        if isinstance(part, ServerToolPart):  # another provider's server-side tool: what it said, as text
            if part.note:
                out.append({"text": part.note})
            continue
        if isinstance(part, TextPart):
            if not part.text:
                continue
            new = _signed({"text": part.text}, pending)
        else:  # a ToolCall: thinking went on above
            new = _signed({"functionCall": {"id": part.id, "name": part.name, "args": part.arguments}}, pending)
        out.append(new)
        pending = None
    if pending is not None:  # a signature that came last belongs with the last part
        if out and "thoughtSignature" not in out[-1]:
            out[-1]["thoughtSignature"] = pending
        else:
            out.append({"text": "", "thoughtSignature": pending})
    return out or [{"text": "(no content)"}]


def _parts(message: Message) -> tuple[str, list[dict[str, Any]]]:
    if isinstance(message, AssistantMessage):
        return "model", _parts_of_assistant(message)
    return "user", _parts_of_user(message)


class HistoryCache:
    """Each message's converted parts, kept while the message is in the history: messages are frozen, so a
    round converts only the ones it added. A history that begins with the last one's messages (the same
    objects) also keeps the last contents, merged, and only adds to them."""

    def __init__(self) -> None:
        self._parts: dict[int, tuple[Message, tuple[str, list[dict[str, Any]]]]] = {}
        self._messages: tuple[Message, ...] = ()
        self._contents: list[dict[str, Any]] = []
        # How many of the contents (never the last, which the next message may extend) have their JSON in
        # the text, and it, comma-separated: a content before the last is never changed again.
        self._settled: tuple[int, str] = (0, "")

    def convert(self, history: tuple[Message, ...]) -> list[dict[str, Any]]:
        """`convert_history(history)`, from the parts converted before where the same message comes again."""
        known = len(self._messages)
        if len(history) >= known and all(map(operator.is_, history, self._messages)):
            contents = list(self._contents)  # a new list: the last one went out with the last request
            for message in history[known:]:
                _merge(contents, *_parts(message), copy_last=True)
        else:
            kept: dict[int, tuple[Message, tuple[str, list[dict[str, Any]]]]] = {}
            converted = []
            for message in history:
                hit = self._parts.get(id(message))
                entry = hit if hit is not None and hit[0] is message else (message, _parts(message))
                kept[id(message)] = entry
                converted.append(entry[1])
            self._parts = kept
            contents = _contents(converted)
            self._settled = (0, "")
        self._messages, self._contents = history, contents
        return contents

    def json(self, contents: list[dict[str, Any]]) -> str:
        """`ENCODER.encode(contents)`: when `contents` is the last `convert` answer, every content but the
        last is taken from the JSON encoded in earlier requests."""
        if contents is not self._contents or not contents:
            return ENCODER.encode(contents)
        count, text = self._settled
        for content in contents[count : len(contents) - 1]:
            text = f"{text}, {ENCODER.encode(content)}" if text else ENCODER.encode(content)
        self._settled = (max(count, len(contents) - 1), text)
        last = ENCODER.encode(contents[-1])
        return f"[{text}, {last}]" if text else f"[{last}]"


def encode_body(body: dict[str, Any], contents: str) -> bytes:
    """`body` as google-genai sends it (`json.dumps(body).encode()`), with `contents` the JSON of its
    `contents`."""
    items = [f"{ENCODER.encode(k)}: {contents if k == 'contents' else ENCODER.encode(v)}" for k, v in body.items()]
    return ("{" + ", ".join(items) + "}").encode("utf-8")


def _merge(contents: list[dict[str, Any]], role: str, parts: list[dict[str, Any]], *, copy_last: bool) -> None:
    """Add one message's parts to `contents`: to the last turn when it is the same role's (as a new turn
    dict with `copy_last`, the old one being part of a request already made)."""
    if not parts:
        return
    if contents and contents[-1]["role"] == role:
        if copy_last:
            contents[-1] = {"role": role, "parts": [*contents[-1]["parts"], *parts]}
        else:
            contents[-1]["parts"].extend(parts)
    else:
        contents.append({"role": role, "parts": list(parts)})  # a copy: the parts stay as they were


def _contents(converted: list[tuple[str, list[dict[str, Any]]]]) -> list[dict[str, Any]]:
    contents: list[dict[str, Any]] = []
    for role, parts in converted:
        _merge(contents, role, parts, copy_last=False)
    return contents


def convert_history(history: tuple[Message, ...]) -> list[dict[str, Any]]:
    """Gemini contents, as the JSON the API takes: consecutive user-side messages (tool results, user and
    peer text) merge into one user turn, so each turn's function responses answer its calls together."""
    return _contents([_parts(message) for message in history])
