"""A real `nats-server` with JetStream, started on a free 127.0.0.1 port with its own store folder, for
the tests and benchmarks of fleets across processes. Never a server the caller did not start."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

BINARY_PATHS = ("/usr/sbin/nats-server", "/usr/bin/nats-server")


def nats_binary() -> str | None:
    """The nats-server program, or None when it is not installed (Debian: `apt-get install nats-server`)."""
    found = shutil.which("nats-server")
    if found:
        return found
    return next((p for p in BINARY_PATHS if Path(p).exists()), None)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class NatsServer:
    """One nats-server process: `start()`, `stop()`, `restart()` (same port and store: JetStream keeps
    what it stored), `url`. Extra arguments (auth) go on its command line."""

    def __init__(self, store: Path, *, port: int | None = None, extra: tuple[str, ...] = ()) -> None:
        binary = nats_binary()
        if binary is None:
            raise RuntimeError("nats-server is not installed")
        self.binary = binary
        self.store = store
        self.port = port or free_port()
        self.extra = extra
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def start(self) -> NatsServer:
        self.store.mkdir(parents=True, exist_ok=True)
        command = [self.binary, "-js", "-a", "127.0.0.1", "-p", str(self.port), "-sd", str(self.store), *self.extra]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"nats-server exited with {self.process.returncode}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("nats-server did not start listening")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()
