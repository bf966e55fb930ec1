"""From sagent's history to a HuggingFace chat template's prompt, and from generated text back to events.

A tokenizer's chat template is the model's own prompt format. What it supports is read from its source:

- tools: a template that reads `tools` gets the request's tools as JSON schemas
  (`apply_chat_template(tools=...)`), the history's calls as `tool_calls` and results as `tool` messages;
  the model's calls are read with the tokenizer's `response_schema` when it has one
  (`tokenizer.parse_response`), else as `<tool_call>{"name": ..., "arguments": ...}</tool_call>` blocks,
  the format those templates teach (Qwen, Hermes, SmolLM3). A template without tools gets sagent's text
  protocol (`sagent.providers.text_tools`) in the system prompt, read back the same strict way.
- thinking: a template that reads `enable_thinking` gets it set: on when the request asks for thinking (a
  budget or an effort), off otherwise (`--effort none`). Text between `<think>` and `</think>` streams as
  thinking.

Either way a malformed call becomes a `ToolCall` with `invalid_arguments`: the loop answers it with an
error and never runs it.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from typing import Any

from sagent.events import ModelEvent, TextDelta, ThinkingDelta
from sagent.providers.text_tools import parse_text_calls, protocol_prompt, render_history
from sagent.types import (
    AssistantMessage,
    Message,
    ModelRequest,
    PeerMessage,
    ToolCall,
    ToolResult,
    UserMessage,
)

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"


@dataclass(frozen=True, slots=True)
class TemplateFeatures:
    """What a tokenizer's chat template can take, read from its source."""

    tools: bool
    """It renders a `tools` list: calls go through the template, not the text protocol."""
    thinking: bool
    """It reads `enable_thinking`."""


def template_features(tokenizer: Any) -> TemplateFeatures:
    """The features of `tokenizer`'s chat template (none when it has no template)."""
    source = getattr(tokenizer, "chat_template", None)
    if isinstance(source, dict):  # named templates: the default one, else all of them
        source = source.get("default") or " ".join(str(v) for v in source.values())
    text = source if isinstance(source, str) else ""
    return TemplateFeatures(tools="tools" in text, thinking="enable_thinking" in text)


def wants_thinking(request: ModelRequest) -> bool:
    """Whether the request asks the model to think: a thinking budget or an effort (`--effort none`: no)."""
    return bool(request.thinking_budget) or request.effort is not None


def tool_schema(request: ModelRequest) -> list[dict[str, Any]]:
    """The request's tools as the JSON schemas chat templates take."""
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.input_schema},
        }
        for t in request.tools
    ]


def chat_messages(system: str, history: tuple[Message, ...]) -> list[dict[str, Any]]:
    """The history as chat-template messages: calls as `tool_calls` (arguments as objects, as templates
    expect), results as `tool` messages; images are named, as the model reads text only."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in history:
        if isinstance(message, AssistantMessage):
            entry: dict[str, Any] = {"role": "assistant", "content": message.text}
            if message.tool_calls:
                entry["tool_calls"] = [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                    for c in message.tool_calls
                ]
            out.append(entry)
        elif isinstance(message, ToolResult):
            body = message.text or "(no output)"
            out.append({"role": "tool", "tool_call_id": message.call_id, "name": message.name, "content": body})
        elif isinstance(message, PeerMessage):
            out.append({"role": "user", "content": f"[message from {message.sender}]\n{message.text}"})
        else:
            out.append({"role": "user", "content": _user_text(message)})
    return out


def _user_text(message: UserMessage) -> str:
    images = sum(1 for p in message.content if getattr(p, "type", "") == "image")
    note = f"\n[{images} image(s) left out: this model reads text only]" if images else ""
    return message.text + note


def render_prompt(tokenizer: Any, request: ModelRequest) -> str:
    """The prompt text for `request`, through the tokenizer's chat template."""
    features = template_features(tokenizer)
    system, history = request.system, request.messages
    options: dict[str, Any] = {}
    if request.tools and features.tools:
        options["tools"] = tool_schema(request)
    elif request.tools:
        system = f"{system}\n\n{protocol_prompt(request)}".strip()
    if not features.tools:
        history = render_history(history)  # calls and results as protocol text
    if features.thinking:
        options["enable_thinking"] = wants_thinking(request)
    prompt = tokenizer.apply_chat_template(
        chat_messages(system, history), tokenize=False, add_generation_prompt=True, **options
    )
    return str(prompt)


def opens_in_thinking(prompt: str) -> bool:
    """Whether the prompt leaves the model inside a thinking block (a template that writes `<think>` itself)."""
    tail = prompt.rstrip()
    return tail.endswith(THINK_OPEN)


class ThinkSplitter:
    """Streams generated text as text and thinking deltas, splitting on `<think>`/`</think>` even when a tag
    arrives in pieces."""

    def __init__(self, thinking: bool = False) -> None:
        self.thinking = thinking
        self._held = ""

    def feed(self, chunk: str) -> list[ModelEvent]:
        """The events `chunk` completes; a possible tag's beginning is held back until it is known."""
        text = self._held + chunk
        self._held = ""
        events: list[ModelEvent] = []
        while text:
            tag = THINK_CLOSE if self.thinking else THINK_OPEN
            at = text.find(tag)
            if at >= 0:
                self._emit(events, text[:at])
                self.thinking = not self.thinking
                text = text[at + len(tag) :]
                continue
            keep = next((n for n in range(len(tag) - 1, 0, -1) if text.endswith(tag[:n])), 0)
            self._emit(events, text[: len(text) - keep])
            self._held = text[len(text) - keep :]
            break
        return events

    def finish(self) -> list[ModelEvent]:
        """What was held back, at the end of the stream."""
        events: list[ModelEvent] = []
        self._emit(events, self._held)
        self._held = ""
        return events

    def _emit(self, events: list[ModelEvent], text: str) -> None:
        if text:
            events.append(ThinkingDelta(text) if self.thinking else TextDelta(text))


def split_thinking(text: str, thinking: bool = False) -> tuple[str, str]:
    """The thinking and the answer in a whole generated text (as `ThinkSplitter` streamed them)."""
    splitter = ThinkSplitter(thinking)
    events = splitter.feed(text) + splitter.finish()
    thought = "".join(e.text for e in events if isinstance(e, ThinkingDelta))
    answer = "".join(e.text for e in events if isinstance(e, TextDelta))
    return thought.strip(), answer.strip()


def parse_calls(tokenizer: Any, answer: str, native: bool) -> tuple[str, tuple[ToolCall, ...]]:
    """The answer's text and its tool calls: through the tokenizer's `response_schema` when it has one and
    the template took the tools, else from `<tool_call>` blocks, strictly."""
    schema = getattr(tokenizer, "response_schema", None) if native else None
    if schema:
        try:
            parsed = tokenizer.parse_response(answer)
        except Exception:  # a response the schema does not match: read the blocks, strictly, instead
            parsed = None
        if isinstance(parsed, dict):
            calls = tuple(_schema_call(i, c) for i, c in enumerate(parsed.get("tool_calls") or ()))
            return str(parsed.get("content") or "").strip(), calls
    found = parse_text_calls(answer)
    return found.text, found.calls


def _schema_call(index: int, raw: Any) -> ToolCall:
    """One call from `parse_response` (`{"type": "function", "function": {"name", "arguments"}}` or flat)."""
    function = raw.get("function", raw) if isinstance(raw, dict) else {}
    name = function.get("name") if isinstance(function, dict) else None
    arguments = function.get("arguments", {}) if isinstance(function, dict) else None
    if isinstance(arguments, str):
        with contextlib.suppress(json.JSONDecodeError):
            arguments = json.loads(arguments)
    if not isinstance(name, str) or not name or not isinstance(arguments, dict):
        shown = json.dumps(raw, default=str)
        return ToolCall(f"hf_call_{index}", name or "malformed_tool_call", {}, invalid_arguments=shown)
    return ToolCall(f"hf_call_{index}", name, arguments)
