"""Resume instead of replay, on Gemini's Interactions API: the server keeps the conversation (`store=true`)
and each request names the last interaction (`previous_interaction_id`) and sends only what is new since it
(the function results, the next user message), through the official SDK's `client.aio.interactions`.

    model = ResumingGoogleModel("gemini-3-flash-preview")   # a GoogleModel that resumes where it can

As with `ResumingOpenAIModel`, the local history stays the source of truth: a request is resumed only when
its messages begin with exactly the messages of the previous request plus the answer the server gave, else
(after a compaction, a model switch, a retracted message, a new process) the whole history is sent and the
chain starts again; when the server has lost the interaction (it expired, or was deleted) the request is
sent again with the whole history. Stored interactions are kept by Google (see docs/sessions.md).

The Interactions API speaks in steps: `user_input`, `model_output`, `thought` (a summary and the signature
that must come back), `function_call` and `function_result`. sagent keeps a thought as a `ThinkingPart`
(provider "google"), its summary as the text and its signature as the signature, as `GoogleModel` does.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from sagent.events import ModelEvent, ResponseComplete, TextDelta, ThinkingDelta, ToolCallDelta
from sagent.providers.base import ProviderError, error_for_status
from sagent.providers.faults import MalformedResponseError, StreamCutError, classify_or_raise, idle_limited
from sagent.providers.google import DEFAULT_BASE_URL, PROVIDER, GoogleModel, _retry_after, _signature
from sagent.types import (
    AssistantMessage,
    ImagePart,
    Message,
    ModelRequest,
    PeerMessage,
    ServerToolPart,
    StopReason,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResult,
    Usage,
    UserMessage,
)

_LEVEL = {"max": "xhigh"}  # sagent's effort names that Gemini's thinking levels spell otherwise


def lost_interaction(error: ProviderError) -> bool:
    """Whether the server refused a request because it no longer has the interaction it names."""
    text = str(error).lower()
    return "previous_interaction" in text or ("interaction" in text and "not found" in text)


class ResumingGoogleModel(GoogleModel):
    """A `GoogleModel` on the Interactions API that sends only the new steps when the server holds the rest
    (see the module)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._covered: tuple[Message, ...] = ()  # the messages the last stored interaction holds, its answer last
        self._interaction_id: str | None = None
        self.resumed = 0  # requests sent as a continuation
        self.full = 0  # requests sent with the whole history

    def warm(self) -> None:
        self._client.warm(lambda client: client.aio.interactions)

    def interaction_params(self, request: ModelRequest) -> dict[str, Any]:
        """The `interactions.create` arguments: only the new steps after `previous_interaction_id` when the
        history continues the last stored interaction, else the whole history; stored and streamed either way."""
        params: dict[str, Any] = {"model": self._name.removeprefix("models/"), "store": True, "stream": True}
        messages = request.messages
        covered = len(self._covered)
        if self._interaction_id and covered and messages[:covered] == self._covered:
            params["previous_interaction_id"] = self._interaction_id
            messages = messages[covered:]
        params["input"] = convert_steps(messages)
        if request.system:
            params["system_instruction"] = request.system
        if request.tools:
            params["tools"] = [
                {"type": "function", "name": t.name, "description": t.description, "parameters": t.input_schema}
                for t in request.tools
            ]
        generation: dict[str, Any] = {}
        max_tokens = request.max_tokens or self._max_tokens
        if max_tokens:
            generation["max_output_tokens"] = max_tokens
        if request.temperature is not None:
            generation["temperature"] = request.temperature
        if request.effort:
            generation["thinking_level"] = _LEVEL.get(request.effort, request.effort)
        if request.effort or request.thinking_budget or self._thinks:
            generation["thinking_summaries"] = "auto"  # the API takes a level, not a token budget
        if generation:
            params["generation_config"] = generation
        if request.response_schema is not None:
            params["response_format"] = {
                "type": "text",
                "mime_type": "application/json",
                "schema": request.response_schema.schema,
            }
        return params

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        params = self.interaction_params(request)
        try:
            async for event in self._send(request, params):
                yield event
        except ProviderError as error:
            if "previous_interaction_id" not in params or not lost_interaction(error):
                raise
            self._interaction_id, self._covered = None, ()
            async for event in self._send(request, self.interaction_params(request)):  # the whole history again
                yield event

    async def _send(self, request: ModelRequest, params: dict[str, Any]) -> AsyncIterator[ModelEvent]:
        if "previous_interaction_id" in params:
            self.resumed += 1
        else:
            self.full += 1
        assembler = _Steps(self._name)
        events = None
        try:
            # The client is built (and its modules imported) before the clock starts.
            interactions = (await self._client.aget()).aio.interactions
            # google-genai uses its request timeout for the whole request: the idle limit is kept here.
            async with asyncio.timeout(self._idle_timeout):
                events = await interactions.create(**params)
            async for raw in idle_limited(events, self._idle_timeout):
                for event in assembler.feed(raw):
                    yield event
            message = assembler.finish()
        except ProviderError:
            raise
        except Exception as error:
            raise _map_error(error, self._base_url or DEFAULT_BASE_URL, self._idle_timeout) from error
        finally:
            close = getattr(events, "close", None)
            if close is not None:  # the stream's connection, now rather than when it is collected
                with contextlib.suppress(Exception):  # closing a broken connection may fail too
                    await close()
        self._interaction_id = assembler.interaction_id
        self._covered = (*request.messages, message)
        yield ResponseComplete(message)


def _map_error(error: Exception, endpoint: str, idle_timeout: float) -> ProviderError:
    """The typed error for an exception from the SDK's interactions client, or the HTTP stack under it."""
    status = getattr(error, "status_code", None)
    if isinstance(status, int):
        details = _Details(error)
        inner = details.details.get("error")
        message = inner.get("message") if isinstance(inner, dict) else None  # Google's own words, not the body
        return error_for_status(status, message or str(error), provider=PROVIDER, retry_after=_retry_after(details))
    return classify_or_raise(error, provider=PROVIDER, endpoint=endpoint.rstrip("/"), idle_timeout=idle_timeout)


class _Details:
    """An interactions error shaped as `_retry_after` reads a `generateContent` one (`response`, `details`)."""

    def __init__(self, error: Exception) -> None:
        self.response = getattr(error, "response", None)
        body = getattr(error, "body", None)
        self.details = body if isinstance(body, dict) else {}


@dataclass
class _Step:
    kind: str  # "thought", "model_output", "function_call", or a step sagent does not use
    text: list[str] = field(default_factory=list)
    signature: str | None = None
    call_id: str = ""
    name: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    argument_text: list[str] = field(default_factory=list)


_STATUS: dict[str, StopReason] = {"completed": "end_turn", "requires_action": "tool_use", "incomplete": "max_tokens"}


class _Steps:
    """Turns the SSE events of one streamed interaction into sagent's deltas and the final message."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.steps: dict[int, _Step] = {}
        self.calls = 0
        self.interaction_id: str | None = None
        self.status: str | None = None
        self.usage = Usage()

    def feed(self, event: Any) -> list[ModelEvent]:
        kind = getattr(event, "event_type", None)
        if kind in ("interaction.created", "interaction.completed"):
            interaction = event.interaction
            self.interaction_id = getattr(interaction, "id", None) or self.interaction_id
            if kind == "interaction.completed" and interaction.status != "requires_continuation":
                self.status = str(interaction.status)
                self.usage = _usage(getattr(interaction, "usage", None))
            return []
        if kind == "error":
            error = getattr(event, "error", None)
            raise MalformedResponseError(
                f"the interaction failed: {getattr(error, 'message', None) or error}", provider=PROVIDER
            )
        if kind == "step.start":
            return self._start(event.index, event.step)
        if kind == "step.delta":
            return self._delta(self.steps.get(event.index), event.delta)
        if kind == "step.stop":
            return self._stop(self.steps.get(event.index))
        return []

    def _start(self, index: int, step: Any) -> list[ModelEvent]:
        kind = str(getattr(step, "type", ""))
        new = self.steps[index] = _Step(kind)
        if kind == "function_call":
            new.call_id, new.name = step.id, step.name
            new.arguments = dict(step.arguments or {})
        elif kind == "thought":
            new.signature = _signature(getattr(step, "signature", None))
        return []

    def _delta(self, step: _Step | None, delta: Any) -> list[ModelEvent]:
        kind = getattr(delta, "type", None)
        if step is None:
            return []
        if kind == "text" and step.kind == "model_output":
            step.text.append(delta.text)
            return [TextDelta(delta.text)] if delta.text else []
        if kind == "thought_summary":
            text = getattr(getattr(delta, "content", None), "text", None) or ""
            step.text.append(text)
            return [ThinkingDelta(text)] if text else []
        if kind == "thought_signature":
            step.signature = _signature(getattr(delta, "signature", None)) or step.signature
        elif kind == "arguments_delta":
            step.argument_text.append(getattr(delta, "arguments", None) or "")
        return []

    def _stop(self, step: _Step | None) -> list[ModelEvent]:
        if step is None or step.kind != "function_call":
            return []
        if step.argument_text:
            try:
                arguments = json.loads("".join(step.argument_text))
            except ValueError as error:
                arguments = error
            if not isinstance(arguments, dict):  # a fresh response usually gets it right: retried
                raise MalformedResponseError(
                    f"the model wrote a malformed tool call ({step.name}: {arguments})", provider=PROVIDER
                )
            step.arguments = arguments
        call = ToolCallDelta(self.calls, step.call_id, step.name, json.dumps(step.arguments))
        self.calls += 1
        return [call]

    def finish(self) -> AssistantMessage:
        if self.status is None:
            raise StreamCutError("the stream ended before the interaction completed", provider=PROVIDER)
        if self.status == "failed":
            raise MalformedResponseError("the interaction failed", provider=PROVIDER)
        parts: list[Any] = []
        for _, step in sorted(self.steps.items()):
            if step.kind == "thought":
                parts.append(ThinkingPart("".join(step.text), step.signature, PROVIDER))
            elif step.kind == "model_output" and "".join(step.text):
                parts.append(TextPart("".join(step.text)))
            elif step.kind == "function_call":
                parts.append(ToolCall(step.call_id, step.name, step.arguments))
        stop = "tool_use" if any(isinstance(p, ToolCall) for p in parts) else _STATUS.get(self.status, "end_turn")
        return AssistantMessage(tuple(parts), PROVIDER, self.model, self.usage, stop, self.interaction_id)


def _usage(usage: Any) -> Usage:
    """sagent's counts from an interaction's: input includes the cached tokens, thoughts bill as output."""
    if usage is None:
        return Usage()
    cached = getattr(usage, "total_cached_tokens", None) or 0
    output = (getattr(usage, "total_output_tokens", None) or 0) + (getattr(usage, "total_thought_tokens", None) or 0)
    total_input = getattr(usage, "total_input_tokens", None) or 0
    return Usage(input_tokens=total_input - cached, output_tokens=output, cache_read_tokens=cached)


# ------------------------------------------------------------------------------------------- history


def _images(message: UserMessage | ToolResult) -> list[dict[str, Any]]:
    return [
        {"type": "image", "mime_type": p.media_type, "data": p.data}
        for p in message.content
        if isinstance(p, ImagePart)
    ]


def _user_steps(message: UserMessage | PeerMessage | ToolResult) -> list[dict[str, Any]]:
    if isinstance(message, PeerMessage):
        text = f"[message from {message.sender}]\n{message.text}"
        return [{"type": "user_input", "content": [{"type": "text", "text": text}]}]
    if isinstance(message, ToolResult):
        output = message.text or "(no output)"
        images = _images(message)
        result: Any = [{"type": "text", "text": output}, *images] if images else output
        step = {"type": "function_result", "call_id": message.call_id, "name": message.name, "result": result}
        return [{**step, "is_error": True} if message.is_error else step]
    content = [{"type": "text", "text": p.text} for p in message.content if isinstance(p, TextPart)]
    return [{"type": "user_input", "content": content + _images(message)}]


def _assistant_steps(message: AssistantMessage) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []

    def say(text: str) -> None:
        if steps and steps[-1]["type"] == "model_output":
            steps[-1]["content"].append({"type": "text", "text": text})
        else:
            steps.append({"type": "model_output", "content": [{"type": "text", "text": text}]})

    for part in message.content:
        if isinstance(part, ThinkingPart):
            if part.provider == PROVIDER:
                thought: dict[str, Any] = {"type": "thought"}
                if part.signature:
                    thought["signature"] = part.signature
                if part.text:
                    thought["summary"] = [{"type": "text", "text": part.text}]
                steps.append(thought)
            elif part.text:  # another provider's reasoning: Gemini cannot use it, so it becomes text
                say(f"<thinking>{part.text}</thinking>")
        elif isinstance(part, ServerToolPart):
            if part.note:
                say(part.note)
        elif isinstance(part, TextPart):
            if part.text:
                say(part.text)
        else:
            steps.append({"type": "function_call", "id": part.id, "name": part.name, "arguments": part.arguments})
    return steps or [{"type": "model_output", "content": [{"type": "text", "text": "(no content)"}]}]


def convert_steps(history: tuple[Message, ...]) -> list[dict[str, Any]]:
    """Interaction steps, as the JSON the API takes, for provider-neutral messages."""
    steps: list[dict[str, Any]] = []
    for message in history:
        steps += _assistant_steps(message) if isinstance(message, AssistantMessage) else _user_steps(message)
    return steps
