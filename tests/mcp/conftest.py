"""Real MCP servers (tests/fakes/mcp_server.py, written with the SDK) for the MCP tests."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from sagent.mcp.config import ServerConfig

ROOT = Path(__file__).resolve().parents[2]
SERVER = str(ROOT / "tests" / "fakes" / "mcp_server.py")


def stdio(name: str, kind: str) -> ServerConfig:
    """A stdio server of `kind` (see tests/fakes/mcp_server.py), named `name`."""
    return ServerConfig(name, "stdio", command=sys.executable, args=(SERVER, kind))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def http_server() -> Iterator[Callable[[str, str], str]]:
    """Start a server of a kind over `--http` or `--sse` on 127.0.0.1; gives its endpoint's URL."""
    started: list[subprocess.Popen[bytes]] = []

    def start(kind: str, transport: str = "http") -> str:
        port = free_port()
        process = subprocess.Popen(
            [sys.executable, SERVER, kind, f"--{transport}", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        started.append(process)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert process.poll() is None, "the MCP server exited before listening"
                time.sleep(0.1)
        return f"http://127.0.0.1:{port}/{'mcp' if transport == 'http' else 'sse'}"

    yield start
    for process in started:
        process.terminate()
        process.wait(10)
