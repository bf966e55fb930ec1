"""The model protocol every provider implements, its typed errors, and retry for transient failures."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from sagent.events import ModelEvent, ResponseComplete, Retrying
from sagent.types import AssistantMessage, ModelRequest


@runtime_checkable
class Model(Protocol):
    """Streams one assistant response for a provider-neutral request.

    `stream()` yields `TextDelta`, `ThinkingDelta` and `ToolCallDelta` events as they arrive and ends with
    exactly one `ResponseComplete`. Failures raise a `ProviderError` subclass.

    `provider`, `name` and `stream` are what every model writes. The optional capabilities below have
    defaults: a class that subclasses `Model` inherits them and overrides the ones it knows better.
    """

    @property
    def provider(self) -> str: ...

    @property
    def name(self) -> str: ...

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]: ...

    @property
    def context_window(self) -> int | None:
        """The model's context window in tokens, for a model the catalog cannot know (a local server);
        None lets the catalog say. Automatic compaction measures against it."""
        return None

    @property
    def accepts_images(self) -> bool | None:
        """Whether the model reads images; None lets the catalog say."""
        return None

    @property
    def structured_output(self) -> bool:
        """Whether the model honours `ModelRequest.response_schema` (the response's text is then the JSON
        object); False by default, and the schema is not sent."""
        return False

    @property
    def subscription(self) -> bool:
        """True for a model the user's own plan pays for (a model CLI on its own sign-in): its use is not billed
        per token, so a USD budget does not count it (`max_subscription_tokens` does)."""
        return False

    async def aclose(self) -> None:
        """Release what the model holds (an HTTP client, a local server); nothing by default."""
        return None

    def warm(self) -> None:
        """Start preparing the first request in the background (an SDK's client, its HTTP stack), so the
        preparation overlaps whatever the caller does next; nothing by default. Never raises: what fails
        here fails again, and is reported, on the first request."""
        return None


def forced_tool_answer(message: AssistantMessage, tool: str) -> AssistantMessage:
    """A response to a request that forced the call of `tool` to get structured output (Anthropic's way):
    that call's arguments become the message's text, as JSON, and the response a finished answer."""
    import json
    from dataclasses import replace

    from sagent.types import TextPart, ToolCall

    parts = tuple(
        TextPart(json.dumps(p.arguments, ensure_ascii=False)) if isinstance(p, ToolCall) and p.name == tool else p
        for p in message.content
    )
    return replace(message, content=parts, stop_reason="end_turn")


# ------------------------------------------------------------------------------------------------ errors


class ProviderError(Exception):
    """A failed model request. `transient` errors are worth retrying; the rest are not."""

    kind = "provider"
    transient = False

    def __init__(
        self,
        message: str,
        *,
        provider: str = "",
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.provider = provider
        self.status = status
        self.retry_after = retry_after


class RateLimitError(ProviderError):
    kind = "rate_limited"
    transient = True


class OverloadedError(ProviderError):
    kind = "overloaded"
    transient = True


class ServerError(ProviderError):
    """A 5xx from the provider."""

    kind = "server"
    transient = True


class ProviderConnectionError(ProviderError):
    """The connection failed or the stream was cut before the response was complete."""

    kind = "connection"
    transient = True


class ContextTooLongError(ProviderError):
    kind = "context_too_long"


class AuthenticationError(ProviderError):
    kind = "authentication"


class BadRequestError(ProviderError):
    kind = "bad_request"


_TOO_LONG = (
    "prompt is too long",
    "context_length_exceeded",
    "maximum context length",
    "context length",
    "exceeds the maximum number of tokens",  # Gemini
)


async def close_model(model: Model) -> None:
    """Release what a model holds (an HTTP client, a local server), for the models that hold anything."""
    await model.aclose()


def error_for_status(status: int, message: str, *, provider: str, retry_after: float | None = None) -> ProviderError:
    """The typed error for an HTTP status and the provider's message, the same rules for every provider."""
    lowered = message.lower()
    kind: type[ProviderError]
    if status == 429:
        kind = RateLimitError
    elif status in (503, 529) or "overloaded" in lowered:
        kind = OverloadedError
    elif status in (401, 403):
        kind = AuthenticationError
    elif any(words in lowered for words in _TOO_LONG):
        kind = ContextTooLongError
    elif status >= 500:
        kind = ServerError
    else:
        kind = BadRequestError
    return kind(message, provider=provider, status=status, retry_after=retry_after)


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a `retry-after` (or `retry-after-ms`-converted) header value; None when absent."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # an HTTP date: rare from model APIs; fall back to backoff


# ------------------------------------------------------------------------------------------------- retry


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Exponential backoff with full jitter for transient errors; `retry-after` wins when given."""

    max_retries: int = 4
    base_delay: float = 1.0
    max_delay: float = 60.0

    def delay(self, attempt: int, error: ProviderError, rand: Callable[[], float] = random.random) -> float:
        """Seconds to wait before retry number `attempt` (1-based)."""
        if error.retry_after is not None:
            return min(error.retry_after, self.max_delay)
        ceiling = min(self.max_delay, self.base_delay * 2.0 ** (attempt - 1))
        return ceiling / 2 + rand() * ceiling / 2


async def stream_with_retry(
    model: Model,
    request: ModelRequest,
    policy: RetryPolicy,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
) -> AsyncIterator[ModelEvent | Retrying]:
    """`model.stream(request)`, sent again after transient errors.

    When a retry happens after some deltas were already yielded, a `Retrying` event tells the consumer to
    discard them: the whole response streams again from the start.
    """
    attempt = 0
    while True:
        try:
            async for event in model.stream(request):
                yield event
                if isinstance(event, ResponseComplete):
                    return
            raise ProviderConnectionError("the model stream ended without a complete response")
        except ProviderError as error:
            attempt += 1
            if not error.transient or attempt > policy.max_retries:
                if attempt > 1:  # the one error the caller sees says the retries were made
                    error.message = f"{error.message} (gave up after {attempt} attempts)"
                raise
            delay = policy.delay(attempt, error)
            yield Retrying(attempt, delay, f"{error.kind}: {error.message}")
            await sleep(delay)


async def complete(model: Model, request: ModelRequest, policy: RetryPolicy) -> AssistantMessage:
    """The whole response to `request`, retried like `stream_with_retry`, for callers that need no deltas
    (a compaction summary, a tool's question to a small model)."""
    async for event in stream_with_retry(model, request, policy):
        if isinstance(event, ResponseComplete):
            return event.message
    raise ProviderConnectionError("the model stream ended without a complete response")
