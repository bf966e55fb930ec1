"""A text tool protocol: tool calls for a model or server without native function calling.

`TextToolModel` wraps any `Model`. When a request offers tools, it sends none; the system prompt instead
describes each tool and one call format:

    <tool_call>
    {"name": "Bash", "arguments": {"command": "ls"}}
    </tool_call>

The model's text is parsed strictly (`parse_text_calls`): every block must hold one JSON object with exactly
a string `name` and an object `arguments`. A malformed block becomes a `ToolCall` whose `invalid_arguments`
says what is wrong, so the loop returns it to the model as an error and never runs it. Earlier calls and
their results are written back into the history as text in the same format, so the model sees its own
calls the way it was told to write them.

Small models also write calls in forms they learnt elsewhere; these are calls too (`parse_pseudo_calls`):
`functions.NAME:` followed by a JSON object (llama-cpp-python's function-calling format, its JSON perhaps
HTML-escaped), and a reply that is nothing but `{"name": ..., "arguments": {...}}`.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from typing import Any

from sagent.events import ModelEvent, ResponseComplete, ToolCallDelta
from sagent.providers.base import Model
from sagent.types import (
    AssistantContent,
    AssistantMessage,
    Message,
    ModelRequest,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResult,
    UserMessage,
)

OPEN = "<tool_call>"
CLOSE = "</tool_call>"
MALFORMED = "malformed_tool_call"
"""The name a call gets when its block names no tool: the loop answers it as an unknown tool."""

_BLOCK = re.compile(re.escape(OPEN) + r"(.*?)(?:" + re.escape(CLOSE) + r"|\Z)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class ParsedText:
    """What a response's text holds: the text outside call blocks, and the calls in order."""

    text: str
    calls: tuple[ToolCall, ...]


def protocol_prompt(request: ModelRequest) -> str:
    """The system prompt's addition that explains the call format and lists the request's tools."""
    lines = [
        "## Tools",
        "To use a tool, write a block exactly like this (one JSON object with `name` and `arguments`), then "
        "stop and wait for its result:",
        "",
        OPEN,
        '{"name": "TOOL_NAME", "arguments": {"ARGUMENT": "VALUE"}}',
        CLOSE,
        "",
        "You may write several blocks. Results come back in <tool_result> blocks. Without a block, your text "
        "is the final answer. The tools:",
    ]
    for tool in request.tools:
        schema = json.dumps(tool.input_schema.get("properties", {}), separators=(",", ":"))
        lines.append(f"- {tool.name}: {tool.description.strip().splitlines()[0] if tool.description else ''}")
        lines.append(f"  arguments: {schema}")
    return "\n".join(lines)


def render_call(call: ToolCall) -> str:
    """One call as the protocol writes it."""
    arguments = call.invalid_arguments if call.invalid_arguments is not None else json.dumps(call.arguments)
    return f'{OPEN}\n{{"name": {json.dumps(call.name)}, "arguments": {arguments}}}\n{CLOSE}'


def render_history(messages: tuple[Message, ...]) -> tuple[Message, ...]:
    """The history with tool calls and results written as protocol text (no native tool parts left)."""
    out: list[Message] = []
    for message in messages:
        if isinstance(message, AssistantMessage) and message.tool_calls:
            text = "\n".join([message.text, *(render_call(c) for c in message.tool_calls)]).strip()
            parts: tuple[AssistantContent, ...] = (
                *(p for p in message.content if isinstance(p, ThinkingPart)),
                TextPart(text),
            )
            out.append(replace(message, content=parts))
        elif isinstance(message, ToolResult):
            status = "error" if message.is_error else "ok"
            body = f'<tool_result id="{message.call_id}" status="{status}">\n{message.text}\n</tool_result>'
            out.append(UserMessage.of(body))
        else:
            out.append(message)
    return tuple(out)


_NAME = re.compile(r'"name"\s*:\s*"([A-Za-z0-9_.-]+)"')


def _bad(index: int, name: str, raw: str, why: str) -> ToolCall:
    """A call the loop answers with an error: under the tool's name when the text names one (so the error
    quotes what is wrong), else under `MALFORMED` (an unknown tool)."""
    found = _NAME.search(raw)
    name = name or (found.group(1) if found else MALFORMED)
    return ToolCall(f"text_call_{index}", name, {}, invalid_arguments=f"{raw.strip()} ({why})")


def parse_one(index: int, raw: str, closed: bool) -> ToolCall:
    """The call one block holds, or a malformed call that says why (never run by the loop)."""
    if not closed:
        return _bad(index, "", raw, f"the block has no {CLOSE}")
    try:
        value: Any = json.loads(raw)
    except json.JSONDecodeError as error:
        return _bad(index, "", raw, f"not JSON: {error.msg}")
    if not isinstance(value, dict):
        return _bad(index, "", raw, "the block must hold a JSON object")
    name = value.get("name")
    if not isinstance(name, str) or not name.strip():
        return _bad(index, "", raw, "no tool name")
    extra = sorted(set(value) - {"name", "arguments"})
    if extra:
        return _bad(index, name, raw, f"unexpected keys {', '.join(extra)}")
    arguments = value.get("arguments", {})
    if not isinstance(arguments, dict):
        return _bad(index, name, raw, "arguments must be a JSON object")
    return ToolCall(f"text_call_{index}", name.strip(), arguments)


_PSEUDO = re.compile(r"(?:^|(?<=\n))[ \t]*functions\.([A-Za-z0-9_-]+)[ \t]*:?\s*(?=\{)")
_BARE = re.compile(r'\A\s*\{\s*"name"\s*:')


def split_pseudo_calls(text: str) -> ParsedText:
    """The calls `text` writes as `functions.NAME:` + a JSON object, or as one bare `{"name", "arguments"}`
    object, and the text around them. A call whose JSON does not parse comes back malformed (never run)."""
    if "&" in text and _PSEUDO.search(text):
        text = html.unescape(text)  # written after a prompt whose template HTML-escaped it: `{&#34;path&#34;: ...}`
    if _BARE.match(text):
        found = parse_one(0, text.strip(), True)
        if found.invalid_arguments is None:
            return ParsedText("", (found,))
    decoder = json.JSONDecoder()
    calls: list[ToolCall] = []
    kept: list[str] = []
    position = 0
    for match in _PSEUDO.finditer(text):
        if match.start() < position:
            continue
        kept.append(text[position : match.start()])
        name, start = match.group(1), match.end()
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError as error:
            end = text.find("\n\n", start)
            end = len(text) if end < 0 else end
            calls.append(_bad(len(calls), name, text[start:end], f"not JSON: {error.msg}"))
        else:
            if isinstance(value, dict):
                calls.append(ToolCall(f"text_call_{len(calls)}", name, value))
            else:
                calls.append(_bad(len(calls), name, text[start:end], "arguments must be a JSON object"))
        position = end
    kept.append(text[position:])
    return ParsedText("".join(kept).strip(), tuple(calls))


def parse_pseudo_calls(text: str) -> tuple[ToolCall, ...]:
    """Only the calls of `split_pseudo_calls`."""
    return split_pseudo_calls(text).calls


def parse_text_calls(text: str) -> ParsedText:
    """Split a response's text into what it says and the tool calls its blocks hold, strictly; without any
    block, the calls it writes in another form (`split_pseudo_calls`)."""
    if OPEN not in text:
        return split_pseudo_calls(text)
    calls: list[ToolCall] = []
    kept: list[str] = []
    position = 0
    for number, match in enumerate(_BLOCK.finditer(text)):
        kept.append(text[position : match.start()])
        position = match.end()
        closed = match.group(0).endswith(CLOSE)
        calls.append(parse_one(number, match.group(1).strip(), closed))
    kept.append(text[position:])
    return ParsedText("".join(kept).strip(), tuple(calls))


class TextToolModel(Model):
    """`inner` with tools through the text protocol: what a request's tools become and how calls come back."""

    def __init__(self, inner: Model) -> None:
        self.inner = inner

    @property
    def provider(self) -> str:
        return self.inner.provider

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def context_window(self) -> int | None:
        window: int | None = getattr(self.inner, "context_window", None)
        return window

    def translate(self, request: ModelRequest) -> ModelRequest:
        """The request the inner model gets: no tools, the protocol in the system prompt, text history."""
        if not request.tools:
            return replace(request, messages=render_history(request.messages))
        system = f"{request.system}\n\n{protocol_prompt(request)}".strip()
        return replace(request, system=system, tools=(), messages=render_history(request.messages))

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        async for event in self.inner.stream(self.translate(request)):
            if not isinstance(event, ResponseComplete):
                yield event
                continue
            message = event.message
            parsed = parse_text_calls(message.text) if request.tools else ParsedText(message.text, ())
            for index, call in enumerate(parsed.calls):
                yield ToolCallDelta(index, call.id, call.name, json.dumps(call.arguments))
            parts: list[AssistantContent] = [p for p in message.content if isinstance(p, ThinkingPart)]
            if parsed.text:
                parts.append(TextPart(parsed.text))
            parts += parsed.calls
            stop = "tool_use" if parsed.calls else message.stop_reason
            yield ResponseComplete(replace(message, content=tuple(parts), stop_reason=stop))

    async def aclose(self) -> None:
        await self.inner.aclose()
