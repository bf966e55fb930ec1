"""Google Gemini through the official `google-genai` SDK (imported lazily).

Gemini attaches *thought signatures* to the parts of a response (a text part, a function call, or a
thought summary). They must come back on the same parts in the next request or the model loses its
reasoning across tool rounds. sagent keeps a signature found on a text or function-call part as an empty
`ThinkingPart` (provider "google") placed right before that part, and a signature on a thought summary on
the summary's own `ThinkingPart`; `convert_history` puts each back where it came from.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
import json
import os
import re
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from sagent.events import ModelEvent, ResponseComplete, TextDelta, ThinkingDelta, ToolCallDelta
from sagent.providers import prefetch
from sagent.providers.base import AuthenticationError, Model, ProviderError, error_for_status, parse_retry_after
from sagent.providers.catalog import lookup
from sagent.providers.faults import (
    DEFAULT_IDLE_TIMEOUT,
    MalformedResponseError,
    StreamCutError,
    classify_or_raise,
    idle_limited,
)
from sagent.providers.google_history import PROVIDER as PROVIDER  # the provider name, named here too
from sagent.providers.google_history import HistoryCache, encode_body
from sagent.providers.google_history import convert_history as convert_history  # the history as Gemini takes it
from sagent.providers.warm import SdkClient
from sagent.redaction import remember_secret
from sagent.types import (
    AssistantMessage,
    ModelRequest,
    StopReason,
    TextPart,
    ThinkingPart,
    ToolCall,
    Usage,
)

KEY_VARIABLES = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"

# Finish reasons for output that cannot be used: a tool call that does not parse, or names no declared tool.
_MALFORMED_CALL = ("MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "MALFORMED_RESPONSE")
_STOP: dict[str, StopReason] = {
    "STOP": "end_turn",
    "MAX_TOKENS": "max_tokens",
    "SAFETY": "refusal",
    "RECITATION": "refusal",
    "PROHIBITED_CONTENT": "refusal",
    "BLOCKLIST": "refusal",
    "SPII": "refusal",
    "IMAGE_SAFETY": "refusal",
}


class GoogleModel(Model):
    def __init__(
        self,
        model: str = "gemini-3-flash-preview",
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_tokens: int | None = None,
        timeout: float = 600.0,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
    ) -> None:
        """`timeout` bounds each request; `idle_timeout` is how long a stream may send nothing before it is
        abandoned and the request sent again."""
        self._name = model
        self._api_key = api_key
        remember_secret(self._api_key)
        self._base_url = base_url
        self._max_tokens = max_tokens
        self._timeout = timeout
        self._idle_timeout = idle_timeout
        info = lookup(model)
        self._thinks = bool(info and info.thinking)
        self._client: SdkClient[Any] = SdkClient(self._build_client)
        self._history = HistoryCache()

    @property
    def provider(self) -> str:
        return PROVIDER

    @property
    def name(self) -> str:
        return self._name

    @property
    def structured_output(self) -> bool:
        return True  # `responseJsonSchema` with `responseMimeType: application/json`

    def _sdk(self) -> Any:
        return self._client.get()

    def _build_client(self) -> Any:
        from google import genai
        from google.genai import types

        key = self._api_key or next((os.environ[v] for v in KEY_VARIABLES if os.environ.get(v)), None)
        if not key:
            raise AuthenticationError(f"no Gemini API key: set {' or '.join(KEY_VARIABLES)}", provider=PROVIDER)
        # The TLS context built at start-up (or a lazy one for a plain HTTP endpoint), for the HTTP client
        # and the websocket one alike: without it the SDK loads a trust store for each, tens of ms apiece.
        tls = prefetch.tls_context("google.genai", self._base_url)
        options = types.HttpOptions(
            base_url=self._base_url,
            api_version="v1beta",
            timeout=int(self._timeout * 1000),
            # One attempt: sagent's own retry policy decides, the same for every provider.
            retry_options=types.HttpRetryOptions(attempts=1),
            client_args=None if tls is None else {"verify": tls},
            async_client_args=None if tls is None else {"verify": tls, "ssl": tls},
        )
        remember_secret(key)
        return genai.Client(api_key=key, http_options=options)

    def warm(self) -> None:
        self._client.warm(lambda client: client.aio.models)

    async def aclose(self) -> None:
        client = self._client.take()
        if client is not None:
            await client.aio.aclose()

    def build_body(self, request: ModelRequest) -> dict[str, Any]:
        """The `streamGenerateContent` request body, as the JSON the API takes, for a provider-neutral
        request (the conversation's parts converted once per message: see `HistoryCache`)."""
        body: dict[str, Any] = {"contents": self._history.convert(request.messages)}
        if request.system:
            body["systemInstruction"] = {"parts": [{"text": request.system}], "role": "user"}
        if request.tools:
            declarations = [
                {"name": t.name, "description": t.description, "parametersJsonSchema": t.input_schema}
                for t in request.tools
            ]
            body["tools"] = [{"functionDeclarations": declarations}]
        generation: dict[str, Any] = {}
        max_tokens = request.max_tokens or self._max_tokens
        if max_tokens:
            generation["maxOutputTokens"] = max_tokens
        if request.temperature is not None:
            generation["temperature"] = request.temperature
        if request.thinking_budget:
            generation["thinkingConfig"] = {"thinkingBudget": request.thinking_budget, "includeThoughts": True}
        elif request.effort:
            level = "HIGH" if request.effort in ("xhigh", "max") else request.effort.upper()  # Gemini's highest
            generation["thinkingConfig"] = {"thinkingLevel": level, "includeThoughts": True}
        elif self._thinks:
            generation["thinkingConfig"] = {"includeThoughts": True}
        if request.response_schema is not None:
            generation["responseMimeType"] = "application/json"
            generation["responseJsonSchema"] = request.response_schema.schema
        if generation:
            body["generationConfig"] = generation
        return body

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        chunks = None
        try:
            client = await self._client.aget()
            body = self.build_body(request)
            # The request goes through the SDK's API client (the key, the endpoint, the headers, the HTTP
            # stack, `errors.APIError` for an error status or an error in the stream), as JSON: its typed
            # `generate_content_stream` validates and converts the whole request, then every chunk of the
            # response, which cost more than the rest of a tool round. The chunks are read as JSON too.
            # google-genai sends its request timeout to the server as the whole request's deadline and
            # uses it for every read, so the idle limit is kept here, between chunks, instead.
            async with asyncio.timeout(self._idle_timeout):
                data = encode_body(body, self._history.json(body["contents"]))
                chunks = await _request_streamed(client.aio._api_client, _path(self._name), data)
            async for event in _Assembler(self._name).feed(idle_limited(_json(chunks), self._idle_timeout)):
                yield event
        except ProviderError:
            raise
        except Exception as error:
            await _close_response(error)
            if chunks is not None:  # a chunk we could not read: the stream under it is closed now, not by the collector
                await _close_response(_Held(chunks))
            endpoint = self._base_url or DEFAULT_BASE_URL
            if _unreadable(error):  # transient, as any malformed response: retried, then said in one line
                raise MalformedResponseError(
                    f"{endpoint.rstrip('/')} sent a malformed chunk, not part of a Gemini response ({_what(error)})",
                    provider=PROVIDER,
                ) from error
            raise map_error(error, endpoint, self._idle_timeout) from error


async def _request_streamed(api: Any, path: str, data: bytes) -> Any:
    """`api.async_request_streamed("post", path, body)` with the body given as the JSON bytes google-genai
    would make of it (`data`): the client encoded the whole conversation again for every request. The
    chunks come as there: one `HttpResponse` each, an error chunk raised as its `APIError`.

    The bytes go through the API client's own request builder and sender, which are not public: a release
    of google-genai without them (or with other parameters) gets the body through the public
    `async_request_streamed` instead, encoded again by the SDK, and the requests are the same."""
    from google.genai import errors
    from google.genai.types import HttpResponse

    build, send = getattr(api, "_build_request", None), getattr(api, "_async_request", None)
    try:
        if build is None or send is None:
            raise TypeError("no request builder")
        request = dataclasses.replace(build("post", path, {}), data=data)
    except TypeError:
        return await api.async_request_streamed("post", path, json.loads(data))
    response = await send(http_request=request, stream=True)

    async def chunks() -> AsyncIterator[Any]:  # `response` by that name: `_Held` finds it there
        async for chunk in response:
            dump = json.dumps(chunk)
            if dump.startswith('{"error":'):
                await errors.APIError.raise_error_async(chunk.get("error", {}).get("code"), chunk, response)
            yield HttpResponse(headers=response.headers, body=dump)

    return chunks()


class _Held:
    """The SDK's response a chunk generator reads (its `response` variable), shaped as `_close_response`
    expects an error carrying one."""

    def __init__(self, chunks: Any) -> None:
        frame = getattr(chunks, "ag_frame", None)
        self.response = frame.f_locals.get("response") if frame is not None else None


_SHAPE_ERRORS = (TypeError, AttributeError, KeyError, IndexError, ValueError)


def _unreadable(error: Exception) -> bool:
    """Whether `error` came from reading the response's chunks here (JSON that is not JSON, or not shaped as
    Gemini's), rather than from the SDK or the network."""
    if _not_json(error) is not None:
        return True
    if not isinstance(error, _SHAPE_ERRORS):
        return False
    frame = error.__traceback__
    while frame is not None and frame.tb_next is not None:
        frame = frame.tb_next
    return frame is not None and frame.tb_frame.f_code.co_filename == __file__


def _not_json(error: BaseException | None) -> json.JSONDecodeError | None:
    """The JSON decoding error behind `error` (the SDK reads the stream's lines as JSON itself), if any."""
    seen = 0
    while error is not None and seen < 10:
        if isinstance(error, json.JSONDecodeError):
            return error
        error, seen = error.__cause__ or error.__context__, seen + 1
    return None


def _what(error: Exception) -> str:
    decoding = _not_json(error)
    if decoding is not None:
        return f"not JSON: {decoding.msg} at character {decoding.pos}"
    return f"JSON of the wrong shape: {type(error).__name__}: {str(error)[:200]}"


def _path(model: str) -> str:
    """The request path of a streamed response from `model` (an id, or a `models/` or `tunedModels/` name)."""
    if not model or ".." in model or "?" in model or "&" in model:
        raise ValueError(f"not a Gemini model name: {model!r}")
    name = model if model.startswith(("models/", "tunedModels/")) else f"models/{model}"
    return f"{name}:streamGenerateContent?alt=sse"


async def _json(responses: AsyncIterator[Any]) -> AsyncIterator[dict[str, Any]]:
    """The chunks of a streamed response, each one JSON object."""
    async for response in responses:
        chunk = json.loads(response.body) if response.body else {}
        if isinstance(chunk, dict):
            yield chunk


@dataclass
class _Segment:
    kind: str  # "text", "thought" or "call"
    text: list[str] = field(default_factory=list)
    signature: str | None = None
    call: ToolCall | None = None


class _Assembler:
    """Turns the response chunks of one stream into sagent's deltas and the final message."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.segments: list[_Segment] = []
        self.calls = 0

    def _segment(self, kind: str) -> _Segment:
        if kind == "call" or not self.segments or self.segments[-1].kind != kind:
            self.segments.append(_Segment(kind))
        return self.segments[-1]

    async def feed(self, chunks: AsyncIterator[dict[str, Any]]) -> AsyncIterator[ModelEvent]:
        """Events from the JSON chunks of one response."""
        usage = Usage()
        finish: str | None = None
        response_id = None
        blocked = None
        async for chunk in chunks:
            response_id = response_id or chunk.get("responseId")
            if chunk.get("usageMetadata") is not None:
                usage = _usage(chunk["usageMetadata"])
            feedback = chunk.get("promptFeedback") or {}
            if _field(feedback, "blockReason") is not None:
                blocked = str(_field(feedback, "blockReason"))
            for candidate in chunk.get("candidates") or []:
                for part in (candidate.get("content") or {}).get("parts") or []:
                    for event in self._part(part):
                        yield event
                if candidate.get("finishReason") is not None:
                    finish = str(candidate["finishReason"])
        if finish is None and blocked is None:
            raise StreamCutError("the stream ended before a finish reason", provider=PROVIDER)
        if finish in _MALFORMED_CALL:
            # The model wrote a tool call that is not valid: there is no call to run, and no text either.
            # A fresh response usually gets it right, so it is retried like any broken response.
            raise MalformedResponseError(f"the model wrote a malformed tool call ({finish})", provider=PROVIDER)
        parts: list[Any] = []
        for seg in self.segments:
            if seg.kind == "thought":
                parts.append(ThinkingPart("".join(seg.text), seg.signature, PROVIDER))
                continue
            if seg.signature:
                parts.append(ThinkingPart("", seg.signature, PROVIDER))
            if seg.kind == "call" and seg.call is not None:
                parts.append(seg.call)
            elif seg.text and "".join(seg.text):
                parts.append(TextPart("".join(seg.text)))
        if blocked is not None:
            stop: StopReason = "refusal"
        elif any(isinstance(p, ToolCall) for p in parts):
            stop = "tool_use"
        else:
            stop = _STOP.get(finish or "STOP", "end_turn")
        yield ResponseComplete(AssistantMessage(tuple(parts), PROVIDER, self.model, usage, stop, response_id))

    def _part(self, part: dict[str, Any]) -> list[ModelEvent]:
        signature = _signature(_field(part, "thoughtSignature"))
        events: list[ModelEvent] = []
        fc = _field(part, "functionCall")
        if fc is not None:
            seg = self._segment("call")
            cid = fc.get("id") or f"gcall_{uuid.uuid4().hex[:16]}"
            name = fc.get("name") or ""
            seg.call = ToolCall(cid, name, dict(fc.get("args") or {}))
            events.append(ToolCallDelta(self.calls, cid, name, json.dumps(seg.call.arguments)))
            self.calls += 1
        elif part.get("text") is not None:
            text = str(part["text"])
            seg = self._segment("thought" if part.get("thought") else "text")
            seg.text.append(text)
            if text:
                events.append(ThinkingDelta(text) if part.get("thought") else TextDelta(text))
        else:
            return events  # parts sagent does not use (inline data, code execution) are skipped
        if signature:
            seg.signature = signature
        return events


# The snake_case spelling of the fields read inside a chunk's parts, usage and feedback: the API writes
# camelCase, and the SDK's types read either there, so a server that writes the other is read as well.
_SNAKE = {
    "thoughtSignature": "thought_signature",
    "functionCall": "function_call",
    "blockReason": "block_reason",
    "promptTokenCount": "prompt_token_count",
    "candidatesTokenCount": "candidates_token_count",
    "thoughtsTokenCount": "thoughts_token_count",
    "cachedContentTokenCount": "cached_content_token_count",
}


def _field(obj: dict[str, Any], name: str) -> Any:
    """`obj[name]` under its camelCase name or its snake_case one; None when neither is there."""
    value = obj.get(name)
    return obj.get(_SNAKE[name]) if value is None else value


def _signature(wire: Any) -> str | None:
    """A thought signature as sagent keeps it (standard base64) from the URL-safe or standard base64 the
    API sends; None for none."""
    if not wire or not isinstance(wire, str):
        return None
    raw = base64.urlsafe_b64decode(wire.replace("+", "-").replace("/", "_") + "=" * (-len(wire) % 4))
    return base64.b64encode(raw).decode("ascii")


def _usage(u: dict[str, Any]) -> Usage:
    cached = _field(u, "cachedContentTokenCount") or 0
    # Thoughts bill as output.
    output = (_field(u, "candidatesTokenCount") or 0) + (_field(u, "thoughtsTokenCount") or 0)
    prompt = _field(u, "promptTokenCount") or 0
    return Usage(input_tokens=prompt - cached, output_tokens=output, cache_read_tokens=cached)


_DELAY = re.compile(r"^([\d.]+)s$")


def map_error(error: Exception, endpoint: str = DEFAULT_BASE_URL, idle_timeout: float | None = None) -> ProviderError:
    """The typed error for an exception from the SDK, or from the HTTP stack under it mid-stream."""
    from google.genai import errors

    if isinstance(error, errors.APIError):
        message = error.message or str(error)
        return error_for_status(error.code or 500, message, provider=PROVIDER, retry_after=_retry_after(error))
    return classify_or_raise(error, provider=PROVIDER, endpoint=endpoint.rstrip("/"), idle_timeout=idle_timeout)


async def _close_response(error: object) -> None:
    """Close the HTTP response an error raised mid-stream holds: google-genai leaves it open, and the
    connection's reader would otherwise be finalised later with a traceback on stderr."""
    stream = getattr(getattr(error, "response", None), "response_stream", None)
    close = getattr(stream, "aclose", None)
    if close is not None:
        # Closing a broken connection may fail too; the error being raised is what matters.
        with contextlib.suppress(Exception):
            await close()


def _retry_after(error: Any) -> float | None:
    """A `retry-after` header, or the `RetryInfo.retryDelay` Google puts in the error details."""
    response = getattr(error, "response", None)
    headers = getattr(response, "headers", None)
    if headers is not None and headers.get("retry-after"):
        return parse_retry_after(headers.get("retry-after"))
    details = error.details.get("error", error.details) if isinstance(error.details, dict) else {}
    for detail in details.get("details", []) if isinstance(details, dict) else []:
        match = _DELAY.match(str(detail.get("retryDelay", ""))) if isinstance(detail, dict) else None
        if match:
            return float(match.group(1))
    return None


# ------------------------------------------------------------------------------------------- history
