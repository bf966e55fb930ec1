"""A sandboxed command has no network unless the policy gives it: a server on the host's 127.0.0.1 is out
of reach; with `allowed_domains`, the hosts listed are reached through sagent's proxy and every other host
is refused there, and a direct connection still goes nowhere."""

from __future__ import annotations

import http.server
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from sagent.sandbox import SandboxPolicy
from sagent.tools.base import ToolContext
from sagent.tools.shell import Bash
from tests.security.sandbox_support import needs_sandbox

pytestmark = needs_sandbox


class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"hello from the host\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[int]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


def fetch(url: str) -> str:
    """A command that prints the body at `url` (through the proxy variables, as most tools do), or the error."""
    code = (
        "import sys, urllib.request\n"
        "try: print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())\n"
        'except Exception as e: print("failed:", e)\n'
    )
    return f"{sys.executable} -c '{code}' {url}"


def connect(port: int) -> str:
    """A command that opens a TCP connection to the host's 127.0.0.1:port directly, ignoring any proxy."""
    code = (
        "import socket, sys\n"
        'try: socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5); print("connected")\n'
        'except OSError as e: print("failed:", e)\n'
    )
    return f"{sys.executable} -c '{code}' {port}"


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


async def test_with_network_off_the_hosts_loopback_is_out_of_reach(ctx: ToolContext, server: int) -> None:
    out = await Bash().run({"command": f"{connect(server)}\n{fetch(f'http://127.0.0.1:{server}/')}"}, ctx)
    assert "connected" not in out and "hello from the host" not in out
    out = await Bash().run({"command": f"curl -sS --max-time 5 http://127.0.0.1:{server}/; echo rc=$?"}, ctx)
    assert "hello" not in out and "rc=0" not in out


async def test_with_network_off_names_do_not_resolve(ctx: ToolContext) -> None:
    out = await Bash().run(
        {"command": f"{sys.executable} -c \"import socket; socket.getaddrinfo('example.com', 80)\""}, ctx
    )
    assert "gaierror" in out and "exit code 1" in out


async def test_an_allowed_domain_passes_through_the_proxy(ctx: ToolContext, server: int) -> None:
    ctx.sandbox = SandboxPolicy(allowed_domains=("localhost",))
    out = await Bash().run({"command": fetch(f"http://localhost:{server}/")}, ctx)
    assert "hello from the host" in out
    out = await Bash().run({"command": f"curl -sS --max-time 10 http://localhost:{server}/"}, ctx)
    assert "hello from the host" in out


async def test_a_domain_not_allowed_is_refused_by_the_proxy(ctx: ToolContext, server: int) -> None:
    ctx.sandbox = SandboxPolicy(allowed_domains=("localhost", "*.example.org"))
    for url in (f"http://127.0.0.1:{server}/", f"http://localhost.evil.test:{server}/", "http://example.org/"):
        out = await Bash().run({"command": fetch(url)}, ctx)
        assert "hello" not in out and "failed" in out, (url, out)
    out = await Bash().run({"command": f"curl -sS --max-time 10 https://127.0.0.1:{server}/; echo rc=$?"}, ctx)
    assert "403" in out and "rc=0" not in out  # CONNECT refused too


async def test_with_allowed_domains_a_direct_connection_still_fails(ctx: ToolContext, server: int) -> None:
    ctx.sandbox = SandboxPolicy(allowed_domains=("localhost",))
    out = await Bash().run(
        {"command": f"{connect(server)}\nenv -u HTTP_PROXY -u http_proxy {fetch(f'http://localhost:{server}/')}"}, ctx
    )
    assert "connected" not in out and "hello" not in out


async def test_network_on_reaches_the_host(ctx: ToolContext, server: int) -> None:
    ctx.sandbox = SandboxPolicy(network=True)
    assert "connected" in await Bash().run({"command": connect(server)}, ctx)
