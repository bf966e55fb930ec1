"""Real OS processes for the fleet tests: `sagent serve` hosts (each against its own fake Anthropic
server, so each agent's requests are its own), and `sagent fleet` commands."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.fakes.anthropic_server import FakeAnthropic, text_response
from tests.fakes.nats_server import NatsServer

MODEL = "claude-sonnet-4-6"
WAIT = 90.0  # seconds: a generous functional timeout, never a speed assertion


def sent_texts(request: dict[str, Any]) -> list[str]:
    """The texts of the user turns of a request to the fake (peer messages are user turns too)."""
    found = []
    for message in request["body"]["messages"]:
        if message["role"] != "user":
            continue
        content = message["content"]
        if isinstance(content, str):
            found.append(content)
        else:
            found += [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
    return found


def echo(request: dict[str, Any]) -> Any:
    texts = sent_texts(request)
    return text_response("echo: " + (texts[-1] if texts else ""))


def environment(fake: FakeAnthropic, home: Path) -> dict[str, str]:
    return {
        **os.environ,
        "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests-0001",
        "ANTHROPIC_BASE_URL": fake.url,
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CONFIG_HOME": str(home / "config"),
    }


def wait_until(check: Callable[[], Any], what: str, timeout: float = WAIT) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


class Served:
    """One `sagent serve` process for `label`, its stderr collected as it comes."""

    def __init__(
        self, nats: NatsServer, fleet: str, label: str, fake: FakeAnthropic, home: Path, *extra: str, ends: bool = False
    ) -> None:
        """`ends`: the process may end as soon as it serves (a stop waits in its inbox)."""
        self.label = label
        self.fake = fake
        home.mkdir(parents=True, exist_ok=True)
        self.env = environment(fake, home)
        command = [sys.executable, "-m", "sagent.cli.main", "serve", "--nats", nats.url, "--fleet", fleet]
        command += ["--label", label, "--model", MODEL, "--cwd", str(home), *extra]
        self.process = subprocess.Popen(command, env=self.env, stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        wait_until(lambda: any("is serving" in line for line in self.lines) or self.process.poll() is not None, "serve")
        assert ends or self.process.poll() is None, self.stderr

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line)

    @property
    def stderr(self) -> str:
        return "".join(self.lines)

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.terminate()
        code = self.process.wait(WAIT)
        self._reader.join(10)
        return code

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(WAIT)
        self._reader.join(10)


def fleet(nats: NatsServer, fleet_name: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """Run `sagent fleet ARGS` against the fleet."""
    command = [sys.executable, "-m", "sagent.cli.main", "fleet", *args, "--nats", nats.url, "--fleet", fleet_name]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=WAIT)


class EventTap:
    """Every event the agents of a fleet publish (what `sagent fleet attach` shows), by label, as it comes:
    `results(label)` are the records of each run's end."""

    def __init__(self, nats: NatsServer, fleet_name: str) -> None:
        import json

        from sagent.fleet_nats.bus import NatsBus

        self.bus = NatsBus(nats.url, fleet=fleet_name)
        self.events: list[tuple[str, dict[str, Any]]] = []

        async def take(msg: Any) -> None:
            label = msg.subject.split(".")[3]
            self.events.append((label, json.loads(msg.data)))

        async def subscribe() -> Any:
            return await self.bus.nc.subscribe(f"sagent.{fleet_name}.agent.*.events", cb=take)

        self.bus.call(subscribe(), 10)

    def results(self, label: str) -> list[dict[str, Any]]:
        return [e for name, e in list(self.events) if name == label and e.get("type") == "result"]

    def close(self) -> None:
        self.bus.close()
