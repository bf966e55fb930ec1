"""An SDK client built once, on the first request or earlier in a background thread.

Building a client is more than an object: the SDK's HTTP stack imports its transport, and the TLS context
loads the system's trust store (tens of milliseconds, spent outside Python's interpreter lock). A run warms
its model as soon as the model is built, so that work overlaps the rest of the start-up (the tools, the
session, the event loop) instead of delaying the first request.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import threading
from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

from sagent.lib import deferred_import

_C = TypeVar("_C")

_warming: list[threading.Thread] = []
_WAIT_AT_EXIT = 30.0  # seconds an exit waits, at most, for a warm-up under way


class SdkClient(Generic[_C]):
    """One model's SDK client: `get()` builds it the first time (or waits for a warm-up under way) and
    then returns the same one; `warm()` starts building it in a daemon thread."""

    def __init__(self, build: Callable[[], _C]) -> None:
        self._build = build
        self._lock = threading.Lock()
        self._client: _C | None = None

    def get(self) -> _C:
        """The client, built now if nobody built it yet; the builder's error (a missing key) is raised here.

        A caller asks for it to make a request: from then on, the parts of the SDK that the start-up left
        for later (`sagent.lib.deferred_import`) are loaded in the background."""
        client = self._get()
        deferred_import.finish_in_background()
        return client

    def _get(self) -> _C:
        with self._lock:
            if self._client is None:
                self._client = self._build()
            return self._client

    def warm(self, then: Callable[[_C], object] | None = None, modules: Iterable[str] = ()) -> None:
        """Build the client in the background, then call `then` on it (to touch what the SDK loads on first
        use) and import `modules` (what its first request would import). A failure is left for `get()`
        to meet again and report."""

        def work() -> None:
            with contextlib.suppress(Exception):
                client = self._get()
                if then is not None:
                    then(client)
            for name in modules:
                with contextlib.suppress(Exception):
                    importlib.import_module(name)

        thread = threading.Thread(target=work, name="sagent-warm", daemon=True)
        _warming[:] = [t for t in _warming if t.is_alive()] + [thread]
        thread.start()

    def take(self) -> _C | None:
        """The client built so far, forgotten here (the next `get()` builds a new one), for closing it."""
        with self._lock:
            client, self._client = self._client, None
            return client


@atexit.register
def _wait_for_warm_ups() -> None:
    """At exit, wait for the warm-ups under way: the interpreter's teardown stopping a daemon thread inside
    an SDK's native code aborts the process (a script that ends right after building an `Agent`)."""
    for thread in list(_warming):
        thread.join(_WAIT_AT_EXIT)
