"""Import a provider's SDK in a background thread as soon as the provider is known.

An SDK import (a second or more for `anthropic`) is most of what a run waits for before its first request.
Started right after the flags are parsed, it goes on while the settings, memory files, tools and the
session are prepared; the adapter's own `import` then finds the modules loaded (or waits on Python's
import lock for the rest). Besides the SDK, the modules its first request would import lazily (its HTTP
stack's async backend) are imported too, so the request itself imports nothing.

For the SDKs whose clients run on `httpx2` (anthropic, openai, google-genai), the TLS context their
client would build (loading the system's trust store, tens of milliseconds spent outside Python's
interpreter lock) is built at the same time in a thread of its own, on the other core, and handed to the
clients (`tls_context`).
Not for an endpoint on plain `http://` (a local server): its client gets a context that loads the trust
store only if a TLS connection is ever made (a redirect, a proxy), so nothing is loaded for nothing.

Nothing here is required: a failed import is left for the adapter to import again and report.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import threading
from typing import TYPE_CHECKING

from sagent.lib import deferred_import, sdk_threads, startup

if TYPE_CHECKING:
    import ssl

# What a first request imports after the SDK: the HTTP stack's transport (loaded when a client is built)
# and its async backend, which the SDKs share.
_TRANSPORT = ("httpcore2", "anyio._backends._asyncio", "anyio._core._sockets", "anyio.streams.stapled")

# SDKs whose import, in the `sagent` command, leaves what a first request does not need for later
# (`sagent.lib.deferred_import`); tests/providers/test_deferred_import.py checks each, name by name,
# against its plain import.
DEFERRED = ("anthropic", "openai", "google.genai")

_started: dict[str, threading.Thread] = {}

# SDKs whose client runs on `httpx2`, and so takes a TLS context built here, with the variable that
# moves their default endpoint.
_TLS_SDKS = {"anthropic": "ANTHROPIC_BASE_URL", "openai": "OPENAI_BASE_URL", "google.genai": "GOOGLE_GEMINI_BASE_URL"}
_tls: list[ssl.SSLContext] = []
_tls_done = threading.Event()
_tls_started = threading.Event()


def start(provider: str, base_url: str | None = None) -> threading.Thread | None:
    """Begin importing `provider`'s SDK in a daemon thread (it cannot keep the process from exiting), and
    building its TLS context unless its endpoint (`base_url` when the user named one) is plain HTTP."""
    from sagent.providers.specs import find_spec

    spec = find_spec(provider)
    sdk = spec.sdk if spec is not None else None
    if spec is None or sdk is None:
        return None
    if sdk in _started:  # started already (from the command line's first look at its flags)
        return _started[sdk]
    startup.expect("sdk")  # the collector stays paused until the import is over
    if sdk in DEFERRED and startup.paused():  # the command only: a library user's imports stay as they are
        deferred_import.defer(sdk)
    thread = sdk_threads.start(lambda: _import(sdk), "sagent-prefetch")
    _started[sdk] = thread
    if sdk in _TLS_SDKS and not plain_http(endpoint(sdk, base_url or spec.base_url)) and not _tls_started.is_set():
        _tls_started.set()
        sdk_threads.start(_build_tls, "sagent-tls")
    return thread


def finished(sdk: str) -> None:
    """Wait until the background import of `sdk`, if one was started, is over: for code importing parts of
    a package whose modules import each other, which a second thread importing it at the same time can
    find half-initialised (an ImportError)."""
    thread = _started.get(sdk)
    if thread is not None:
        thread.join()


def endpoint(sdk: str, base_url: str | None) -> str | None:
    """Where a client of `sdk` sends its requests: `base_url`, else the variable that moves the SDK's default
    endpoint; None for the SDK's own default."""
    return base_url or os.environ.get(_TLS_SDKS.get(sdk, "")) or None


def plain_http(url: str | None) -> bool:
    """Whether `url` is an endpoint on plain HTTP, which needs no TLS."""
    return url is not None and url.strip().lower().startswith("http://")


def tls_context(sdk: str, base_url: str | None = None) -> ssl.SSLContext | None:
    """The TLS context for a client of `sdk` on `base_url` (None: the SDK's variable, else its default) to
    use instead of building its own: for a plain HTTP endpoint, one whose trust store loads on its first
    use (`lazy_tls.TrustOnFirstUse`); otherwise the one built at start-up, as `httpx2` builds its default
    one (waiting for it when it is still being built). None when none was started or building it failed
    (the SDK then builds its own, and reports what is wrong)."""
    if plain_http(endpoint(sdk, base_url)):
        from sagent.providers.lazy_tls import TrustOnFirstUse

        return TrustOnFirstUse()
    if not _tls_started.is_set():
        return None
    _tls_done.wait()
    return _tls[0] if _tls else None


def _build_tls() -> None:
    try:
        import httpx2

        _tls.append(httpx2.create_ssl_context())
    except Exception:
        pass
    finally:
        _tls_done.set()


def named_provider(argv: list[str]) -> str | None:
    """The provider `--provider NAME` (or `--provider=NAME`) names in `argv`, read before the flags are
    parsed so the import can start first; None when no flag names one (the settings files, the model or
    the environment decide, once the flags are parsed)."""
    return _flag(argv, "--provider")


def named_base_url(argv: list[str]) -> str | None:
    """The endpoint `--base-url URL` names in `argv`, read as `named_provider` reads the provider."""
    return _flag(argv, "--base-url")


def _flag(argv: list[str], flag: str) -> str | None:
    for n, arg in enumerate(argv):
        if arg == "--":
            return None
        if arg == flag and n + 1 < len(argv):
            return argv[n + 1]
        if arg.startswith(flag + "="):
            return arg.partition("=")[2]
    return None


def _import(sdk: str) -> None:
    try:
        for name in (sdk, *_TRANSPORT):
            with contextlib.suppress(Exception):  # the adapter imports it again and says what is wrong
                importlib.import_module(name)
    finally:
        startup.done("sdk")
