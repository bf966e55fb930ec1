"""One classification of transport failures, the same for every provider.

Whatever SDK made the request, a failure on the way (the connection refused or reset, the stream cut
before or after content, nothing received for too long, a body that ends early, a chunk that does not
parse) becomes one of the typed transient errors below, so `stream_with_retry` retries it with the same
policy, and the message names the endpoint that was tried.

The SDKs sit on different HTTP stacks (httpx or httpx2, over httpcore or httpcore2) whose exception
classes share their names, and the SDKs wrap them (`APIConnectionError`, `APITimeoutError`) or let them
escape from stream iteration unwrapped. So errors are recognised by class name along the exception's
chain of causes, without importing any of those stacks here.
"""

from __future__ import annotations

import asyncio
import errno
import json
import socket
from collections.abc import AsyncIterator, Iterator
from typing import TypeVar

from sagent.providers.base import ProviderConnectionError, ProviderError

# Seconds a stream may stay silent before it is abandoned and the request sent again. Long enough for a
# reasoning model that streams nothing while it thinks (the APIs send keep-alive pings within it), short
# enough that a hung connection costs minutes, not the 10-minute request timeout.
DEFAULT_IDLE_TIMEOUT = 300.0
# Seconds to open a connection: a blackholed host fails here instead of waiting for the idle limit.
CONNECT_TIMEOUT = 15.0

# Where the exception classes that name transport failures live (by top-level module).
_TRANSPORT_MODULES = {"httpx", "httpx2", "httpcore", "httpcore2", "h11", "h2", "anyio", "aiohttp"}
_SDK_MODULES = {"anthropic", "openai", "google"}


class StreamCutError(ProviderConnectionError):
    """The connection closed or was reset before the response was complete."""


class StreamIdleError(ProviderConnectionError):
    """Nothing arrived on the stream for longer than the idle limit."""


class MalformedResponseError(ProviderConnectionError):
    """A chunk of the response could not be parsed (or the model's output could not be used as sent).
    Worth sending the request again: the next response is generated afresh."""

    kind = "malformed_response"


def endpoint_of(client: object, fallback: str | None = None) -> str:
    """The base URL an SDK client sends to, for error messages."""
    url = getattr(client, "base_url", None) or fallback or "the provider's API"
    return str(url).rstrip("/")


def classify(
    error: BaseException, *, provider: str, endpoint: str, idle_timeout: float | None = None
) -> ProviderError | None:
    """The typed transient error for a transport or parse failure, or None when `error` is not one
    (an HTTP status error is the adapter's to read; anything else is a defect and should surface)."""
    chain = list(_chain(error))
    names = [_names(e) for e in chain]
    reason = _os_reason(chain)

    def seen(*wanted: str, kinds: tuple[type[BaseException], ...] = ()) -> bool:
        """Whether any exception of the chain is one of these (by class name, or by type)."""
        return any(n & set(wanted) for n in names) or any(isinstance(e, kinds) for e in chain if kinds)

    if seen("ConnectTimeout"):
        return ProviderConnectionError(f"cannot reach {endpoint}: timed out connecting", provider=provider)
    if seen("ConnectError", kinds=(ConnectionRefusedError, socket.gaierror)):
        return ProviderConnectionError(f"cannot reach {endpoint}: {reason or 'connection failed'}", provider=provider)
    if seen("ReadTimeout", "WriteTimeout", "PoolTimeout", "TimeoutException", "APITimeoutError", kinds=(TimeoutError,)):
        limit = f" for {idle_timeout:g} s" if idle_timeout else ""
        return StreamIdleError(f"no data from {endpoint}{limit}: the stream stalled", provider=provider)
    if seen("RemoteProtocolError", "ProtocolError", "ServerDisconnectedError", "ClientPayloadError"):
        return _cut(endpoint, provider, reason or _detail(chain) or "incomplete body")
    if seen("ReadError", "WriteError", "NetworkError", "ClientOSError") or reason:
        return _cut(endpoint, provider, reason or _short(error) or type(error).__name__)
    parse = next((e for e in chain if _is_parse_error(e)), None)
    if parse is not None:
        return MalformedResponseError(
            f"a malformed chunk from {endpoint}: {type(parse).__name__}: {_short(parse)}", provider=provider
        )
    if seen("APIConnectionError"):  # the SDK's own wrapper, with no cause left to read
        return ProviderConnectionError(f"cannot reach {endpoint}: {_short(error)}", provider=provider)
    return None


def classify_or_raise(
    error: Exception, *, provider: str, endpoint: str, idle_timeout: float | None = None
) -> ProviderError:
    """`classify`, for an exception that is not an HTTP status error. An error an SDK raised that is not
    a transport failure is still a failed request (transient, named as it is), and so is a `ValueError`
    from reading the response; anything else is a defect and is raised as it is."""
    fault = classify(error, provider=provider, endpoint=endpoint, idle_timeout=idle_timeout)
    if fault is not None:
        return fault
    if isinstance(error, ValueError):
        return MalformedResponseError(
            f"a response from {endpoint} that could not be read: {type(error).__name__}: {_short(error)}",
            provider=provider,
        )
    if type(error).__module__.split(".")[0] in _SDK_MODULES:
        return ProviderConnectionError(f"{type(error).__name__}: {_short(error)}", provider=provider)
    raise error


T = TypeVar("T")


async def idle_limited(items: AsyncIterator[T], seconds: float | None) -> AsyncIterator[T]:
    """`items`, abandoned with `TimeoutError` when the next one takes longer than `seconds` to arrive.
    For an SDK whose HTTP read timeout cannot be set apart from its whole-request deadline."""
    iterator = aiter(items)
    while True:
        try:
            async with asyncio.timeout(seconds):  # in this task: the SDK's own cancel scopes stay intact
                item = await anext(iterator)
        except StopAsyncIteration:
            return
        yield item


def _cut(endpoint: str, provider: str, detail: str) -> StreamCutError:
    return StreamCutError(
        f"the connection to {endpoint} was cut before the response was complete ({detail})", provider=provider
    )


def _chain(error: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen and len(seen) < 16:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _names(error: BaseException) -> set[str]:
    return {c.__name__ for c in type(error).__mro__ if c.__module__.split(".")[0] in _TRANSPORT_MODULES | _SDK_MODULES}


_REASONS = {
    errno.ECONNREFUSED: "connection refused",
    errno.ECONNRESET: "connection reset",
    errno.EPIPE: "connection reset",
    errno.ECONNABORTED: "connection aborted",
    errno.EHOSTUNREACH: "host unreachable",
    errno.ENETUNREACH: "network unreachable",
    errno.ETIMEDOUT: "timed out",
}


def _os_reason(chain: list[BaseException]) -> str:
    """What the operating system said, in words, from the innermost `OSError` of the chain."""
    for error in reversed(chain):
        if isinstance(error, socket.gaierror):
            return "the host name does not resolve"
        if isinstance(error, OSError) and error.errno in _REASONS:
            return _REASONS[error.errno]
        if isinstance(error, ConnectionRefusedError):
            return "connection refused"
        if isinstance(error, ConnectionResetError | BrokenPipeError):
            return "connection reset"
    text = " ".join(str(e) for e in chain).lower()  # httpcore keeps only the text of some socket errors
    for words in ("connection refused", "connection reset", "name or service not known", "nodename nor servname"):
        if words in text:
            return "the host name does not resolve" if "name" in words else words
    return ""


def _detail(chain: list[BaseException]) -> str:
    for error in chain:
        text = str(error)
        if "incomplete chunked read" in text:
            return "incomplete chunked read"
        if "without sending" in text or "disconnected" in text.lower():
            return "the server disconnected"
    return ""


def _is_parse_error(error: BaseException) -> bool:
    if isinstance(error, json.JSONDecodeError | UnicodeDecodeError):
        return True
    names = {c.__name__ for c in type(error).__mro__}
    # pydantic's ValidationError; the SDKs' APIResponseValidationError; httpx's DecodingError (a body
    # that does not decompress)
    return bool(names & {"ValidationError", "APIResponseValidationError", "DecodingError"})


def _short(error: BaseException, limit: int = 200) -> str:
    text = " ".join(str(error).split())
    return text[:limit] + ("…" if len(text) > limit else "")
