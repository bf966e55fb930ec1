"""Anthropic Messages API through the official `anthropic` SDK (imported only when a request is made).

Streaming, tool use, extended thinking with signatures kept for the next turn, usage with cache tokens,
and prompt caching: `cache_control` breakpoints on the system prompt, the last tool and the last two user
turns, so a long session re-reads its whole prefix from cache. Retries are sagent's (`stream_with_retry`),
so the SDK's own are off.

A request with a `server_advisor` uses Anthropic's advisor tool (beta): the client-side tool it replaces
is left out, the advisor model is consulted on Anthropic's side within the response, and the call and its
result come back as a `ServerToolPart` with the advisor's own usage. An endpoint that refuses the tool
(an invalid executor/advisor pair, a proxy that does not know it) gets the request again without it, and
this model keeps the client-side tool from then on.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from typing import Any

from sagent.events import ModelEvent, ResponseComplete, TextDelta, ThinkingDelta, ToolCallDelta
from sagent.providers import prefetch
from sagent.providers.anthropic_history import CACHE, PROVIDER, HistoryCache, convert_history
from sagent.providers.anthropic_history import tool_id as tool_id  # an Anthropic id for any call id, named here too
from sagent.providers.base import (
    AuthenticationError,
    Model,
    ProviderError,
    error_for_status,
    forced_tool_answer,
    parse_retry_after,
)
from sagent.providers.faults import (
    CONNECT_TIMEOUT,
    DEFAULT_IDLE_TIMEOUT,
    StreamCutError,
    classify_or_raise,
    endpoint_of,
)
from sagent.providers.message_cache import ENCODER
from sagent.providers.warm import SdkClient
from sagent.redaction import remember_secret
from sagent.types import (
    AssistantMessage,
    ModelRequest,
    ServerAdvisor,
    ServerToolPart,
    StopReason,
    TextPart,
    ThinkingPart,
    ToolCall,
    Usage,
)

ADVISOR_TOOL = "advisor_20260301"
ADVISOR_BETA = "advisor-tool-2026-03-01"
ADVISOR_MIN_TOKENS = 1024  # the smallest `max_tokens` the advisor tool takes
_STOP: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "stop_sequence": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "refusal": "refusal",
    "pause_turn": "end_turn",
}


LONG_CONTEXT_BETA = "context-1m-2025-08-07"
"""The beta that gives a Claude model a 1M-token context window, asked for by the `+1m` tag on its id."""


def split_long_context(model: str) -> tuple[str, bool]:
    """The model id the API takes, and whether `model` asks for the 1M-token context: `claude-sonnet-4-5+1m`
    (sagent's tag) or `claude-sonnet-4-5[1m]` (Claude Code's)."""
    from sagent.providers.catalog import long_context_base

    base = long_context_base(model)
    return (base, True) if base is not None else (model, False)


_EFFORT_MODELS = ("claude-opus-4-5", "claude-opus-4-6", "claude-opus-4-7", "claude-opus-4-8", "claude-sonnet-4-6")
_EFFORT_LINES = ("claude-opus-5", "claude-sonnet-5", "claude-haiku-5")


def takes_effort(model: str) -> bool:
    """Whether the Claude model `model` takes the effort setting (`output_config.effort`): the models from
    Opus 4.5 on; an older one would refuse the request, so the setting is left out for it."""
    name = model.lower()
    return name.startswith(_EFFORT_MODELS) or name.startswith(_EFFORT_LINES)


class AnthropicModel(Model):
    def __init__(
        self,
        model: str = "claude-sonnet-4-6",
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_tokens: int | None = None,
        timeout: float = 600.0,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
    ) -> None:
        """`timeout` bounds each request; `idle_timeout` is how long a stream may send nothing (not even
        a ping) before it is abandoned and the request sent again."""
        self._name = model
        self._api_model, self._long_context = split_long_context(model)
        self._api_key = api_key or os.environ.get("ANTHROPIC_API_KEY")
        remember_secret(self._api_key)
        self._base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL")
        self._max_tokens = max_tokens
        self._timeout = timeout
        self._idle_timeout = idle_timeout
        self._client: SdkClient[Any] = SdkClient(self._build_client)
        self._history = HistoryCache()
        self.advisor_refused: str | None = None
        """Why the endpoint refused the server-side advisor (the client-side tool is used since), or None."""

    @property
    def provider(self) -> str:
        return PROVIDER

    @property
    def name(self) -> str:
        return self._name

    @property
    def structured_output(self) -> bool:
        return True  # by a forced tool call (tool_choice), which every Claude model takes

    def _sdk(self) -> Any:
        return self._client.get()

    def _build_client(self) -> Any:
        if not self._api_key:
            raise AuthenticationError(
                "ANTHROPIC_API_KEY is not set: export it, or pick another provider with --provider",
                provider=PROVIDER,
            )
        import anthropic

        # The read timeout is the idle limit: it applies to each read of the stream, not to the whole.
        timeout = anthropic.Timeout(self._timeout, connect=min(CONNECT_TIMEOUT, self._timeout), read=self._idle_timeout)
        tls = prefetch.tls_context("anthropic", self._base_url)  # the trust store loaded at start-up, on another core
        http = anthropic.DefaultAsyncHttpxClient(timeout=timeout, verify=tls) if tls is not None else None
        return anthropic.AsyncAnthropic(
            api_key=self._api_key, base_url=self._base_url, max_retries=0, timeout=timeout, http_client=http
        )

    def warm(self) -> None:
        # The first request also imports the SDK's trace-context propagation.
        self._client.warm(lambda client: client.messages, modules=("opentelemetry.propagate",))

    async def aclose(self) -> None:
        client = self._client.take()
        if client is not None:
            await client.close()

    def server_advisor(self, request: ModelRequest) -> ServerAdvisor | None:
        """The server-side advisor this request will use: the one it offers, unless the endpoint refused it."""
        return request.server_advisor if self.advisor_refused is None else None

    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        """The Messages API request body for a provider-neutral request."""
        server_tools = self.server_advisor(request) is not None
        return self._params(request, convert_history(request.messages, server_tools=server_tools))

    def _params(self, request: ModelRequest, messages: object) -> dict[str, Any]:
        max_tokens = request.max_tokens or self._max_tokens or 16_000
        advisor = self.server_advisor(request)
        params: dict[str, Any] = {"model": self._api_model, "messages": messages}
        if request.system:
            params["system"] = [{"type": "text", "text": request.system, "cache_control": CACHE}]
        specs = [t for t in request.tools if advisor is None or t.name != advisor.replaces]
        tools: list[dict[str, Any]] = [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in specs
        ]
        schema = request.response_schema
        if schema is not None:  # structured output: the answer is the one call of a tool it must call
            tools.append({"name": schema.name, "description": schema.description, "input_schema": schema.schema})
            params["tool_choice"] = {"type": "tool", "name": schema.name}
        if advisor is not None:
            tools.append(
                {
                    "type": ADVISOR_TOOL,
                    "name": "advisor",
                    "model": advisor.model,
                    "max_uses": advisor.max_uses,
                    "max_tokens": max(ADVISOR_MIN_TOKENS, advisor.max_tokens),
                }
            )
        if tools:
            tools[-1]["cache_control"] = CACHE
            params["tools"] = tools
        if request.effort and takes_effort(self._api_model):
            params["output_config"] = {"effort": "low" if request.effort == "minimal" else request.effort}
        if request.thinking_budget and schema is None:  # the API refuses thinking with a forced tool
            params["thinking"] = {"type": "enabled", "budget_tokens": request.thinking_budget}
            max_tokens = max(max_tokens, request.thinking_budget + 1024)
        elif request.temperature is not None:
            params["temperature"] = request.temperature
        params["max_tokens"] = max_tokens
        return params

    def _body(self, request: ModelRequest) -> bytes:
        """The request body as sent: `{**build_params(request), "stream": True}` encoded as JSON, the
        conversation's part of it encoded a message at a time over the session (see `HistoryCache`)."""
        server_tools = self.server_advisor(request) is not None
        params = self._params(request, _MESSAGES)
        items = []
        for key, value in {**params, "stream": True}.items():
            if value is _MESSAGES:
                text = self._history.json(request.messages, server_tools=server_tools)
            else:
                text = ENCODER.encode(value)
            items.append(f"{ENCODER.encode(key)}:{text}")
        return ("{" + ",".join(items) + "}").encode("utf-8")

    def _betas(self, advisor: bool) -> tuple[str, ...]:
        """The beta features a request asks for: the advisor tool, the 1M-token context (`+1m`)."""
        return (*((ADVISOR_BETA,) if advisor else ()), *((LONG_CONTEXT_BETA,) if self._long_context else ()))

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        client = await self._client.aget()
        try:
            advisor = self.server_advisor(request) is not None
            try:
                stream = await _post_stream(client, self._body(request), self._betas(advisor))
            except Exception as error:
                refusal = _advisor_refusal(error) if advisor else None
                if refusal is None:
                    raise
                self.advisor_refused = refusal
                advisor = False
                stream = await _post_stream(client, self._body(request), self._betas(False))
            schema = request.response_schema
            async for event in _Assembler(self._name).feed(stream):
                if schema is not None and isinstance(event, ResponseComplete):
                    event = ResponseComplete(forced_tool_answer(event.message, schema.name))
                yield event
        except ProviderError:
            raise
        except Exception as error:
            raise map_error(error, endpoint_of(client, self._base_url), self._idle_timeout) from error


_MESSAGES = object()  # where the conversation's JSON goes in a body


async def _post_stream(client: Any, body: bytes, betas: tuple[str, ...] = ()) -> Any:
    """`client.messages.create(**body)` as a stream, with `body` the JSON encoded here; with
    `betas`, as `client.beta.messages.create` with those beta features.

    `messages.create` walks and copies the whole body (the conversation) before encoding it, on every
    request; the SDK's `post` takes the encoded body as it is and does the rest as `create` would (the same
    headers, errors and stream). The stream's events come as the JSON objects the API sent
    (`AsyncStream[object]`), which `_Assembler` reads: the SDK would otherwise build and validate a pydantic
    model for every event, only for sagent to read its fields."""
    from anthropic import AsyncStream
    from anthropic.types import Message

    return await client.post(
        "/v1/messages",
        content=body,
        cast_to=Message,
        options={"headers": {"anthropic-beta": ",".join(betas)}} if betas else {},
        stream=True,
        stream_cls=AsyncStream[object],
    )


def _advisor_refusal(error: Exception) -> str | None:
    """What the endpoint said when it refused the advisor tool (a 400 that names it), or None."""
    import anthropic

    if isinstance(error, anthropic.BadRequestError) and "advisor" in str(error).lower():
        return str(error)
    return None


class _Assembler:
    """Turns the raw SSE events of one response into sagent's deltas and the final message."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.blocks: dict[int, dict[str, Any]] = {}
        self.usage: dict[str, int] = {}
        self.stop = "end_turn"
        self.response_id: str | None = None
        self.advisor_usage: list[tuple[str, Usage]] = []  # (model, usage) of each advisor consultation

    async def feed(self, stream: Any) -> AsyncIterator[ModelEvent]:
        """The response's events, as the JSON objects the API sent (the SDK's `AsyncStream[object]`: its
        SSE decoding and error handling, without building a pydantic model for every event)."""
        done = False
        async for event in stream:
            kind = event["type"]
            if kind == "content_block_delta":
                block, delta = self.blocks[event["index"]], event["delta"]
                kind = delta["type"]
                if kind == "text_delta":
                    block["text"] += delta["text"]
                    yield TextDelta(delta["text"])
                elif kind == "input_json_delta":
                    block["json"] += delta["partial_json"]
                    if block["type"] == "tool_use":  # a server tool's input is not a call for sagent to run
                        yield ToolCallDelta(event["index"], arguments_delta=delta["partial_json"])
                elif kind == "thinking_delta":
                    block["thinking"] = block.get("thinking", "") + delta["thinking"]
                    yield ThinkingDelta(delta["thinking"])
                elif kind == "signature_delta":
                    block["signature"] = block.get("signature", "") + delta["signature"]
            elif kind == "content_block_start":
                block = _without_none(event["content_block"])
                self.blocks[event["index"]] = {**block, "text": block.get("text", ""), "json": ""}
                if block["type"] == "tool_use":
                    yield ToolCallDelta(event["index"], block["id"], block["name"])
            elif kind == "message_start":
                self.response_id = event["message"].get("id")
                self._usage(event["message"].get("usage"))
            elif kind == "message_delta":
                self.stop = (event.get("delta") or {}).get("stop_reason") or self.stop
                self._usage(event.get("usage"))
            elif kind == "message_stop":
                done = True
        if not done:
            raise StreamCutError("the stream ended before message_stop", provider=PROVIDER)
        yield ResponseComplete(self._message())

    def _usage(self, usage: dict[str, Any] | None) -> None:
        if not usage:
            return
        iterations = usage.get("iterations")
        if iterations:
            self.advisor_usage = [
                (it.get("model", ""), _iteration_usage(it)) for it in iterations if it.get("type") == "advisor_message"
            ]
        for key in (
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        ):
            value = usage.get(key)
            if value is not None:
                self.usage[key] = value

    def _message(self) -> AssistantMessage:
        parts: list[Any] = []
        blocks = [block for _, block in sorted(self.blocks.items())]
        results = {b.get("tool_use_id"): b for b in blocks if b["type"] == "advisor_tool_result"}
        consultations = iter(self.advisor_usage)
        for block in blocks:
            if block["type"] == "server_tool_use":
                result = results.get(block["id"])
                if result is not None:
                    parts.append(_advisor_part(block, result, next(consultations, None)))
            elif block["type"] == "text":
                parts.append(TextPart(block["text"]))
            elif block["type"] == "thinking":
                parts.append(ThinkingPart(block.get("thinking", ""), block.get("signature"), PROVIDER))
            elif block["type"] == "redacted_thinking":
                parts.append(ThinkingPart("", block.get("data"), PROVIDER, redacted=True))
            elif block["type"] == "tool_use":
                parts.append(_tool_call(block))
        u = self.usage
        usage = Usage(
            u.get("input_tokens", 0),
            u.get("output_tokens", 0),
            u.get("cache_read_input_tokens", 0),
            u.get("cache_creation_input_tokens", 0),
        )
        return AssistantMessage(
            tuple(parts), PROVIDER, self.model, usage, _STOP.get(self.stop, "end_turn"), self.response_id
        )


def _iteration_usage(iteration: dict[str, Any]) -> Usage:
    return Usage(
        iteration.get("input_tokens") or 0,
        iteration.get("output_tokens") or 0,
        iteration.get("cache_read_input_tokens") or 0,
        iteration.get("cache_creation_input_tokens") or 0,
    )


def _without_none(value: Any) -> Any:
    """`value` with the null fields of its objects left out, at every depth (as the SDK's
    `model_dump(exclude_none=True)` gave them)."""
    if isinstance(value, dict):
        return {k: _without_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_none(v) for v in value]
    return value


def _advisor_part(use: dict[str, Any], result: dict[str, Any], used: tuple[str, Usage] | None) -> ServerToolPart:
    """One server-side consultation: its two blocks as Anthropic must get them back, and its advice."""
    raw = use["json"].strip()
    call = {"type": "server_tool_use", "id": use["id"], "name": use["name"], "input": json.loads(raw) if raw else {}}
    content = result.get("content") or {}
    answer = {"type": "advisor_tool_result", "tool_use_id": result["tool_use_id"], "content": content}
    kind = content.get("type")
    if kind == "advisor_result":
        text = content.get("text", "")
    elif kind == "advisor_tool_result_error":
        text = f"(the advisor could not answer: {content.get('error_code', 'error')})"
    else:
        text = ""  # redacted: only Anthropic can read it
    model, usage = used if used is not None else ("", None)
    return ServerToolPart(use["name"], PROVIDER, json.dumps([call, answer]), text, model, usage)


def _tool_call(block: dict[str, Any]) -> ToolCall:
    raw = block["json"]
    if not raw.strip():
        return ToolCall(block["id"], block["name"], dict(block.get("input") or {}))
    try:
        arguments = json.loads(raw)
    except json.JSONDecodeError:
        return ToolCall(block["id"], block["name"], {}, invalid_arguments=raw)
    if not isinstance(arguments, dict):
        return ToolCall(block["id"], block["name"], {}, invalid_arguments=raw)
    return ToolCall(block["id"], block["name"], arguments)


# -------------------------------------------------------------------------------------------- errors


_STATUS_OF_TYPE = {
    "rate_limit_error": 429,
    "overloaded_error": 529,
    "authentication_error": 401,
    "permission_error": 403,
    "api_error": 500,
}


def map_error(error: Exception, endpoint: str = "", idle_timeout: float | None = None) -> ProviderError:
    """The typed error for an exception from the SDK, or from the HTTP stack under it mid-stream."""
    import anthropic

    if not isinstance(error, anthropic.APIStatusError):
        return classify_or_raise(
            error, provider=PROVIDER, endpoint=endpoint or "the Anthropic API", idle_timeout=idle_timeout
        )
    status = error.status_code
    body = error.body if isinstance(error.body, dict) else {}
    detail = body.get("error", body) if isinstance(body.get("error", body), dict) else {}
    kind = detail.get("type", "")
    message = detail.get("message") or str(error)
    retry_after = parse_retry_after(error.response.headers.get("retry-after"))
    # An `error` event inside a 200 stream carries its meaning in the type, not the status.
    status = _STATUS_OF_TYPE.get(kind, status)
    return error_for_status(status, message, provider=PROVIDER, retry_after=retry_after)
