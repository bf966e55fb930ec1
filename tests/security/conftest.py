"""Fixtures the attacks share: `nats`, a real nats-server on a free 127.0.0.1 port (skipped, saying why,
where it is not installed), the same one the fleet tests use."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.nats_server import NatsServer
from tests.fleet_nats.conftest import nats_server


@pytest.fixture
def nats(nats_server: NatsServer) -> Iterator[NatsServer]:
    yield nats_server


__all__ = ["nats", "nats_server"]
