"""Each test gets its own real nats-server (JetStream on, a temporary store), stopped after it; the tests
are skipped, saying why, only where the nats-server program is not installed (CI installs it)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.nats_server import NatsServer, nats_binary


@pytest.fixture
def nats_server(tmp_path: Path) -> Iterator[NatsServer]:
    if nats_binary() is None:
        pytest.skip("nats-server is not installed (apt-get install nats-server); .ci/run installs it")
    server = NatsServer(tmp_path / "jetstream").start()
    try:
        yield server
    finally:
        server.stop()
