"""Import a provider's SDK in a background thread as soon as the provider is known.

An SDK import (a second or more for `anthropic`) is most of what a run waits for before its first request.
Started right after the flags are parsed, it goes on while the settings, memory files, tools and the
session are prepared; the adapter's own `import` then finds the modules loaded (or waits on Python's
import lock for the rest). Besides the SDK, the modules its first request would import lazily (its HTTP
stack's async backend) are imported too, so the request itself imports nothing.

Nothing here is required: a failed import is left for the adapter to import again and report.
"""

from __future__ import annotations

import contextlib
import importlib
import threading

# What a first request imports after the SDK: the async backend of the HTTP stack the SDKs share.
_TRANSPORT = ("anyio._backends._asyncio", "anyio._core._sockets", "anyio.streams.stapled")


def sdk_of(provider: str) -> str | None:
    """The module of the SDK `provider` runs on (its `ProviderSpec.sdk`), or None (the local model needs
    none, and a name no spec knows is left for the registry to report)."""
    from sagent.providers.specs import find_spec

    spec = find_spec(provider)
    return spec.sdk if spec is not None else None


def start(provider: str) -> threading.Thread | None:
    """Begin importing `provider`'s SDK in a daemon thread (it cannot keep the process from exiting)."""
    sdk = sdk_of(provider)
    if sdk is None:
        return None
    thread = threading.Thread(target=_import, args=(sdk,), name="sagent-prefetch", daemon=True)
    thread.start()
    return thread


def _import(sdk: str) -> None:
    for name in (sdk, *_TRANSPORT):
        with contextlib.suppress(Exception):  # the adapter imports it again and says what is wrong
            importlib.import_module(name)
