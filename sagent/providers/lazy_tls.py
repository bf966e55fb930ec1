"""A TLS context for a client on a plain HTTP endpoint, whose trust store loads only if it is used."""

from __future__ import annotations

import ssl
import threading
from typing import Any


class TrustOnFirstUse(ssl.SSLContext):
    """A client TLS context (certificates and host names verified, as `ssl.create_default_context` sets
    them) whose trust store, the system's default one, is loaded when it first wraps a connection rather
    than when it is built.

    Loading the trust store takes tens of milliseconds. A client on a plain HTTP endpoint (a local server)
    makes a TLS connection only if something sends it elsewhere (a redirect, an HTTPS proxy); until then,
    nothing is loaded for nothing."""

    _trusted = False
    _trust_lock = threading.Lock()

    def __new__(cls, protocol: int = ssl.PROTOCOL_TLS_CLIENT, *args: Any, **kwargs: Any) -> TrustOnFirstUse:
        return super().__new__(cls, protocol, *args, **kwargs)

    def _trust(self) -> None:
        with self._trust_lock:
            if not self._trusted:
                self.load_default_certs(ssl.Purpose.SERVER_AUTH)
                self._trusted = True

    def wrap_socket(self, *args: Any, **kwargs: Any) -> ssl.SSLSocket:
        self._trust()
        return super().wrap_socket(*args, **kwargs)

    def wrap_bio(self, *args: Any, **kwargs: Any) -> ssl.SSLObject:
        self._trust()
        return super().wrap_bio(*args, **kwargs)
