"""OpenAI through the official `openai` SDK's Responses API (imported lazily).

Requests are stateless (`store=false`): the whole history is sent each turn, and reasoning comes back as
encrypted items (`include=["reasoning.encrypted_content"]`) that are sent again on the next turn, so the
model keeps its chain of thought across tool rounds without OpenAI storing anything. `prompt_cache_key`
is the session id, which keeps one session's requests on the same prompt cache.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from sagent.events import ModelEvent, ResponseComplete, TextDelta, ThinkingDelta, ToolCallDelta
from sagent.providers.base import Model, ProviderError, error_for_status
from sagent.providers.catalog import lookup
from sagent.providers.faults import DEFAULT_IDLE_TIMEOUT, StreamCutError, endpoint_of
from sagent.providers.message_cache import ItemCache, encode_body
from sagent.providers.openai_compat import (
    call_id,
    http_client,
    map_openai_error,
    openai_timeout,
    parse_tool_call,
)
from sagent.providers.warm import SdkClient
from sagent.redaction import remember_secret
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
)

PROVIDER = "openai"

# Responses `error.code` values whose meaning the HTTP status of a 200 stream does not carry.
_STATUS_OF_CODE = {
    "rate_limit_exceeded": 429,
    "server_error": 500,
    "context_length_exceeded": 400,
    "invalid_prompt": 400,
}


class OpenAIModel(Model):
    def __init__(
        self,
        model: str = "gpt-5.4",
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_tokens: int | None = None,
        timeout: float = 600.0,
        reasoning: bool | None = None,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
    ) -> None:
        """`timeout` bounds each request; `idle_timeout` is how long a stream may send nothing before it is
        abandoned and the request sent again."""
        self._name = model
        self._api_key = api_key
        remember_secret(self._api_key)
        self._base_url = base_url  # None: the SDK reads OPENAI_BASE_URL, then its default
        self._max_tokens = max_tokens
        self._timeout = timeout
        self._idle_timeout = idle_timeout
        info = lookup(model)
        # Reasoning parameters are refused by models that do not reason; unknown models get them only on request.
        self._reasoning = reasoning if reasoning is not None else bool(info and info.thinking)
        self._client: SdkClient[Any] = SdkClient(self._build_client)
        self._history = ItemCache(message_items)

    @property
    def provider(self) -> str:
        return PROVIDER

    @property
    def name(self) -> str:
        return self._name

    @property
    def structured_output(self) -> bool:
        return True  # the Responses API's `json_schema` text format, strict

    def _sdk(self) -> Any:
        return self._client.get()

    def _build_client(self) -> Any:
        import openai

        timeout = openai_timeout(self._timeout, self._idle_timeout)
        return openai.AsyncOpenAI(
            api_key=self._api_key,
            base_url=self._base_url,
            max_retries=0,
            timeout=timeout,
            http_client=http_client(timeout, self._base_url),
        )

    def warm(self) -> None:
        # The request goes through the client's `post` (see `_post_stream`): the `responses` resource and
        # its many types, which the SDK loads on first use, are never needed.
        self._client.warm()

    async def aclose(self) -> None:
        client = self._client.take()
        if client is not None:
            await client.close()

    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        """The Responses API request body for a provider-neutral request."""
        params: dict[str, Any] = {
            "model": self._name,
            "input": self._history.items(request.messages),
            "stream": True,
            "store": False,
        }
        if request.system:
            params["instructions"] = request.system
        if request.tools:
            params["tools"] = [
                {
                    "type": "function",
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.input_schema,
                    "strict": False,
                }
                for t in request.tools
            ]
        schema = request.response_schema
        if schema is not None:
            params["text"] = {
                "format": {"type": "json_schema", "name": schema.name, "schema": schema.schema, "strict": True}
            }
        if request.cache_key:
            params["prompt_cache_key"] = request.cache_key
        max_tokens = request.max_tokens or self._max_tokens
        if max_tokens:
            params["max_output_tokens"] = max_tokens
        if self._reasoning or request.effort:
            reasoning: dict[str, Any] = {"summary": "auto"}
            if request.effort:
                reasoning["effort"] = request.effort
            params["reasoning"] = reasoning
            params["include"] = ["reasoning.encrypted_content"]
        elif request.temperature is not None:
            params["temperature"] = request.temperature
        return params

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        async for event in self.send(self.build_params(request)):
            yield event

    async def send(
        self, params: dict[str, Any], watch: Callable[[Any], None] | None = None
    ) -> AsyncIterator[ModelEvent]:
        """Send one request of body `params` (as `build_params` makes it) and stream its events, with the
        SDK's errors mapped; `watch`, when given, sees each of the SDK's raw events first."""
        client = await self._client.aget()
        try:
            body = encode_body(params, "input", self._history.json(params["input"]))
            events = await _post_stream(client, body)
            try:
                async for event in _Assembler(self._name).feed(events if watch is None else _watched(events, watch)):
                    yield event
            finally:
                await events.close()
        except ProviderError:
            raise
        except Exception as error:
            raise map_openai_error(error, PROVIDER, endpoint_of(client), self._idle_timeout) from error


class _Assembler:
    """Turns the stream events of one response, the JSON objects the API sent, into sagent's deltas and the
    final message."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.items: dict[int, dict[str, Any]] = {}  # output_index -> the finished item (or the added one)
        self.arguments: dict[int, list[str]] = {}
        self.summaries: dict[int, list[str]] = {}
        self.text: dict[int, list[str]] = {}

    async def feed(self, events: Any) -> AsyncIterator[ModelEvent]:
        async for event in events:
            kind = event.get("type")
            if kind == "response.output_text.delta":
                self.text.setdefault(event["output_index"], []).append(event["delta"])
                yield TextDelta(event["delta"])
            elif kind == "response.function_call_arguments.delta":
                self.arguments.setdefault(event["output_index"], []).append(event["delta"])
                yield ToolCallDelta(event["output_index"], None, None, event["delta"])
            elif kind == "response.output_item.added":
                item = event["item"]
                self.items[event["output_index"]] = item
                if item.get("type") == "function_call":
                    yield ToolCallDelta(event["output_index"], item.get("call_id"), item.get("name"), "")
            elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
                self.summaries.setdefault(event["output_index"], []).append(event["delta"])
                yield ThinkingDelta(event["delta"])
            elif kind == "response.reasoning_summary_part.added" and self.summaries.get(event["output_index"]):
                self.summaries[event["output_index"]].append("\n\n")  # summary parts read as paragraphs
            elif kind == "response.output_item.done":
                self.items[event["output_index"]] = event["item"]
            elif kind in ("response.completed", "response.incomplete"):
                await _read_to_end(events)
                yield ResponseComplete(self._message(event.get("response") or {}))
                return
            elif kind == "response.failed":
                raise _failure(event.get("response") or {})
            elif kind == "error":  # an error event mid-stream: its code carries what happened
                code = event.get("code") or ""
                message = event.get("message") or "the stream reported an error"
                text = f"{code}: {message}" if code else message
                raise error_for_status(_STATUS_OF_CODE.get(code, 500), text, provider=PROVIDER)
        raise StreamCutError("the stream ended before the response completed", provider=PROVIDER)

    def _message(self, response: dict[str, Any]) -> AssistantMessage:
        parts: list[Any] = []
        for index in sorted(self.items):
            item = self.items[index]
            kind = item.get("type")
            if kind == "reasoning":
                text = "".join(self.summaries.get(index, [])) or _summary_text(item)
                signature = item.get("encrypted_content")
                if text or signature:
                    parts.append(ThinkingPart(text, signature, PROVIDER, item_id=item.get("id")))
            elif kind == "message":
                text = _message_text(item) or "".join(self.text.get(index, []))
                if text:
                    parts.append(TextPart(text))
            elif kind == "function_call":
                raw = item.get("arguments") or "".join(self.arguments.get(index, []))
                parts.append(parse_tool_call(item.get("call_id") or "", item.get("name") or "", raw))
        stop = _stop_reason(response, any(isinstance(p, ToolCall) for p in parts))
        return AssistantMessage(
            tuple(parts), PROVIDER, self.model, _usage(response.get("usage")), stop, response.get("id")
        )


def _summary_text(item: dict[str, Any]) -> str:
    return "\n\n".join(s.get("text") or "" for s in (item.get("summary") or []))


def _message_text(item: dict[str, Any]) -> str:
    out = []
    for part in item.get("content") or []:
        if part.get("type") == "output_text":
            out.append(part.get("text") or "")
        elif part.get("type") == "refusal":
            out.append(part.get("refusal") or "")
    return "".join(out)


def _stop_reason(response: dict[str, Any], has_calls: bool) -> StopReason:
    if has_calls:
        return "tool_use"
    if response.get("status") == "incomplete":
        reason = (response.get("incomplete_details") or {}).get("reason")
        return "refusal" if reason == "content_filter" else "max_tokens"
    return "end_turn"


def _usage(u: dict[str, Any] | None) -> Usage:
    if not u:
        return Usage()
    cached = (u.get("input_tokens_details") or {}).get("cached_tokens") or 0
    return Usage(
        input_tokens=(u.get("input_tokens") or 0) - cached,
        output_tokens=u.get("output_tokens") or 0,
        cache_read_tokens=cached,
    )


def _failure(response: dict[str, Any]) -> ProviderError:
    error = response.get("error") or {}
    code = error.get("code") or ""
    message = error.get("message") or "the response failed"
    text = f"{code}: {message}" if code else message  # the code carries the meaning (context_length_exceeded)
    return error_for_status(_STATUS_OF_CODE.get(code, 500), text, provider=PROVIDER)


# ------------------------------------------------------------------------------------------- history


def _user_content(parts: tuple[TextPart | ImagePart, ...]) -> list[dict[str, Any]]:
    return [
        {"type": "input_image", "image_url": f"data:{p.media_type};base64,{p.data}"}
        if isinstance(p, ImagePart)
        else {"type": "input_text", "text": p.text}
        for p in parts
    ]


def _assistant_items(message: AssistantMessage) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, ThinkingPart):
            if part.provider == PROVIDER and part.signature and part.item_id:
                items.append(
                    {
                        "type": "reasoning",
                        "id": part.item_id,
                        "summary": [{"type": "summary_text", "text": part.text}] if part.text else [],
                        "encrypted_content": part.signature,
                    }
                )
            elif part.text:  # another provider's reasoning: OpenAI cannot use it, so it becomes text
                items.append(_output_text(f"<thinking>{part.text}</thinking>"))
        elif isinstance(part, TextPart):
            if part.text:
                items.append(_output_text(part.text))
        elif isinstance(part, ServerToolPart):  # another provider's server-side tool: what it said, as text
            if part.note:
                items.append(_output_text(part.note))
        elif isinstance(part, ToolCall):
            arguments = part.invalid_arguments if part.invalid_arguments is not None else json.dumps(part.arguments)
            items.append(
                {"type": "function_call", "call_id": call_id(part.id), "name": part.name, "arguments": arguments}
            )
    return items


def _output_text(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}


def convert_history(history: tuple[Message, ...]) -> list[dict[str, Any]]:
    """Responses input items. Images in tool results follow the output as a user message, since a
    `function_call_output` carries text."""
    return [item for message in history for item in message_items(message)]


def message_items(message: Message) -> list[dict[str, Any]]:
    """The input items of one message (see `convert_history`)."""
    if isinstance(message, AssistantMessage):
        return _assistant_items(message)
    if isinstance(message, ToolResult):
        output = message.text or "(no output)"
        if message.is_error:
            output = f"Error: {output}"
        items: list[dict[str, Any]] = [
            {"type": "function_call_output", "call_id": call_id(message.call_id), "output": output}
        ]
        images = tuple(p for p in message.content if isinstance(p, ImagePart))
        if images:
            items.append({"role": "user", "content": _user_content(images)})
        return items
    if isinstance(message, PeerMessage):
        text = f"[message from {message.sender}]\n{message.text}"
        return [{"role": "user", "content": [{"type": "input_text", "text": text}]}]
    return [{"role": "user", "content": _user_content(message.content)}]


async def _post_stream(client: Any, body: bytes) -> Any:
    """`client.responses.create(**params)` as a stream, through the SDK's `post` as `create` sends it (the
    same path, auth, headers and errors), with `body` the params' JSON and the events left as the JSON
    objects the API sent (`AsyncStream[object]`). `create` would walk the body against its declarations,
    and build a pydantic model for every event (the response's large schema included): most of a tool
    round's time, for fields sagent reads once."""
    from openai import AsyncStream

    return await client.post(
        "/responses",
        content=body,
        cast_to=object,  # the response is a stream: its events are what is read
        options={"security": {"bearer_auth": True}, "headers": {"Content-Type": "application/json"}},
        stream=True,
        stream_cls=AsyncStream[object],
    )


END_WAIT = 1.0  # seconds the rest of a stream may take to end once its response is complete


async def _read_to_end(events: Any) -> None:
    """Read what follows the completed response, up to the stream's end (nothing, from the API), so the
    connection goes back to the SDK's pool for the next request instead of being closed with the stream
    half read (a new connection, and with TLS a new handshake, every round). A stream that does not end
    within END_WAIT, or fails, is left for the caller to close: the response is complete either way."""

    async def rest() -> None:
        async for _ in events:
            pass

    with contextlib.suppress(Exception):
        await asyncio.wait_for(rest(), END_WAIT)


async def _watched(events: Any, watch: Callable[[Any], None]) -> AsyncIterator[Any]:
    async for event in events:
        watch(event)
        yield event
