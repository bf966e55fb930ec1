"""The domain proxy: how a sandbox without network reaches the hosts `allowedDomains` names, and no other.

It listens on a unix socket in the sandbox's control folder (the sandbox's supervisor carries connections
from 127.0.0.1 inside the sandbox to it; HTTP_PROXY and HTTPS_PROXY point there). It speaks HTTP proxying:
`CONNECT host:port` (HTTPS, and any TLS) and absolute-URI requests (`GET http://host/path`, one request per
connection). A host not on the list gets 403 and nothing is connected. It runs in threads of sagent's
process, so it serves every event loop and ends with sagent.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from pathlib import Path
from urllib.parse import urlsplit

from sagent.sandbox.policy import domain_allowed

MAX_HEAD = 64 * 1024
CONNECT_TIMEOUT = 30.0


class DomainProxy:
    """A proxy on the unix socket `path` that lets through only hosts matching `domains`."""

    def __init__(self, path: Path, domains: tuple[str, ...]) -> None:
        self.path = path
        self.domains = domains
        self.refused: list[str] = []  # hosts refused, for tests and the benchmark
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(path))
        self._server.listen(64)
        self._closed = False
        threading.Thread(target=self._serve, name="sagent-sandbox-proxy", daemon=True).start()

    def close(self) -> None:
        self._closed = True
        with contextlib.suppress(OSError):
            self._server.shutdown(socket.SHUT_RDWR)
        self._server.close()
        self.path.unlink(missing_ok=True)

    def _serve(self) -> None:
        while not self._closed:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(client,), daemon=True).start()

    def _handle(self, client: socket.socket) -> None:
        try:
            head, early = _read_head(client)
            if head is None:
                client.close()
                return
            line, _, rest = head.partition(b"\r\n")
            parts = line.decode("latin-1").split()
            if len(parts) != 3:
                return _answer(client, 400, "not an HTTP proxy request")
            method, target, version = parts
            if method.upper() == "CONNECT":
                host, _, port = target.rpartition(":")
                if not host or not port.isdigit():
                    return _answer(client, 400, f"CONNECT needs host:port, not {target}")
                host = host.strip("[]")
                if not self._allowed(host):
                    return _answer(client, 403, f"sagent's sandbox does not allow {host} (sandbox.allowedDomains)")
                upstream = self._connect(client, host, int(port))
                if upstream is None:
                    return None
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                _splice(client, upstream, early)
                return None
            url = urlsplit(target)
            if url.scheme != "http" or not url.hostname:
                return _answer(client, 400, "only http:// URLs and CONNECT go through sagent's proxy")
            if not self._allowed(url.hostname):
                return _answer(client, 403, f"sagent's sandbox does not allow {url.hostname} (sandbox.allowedDomains)")
            upstream = self._connect(client, url.hostname, url.port or 80)
            if upstream is None:
                return None
            path = (url.path or "/") + (f"?{url.query}" if url.query else "")
            headers = [
                h
                for h in rest.split(b"\r\n")
                if h and h.split(b":", 1)[0].strip().lower() not in (b"connection", b"proxy-connection", b"keep-alive")
            ]
            # One request per connection: a second request on it could name another host.
            request = f"{method} {path} {version}\r\n".encode("latin-1") + b"\r\n".join(
                [*headers, b"Connection: close"]
            )
            upstream.sendall(request + b"\r\n\r\n")
            _splice(client, upstream, early)
        except OSError:
            with contextlib.suppress(OSError):
                client.close()
        return None

    def _allowed(self, host: str) -> bool:
        if domain_allowed(host, self.domains):
            return True
        self.refused.append(host)
        return False

    def _connect(self, client: socket.socket, host: str, port: int) -> socket.socket | None:
        try:
            return socket.create_connection((host, port), timeout=CONNECT_TIMEOUT)
        except OSError as error:
            _answer(client, 502, f"cannot reach {host}:{port} ({error.strerror or error})")
            return None


def _read_head(sock: socket.socket) -> tuple[bytes | None, bytes]:
    """The request line and headers (up to the blank line), and what was read after them (sent on as is)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk or len(data) > MAX_HEAD:
            return None, b""
        data += chunk
    head, _, early = data.partition(b"\r\n\r\n")
    return head, early


def _answer(client: socket.socket, status: int, text: str) -> None:
    reason = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}.get(status, "Error")
    body = (text + "\n").encode()
    head = f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n"
    with contextlib.suppress(OSError):
        client.sendall(head.encode() + b"Connection: close\r\n\r\n" + body)
    client.close()


def _splice(client: socket.socket, upstream: socket.socket, early: bytes) -> None:
    upstream.settimeout(None)
    if early:
        upstream.sendall(early)
    other = threading.Thread(target=_pipe, args=(upstream, client), daemon=True)
    other.start()
    _pipe(client, upstream)
    other.join()
    client.close()
    upstream.close()


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(1 << 16):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)
