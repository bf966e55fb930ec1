"""OpenAI-compatible Chat Completions endpoints through the official `openai` SDK (imported lazily).

Tolerates what real servers do: no usage chunk, `content: null` beside tool calls, tool-call arguments
split over many deltas, `reasoning_content` deltas, and servers that refuse `tool_choice`.
Thinking is not sent back: Chat Completions has no field that carries it across turns.
"""

from __future__ import annotations

import hashlib
import json
import operator
import re
from collections.abc import AsyncIterator
from typing import Any

from sagent.events import ModelEvent, ResponseComplete, TextDelta, ThinkingDelta, ToolCallDelta
from sagent.providers import prefetch
from sagent.providers.base import Model, ProviderError, error_for_status, parse_retry_after
from sagent.providers.faults import (
    CONNECT_TIMEOUT,
    DEFAULT_IDLE_TIMEOUT,
    StreamCutError,
    classify_or_raise,
    endpoint_of,
)
from sagent.providers.message_cache import ENCODER, MessageCache, encode_body
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

_VALID_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_STOP: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}


def call_id(original: str) -> str:
    if _VALID_ID.match(original):
        return original
    return "call_" + hashlib.sha256(original.encode()).hexdigest()[:24]


class OpenAICompatModel(Model):
    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        provider: str = "openai-compat",
        max_tokens: int | None = None,
        timeout: float = 600.0,
        supports_tool_choice: bool = True,
        extra_body: dict[str, Any] | None = None,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
    ) -> None:
        """`timeout` bounds each request; `idle_timeout` is how long a stream may send nothing before it is
        abandoned and the request sent again (a local server that reads a long prompt first needs more)."""
        self._name = model
        self._provider = provider
        self._base_url = base_url
        self._api_key = api_key
        remember_secret(self._api_key)
        self._max_tokens = max_tokens
        self._timeout = timeout
        self._idle_timeout = idle_timeout
        self.supports_tool_choice = supports_tool_choice
        self._extra_body = extra_body
        self._client: SdkClient[Any] = SdkClient(self._build_client)
        self._history = MessageCache(_Entry.of)
        self._joined = _Joined()
        self._sent: list[dict[str, Any]] | None = None  # the last messages `build_params` made

    @property
    def provider(self) -> str:
        return self._provider

    @property
    def name(self) -> str:
        return self._name

    def _sdk(self) -> Any:
        return self._client.get()

    def _build_client(self) -> Any:
        import openai

        timeout = openai_timeout(self._timeout, self._idle_timeout)
        return openai.AsyncOpenAI(
            api_key=self._api_key or "none",
            base_url=self._base_url,
            max_retries=0,
            timeout=timeout,
            http_client=http_client(timeout, self._base_url),
        )

    def warm(self) -> None:
        # Touching the resource imports its module and its stream types, which the SDK loads on first use.
        self._client.warm(lambda client: client.chat.completions)

    async def aclose(self) -> None:
        client = self._client.take()
        if client is not None:
            await client.close()

    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        messages: list[dict[str, Any]] = [{"role": "system", "content": request.system}] if request.system else []
        messages += self._joined.messages(self._history.each(request.messages))
        self._sent = messages
        params: dict[str, Any] = {
            "model": self._name,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            params["tools"] = [
                {
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.input_schema},
                }
                for t in request.tools
            ]
            if self.supports_tool_choice:
                params["tool_choice"] = "auto"
        max_tokens = request.max_tokens or self._max_tokens
        if max_tokens:
            params["max_tokens"] = max_tokens
        if request.temperature is not None:
            params["temperature"] = request.temperature
        if self._extra_body:
            params["extra_body"] = self._extra_body
        return params

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        async for event in self.stream_params(self.build_params(request)):
            yield event

    async def stream_params(self, params: dict[str, Any]) -> AsyncIterator[ModelEvent]:
        """The streamed reply to a request body built by `build_params` (and perhaps changed since)."""
        client = await self._client.aget()
        try:
            try:
                chunks = await _post_chat(client, self._body(params))
            except Exception as error:
                if "tool_choice" in params and "tool_choice" in str(error) and _status(error) == 400:
                    self.supports_tool_choice = False  # this server refuses it; do not send it again
                    params.pop("tool_choice")
                    chunks = await _post_chat(client, self._body(params))
                else:
                    raise
            async for event in self._assemble(chunks):
                yield event
        except ProviderError:
            raise
        except Exception as error:
            raise map_openai_error(error, self._provider, endpoint_of(client), self._idle_timeout) from error

    def _body(self, params: dict[str, Any]) -> bytes:
        """`params` as the SDK's `create` would send them (`as_sent`), encoded here: the conversation's part
        from each message's JSON encoded once, when `params` carries the messages `build_params` made last
        and no images were moved after their tool results."""
        body = as_sent(params)
        wire = {"model": body["model"], "stream": body["stream"], **body["extra_body"]}
        sent, text = self._sent, self._joined.text
        if sent is None or params.get("messages") is not sent or text is None:
            return ENCODER.encode(wire).encode("utf-8")
        texts = [ENCODER.encode(sent[0])] if sent and sent[0]["role"] == "system" else []
        return encode_body(wire, "messages", "[" + ",".join([*texts, *([text] if text else [])]) + "]")

    async def _assemble(self, chunks: Any) -> AsyncIterator[ModelEvent]:
        text, thinking = [], []
        calls: dict[int, dict[str, Any]] = {}
        usage = Usage()
        finish: str | None = None
        response_id = None
        async for chunk in chunks:
            response_id = response_id or chunk.id
            if chunk.usage is not None:
                usage = _usage(chunk.usage)
            for choice in chunk.choices or []:
                delta = choice.delta
                if delta is not None:
                    reasoning = getattr(delta, "reasoning_content", None)
                    if reasoning:
                        thinking.append(reasoning)
                        yield ThinkingDelta(reasoning)
                    if delta.content:
                        text.append(delta.content)
                        yield TextDelta(delta.content)
                    for tc in delta.tool_calls or []:
                        call = calls.setdefault(tc.index, {"id": None, "name": "", "args": ""})
                        fn = tc.function
                        call["id"] = call["id"] or tc.id
                        call["name"] += (fn.name or "") if fn else ""
                        call["args"] += (fn.arguments or "") if fn else ""
                        yield ToolCallDelta(
                            tc.index, tc.id, fn.name if fn else None, (fn.arguments or "") if fn else ""
                        )
                finish = choice.finish_reason or finish
        if finish is None:
            raise StreamCutError("the stream ended before a finish_reason", provider=self._provider)
        parts: list[Any] = []
        if thinking:
            parts.append(ThinkingPart("".join(thinking), provider=self._provider))
        if text:
            parts.append(TextPart("".join(text)))
        for index, call in sorted(calls.items()):
            parts.append(_tool_call(call, index))
        stop = "tool_use" if calls else _STOP.get(finish, "end_turn")
        yield ResponseComplete(AssistantMessage(tuple(parts), self._provider, self._name, usage, stop, response_id))


def http_client(timeout: Any, base_url: str | None) -> Any:
    """An `openai` HTTP client for `base_url` (None: OPENAI_BASE_URL, then the SDK's default) on the TLS
    context `prefetch.tls_context` gives, or None for the SDK's own."""
    import openai

    tls = prefetch.tls_context("openai", base_url)
    return openai.DefaultAsyncHttpxClient(timeout=timeout, verify=tls) if tls is not None else None


async def _post_chat(client: Any, body: bytes) -> Any:
    """`client.chat.completions.create(...)` as a stream, through the SDK's `post` as `create` sends it (the
    same path, auth, headers, errors and chunk objects), with `body` the JSON encoded by the caller."""
    from openai import AsyncStream
    from openai.types.chat import ChatCompletion, ChatCompletionChunk

    return await client.post(
        "/chat/completions",
        content=body,
        cast_to=ChatCompletion,
        options={"security": {"bearer_auth": True}, "headers": {"Content-Type": "application/json"}},
        stream=True,
        stream_cls=AsyncStream[ChatCompletionChunk],
    )


class _Joined:
    """The chat messages of the last history and their JSON, extended when the next history only adds
    messages: a round joins and encodes only what it added. Images of tool results (moved after them as a
    user message) make it join the whole history again, and leave the JSON to be encoded whole."""

    def __init__(self) -> None:
        self._entries: list[_Entry] = []
        self._plain: list[dict[str, Any]] = []
        self.text: str | None = ""  # the messages' JSON, comma-separated; None when images were moved

    def messages(self, entries: list[_Entry]) -> list[dict[str, Any]]:
        """`join_messages` of the entries (a list the caller may not change)."""
        known = self._entries
        grown = len(entries) >= len(known) and all(map(operator.is_, entries, known))
        new = entries[len(known) :]
        if grown and self.text is not None and not any(e.images for e in new):
            self._plain = self._plain + [e.entry for e in new]
            self.text = ",".join([self.text, *(e.text for e in new)] if self.text else [e.text for e in new])
        else:
            self._plain = join_messages([(e.entry, e.images) for e in entries])
            clean = not any(e.images for e in entries)
            self.text = ",".join(e.text for e in entries) if clean else None
        self._entries = entries
        return self._plain


class _Entry:
    """One message's chat message, the images of a tool result, and the message's JSON once asked for."""

    __slots__ = ("_text", "entry", "images")

    def __init__(self, entry: dict[str, Any], images: tuple[ImagePart, ...]) -> None:
        self.entry, self.images = entry, images
        self._text: str | None = None

    @classmethod
    def of(cls, message: Message) -> _Entry:
        return cls(*message_entry(message))

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = ENCODER.encode(self.entry)
        return self._text


def as_sent(params: dict[str, Any]) -> dict[str, Any]:
    """The arguments of an `openai` SDK `create` call that sends the request body `params` as it is.

    Named arguments are walked and copied against the SDK's type declarations on every request, a cost
    that grows with the conversation (milliseconds a round in a long one); a body handed over as
    `extra_body` is merged as it is. The model and `stream` stay named (the SDK picks the stream's type by
    `stream`), and a required `messages` is named empty, the body's list taking its place. An `extra_body`
    in `params` is merged into the body, over the fields of the same name, as the SDK merges it."""
    body = dict(params)
    extra = body.pop("extra_body", None) or {}
    named: dict[str, Any] = {"model": body.pop("model"), "stream": body.pop("stream", False)}
    if "messages" in body:
        named["messages"] = []
    return {**named, "extra_body": {**body, **extra}}


def openai_timeout(timeout: float, idle_timeout: float) -> Any:
    """The `openai` SDK's timeouts: `timeout` per request, a short connect, and the idle limit as the read
    timeout (which applies to each read of the stream, not to the whole)."""
    import openai

    return openai.Timeout(timeout, connect=min(CONNECT_TIMEOUT, timeout), read=idle_timeout)


def map_openai_error(
    error: Exception, provider: str, endpoint: str = "", idle_timeout: float | None = None
) -> ProviderError:
    """The typed error for an exception raised by the `openai` SDK, or by the HTTP stack under it
    mid-stream (shared by both OpenAI wire formats)."""
    import openai

    if type(error) is openai.APIError:  # an error object sent inside a 200 stream
        code = str(error.code)
        status = int(code) if code.isdigit() and 400 <= int(code) < 600 else 500
        return error_for_status(status, error.message or str(error), provider=provider)
    if not isinstance(error, openai.APIStatusError):
        return classify_or_raise(error, provider=provider, endpoint=endpoint or provider, idle_timeout=idle_timeout)
    message = error.message or str(error)
    retry_after = parse_retry_after(error.response.headers.get("retry-after"))
    return error_for_status(error.status_code, message, provider=provider, retry_after=retry_after)


def _status(error: Exception) -> int | None:
    return getattr(error, "status_code", None)


def _usage(u: Any) -> Usage:
    details = getattr(u, "prompt_tokens_details", None)
    cached = (getattr(details, "cached_tokens", 0) or 0) if details else 0
    # Some servers report cache hits beside the counts instead (Moonshot: cached_tokens; DeepSeek style:
    # prompt_cache_hit_tokens).
    cached = cached or getattr(u, "cached_tokens", 0) or getattr(u, "prompt_cache_hit_tokens", 0) or 0
    prompt = u.prompt_tokens or 0
    return Usage(input_tokens=prompt - cached, output_tokens=u.completion_tokens or 0, cache_read_tokens=cached)


def _tool_call(call: dict[str, Any], index: int) -> ToolCall:
    return parse_tool_call(call["id"] or f"call_{index}", call["name"], call["args"])


def parse_tool_call(cid: str, name: str, raw: str) -> ToolCall:
    """A tool call from its streamed JSON argument text; text that is not a JSON object is kept as invalid."""
    try:
        arguments = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError:
        return ToolCall(cid, name, {}, invalid_arguments=raw)
    if not isinstance(arguments, dict):
        return ToolCall(cid, name, {}, invalid_arguments=raw)
    return ToolCall(cid, name, arguments)


def _user_content(parts: tuple[TextPart | ImagePart, ...]) -> str | list[dict[str, Any]]:
    if all(isinstance(p, TextPart) for p in parts):
        return "".join(p.text for p in parts if isinstance(p, TextPart))
    return [
        {"type": "image_url", "image_url": {"url": f"data:{p.media_type};base64,{p.data}"}}
        if isinstance(p, ImagePart)
        else {"type": "text", "text": p.text}
        for p in parts
    ]


def convert_history(history: tuple[Message, ...]) -> list[dict[str, Any]]:
    """Chat messages for the history."""
    return join_messages([message_entry(m) for m in history])


def message_entry(message: Message) -> tuple[dict[str, Any], tuple[ImagePart, ...]]:
    """One message's chat message, and the images of a tool result (tool messages carry text only)."""
    if isinstance(message, AssistantMessage):
        notes = [p.note for p in message.content if isinstance(p, ServerToolPart) and p.note]
        text = "\n\n".join([*notes, message.text]) if notes else message.text
        entry: dict[str, Any] = {"role": "assistant", "content": text}  # "" not null: llama.cpp needs it
        if message.tool_calls:
            entry["tool_calls"] = [
                {
                    "id": call_id(c.id),
                    "type": "function",
                    "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
                }
                for c in message.tool_calls
            ]
        return entry, ()
    if isinstance(message, ToolResult):
        entry = {"role": "tool", "tool_call_id": call_id(message.call_id), "content": message.text or "(no output)"}
        return entry, tuple(p for p in message.content if isinstance(p, ImagePart))
    if isinstance(message, PeerMessage):
        return {"role": "user", "content": f"[message from {message.sender}]\n{message.text}"}, ()
    return {"role": "user", "content": _user_content(message.content)}, ()


def join_messages(entries: list[tuple[dict[str, Any], tuple[ImagePart, ...]]]) -> list[dict[str, Any]]:
    """The messages' chat messages in order, the images of a run of tool results following it as one user
    message."""
    out: list[dict[str, Any]] = []
    images: list[ImagePart] = []
    for entry, found in entries:
        if images and entry["role"] != "tool":
            out.append({"role": "user", "content": _user_content(tuple(images))})
            images = []
        out.append(entry)
        images += found
    if images:
        out.append({"role": "user", "content": _user_content(tuple(images))})
    return out
