"""A fleet across processes: the round trip of a message with its receipt (AgentSend from one process to
an agent of another, through a real nats-server on loopback, stored in JetStream first), and how many
such messages one sender gets through per second. The receiving process hosts a label whose mailbox
answers at once, so the figure is the bus's own cost, not a model's. Then a fleet of 100 agents hosted by
4 processes (scripted models): the memory each agent adds to its process, and the time `fleet ls` takes
to list them all.

    uv run python benchmarks/fleet_nats.py
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sagent.agent.fleet import Envelope, Receipt  # noqa: E402
from sagent.fleet_nats.bus import NatsBus  # noqa: E402
from tests.fakes.nats_server import NatsServer, nats_binary  # noqa: E402

MESSAGES = 500
HOSTS = 4
AGENTS_PER_HOST = 25
TARGET_AGENT_MIB = 2.0
TARGET_LIST_MS = 500.0
TARGET_P50_MS = 2.0
TARGET_P99_MS = 10.0
TARGET_PER_SECOND = 500.0


def peer(url: str) -> None:
    """The receiving process: host the label `peer` until standard input closes."""

    async def host() -> None:
        bus = NatsBus(url, fleet="bench")
        bus.register("peer", lambda envelope: Receipt("peer", False, 0))
        print("ready", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
        bus.close()

    asyncio.run(host())


def host_agents(url: str, first: int, count: int, fleet: str = "bench100", answers: int = 0) -> None:
    """A process hosting `count` agents of `fleet` (scripted models that answer `answers` messages each at
    once): prints the RSS each agent added once they are up, again at each line read from standard input
    (after the messages), and ends when it closes."""

    async def host() -> None:
        from sagent import Agent, Fleet
        from sagent.providers.scripted import ScriptedModel, text_turn

        bus = NatsBus(url, fleet=fleet)
        before = rss_mib()
        turns = [text_turn("noted") for _ in range(answers)]
        labels = range(first, first + count)
        agents = [Agent(ScriptedModel(list(turns)), fleet=Fleet(bus=bus), label=f"agent-{n}") for n in labels]
        print(f"{(rss_mib() - before) / count:.3f}", flush=True)
        while await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline):
            await asyncio.sleep(0.5)  # the last answers
            print(f"{(rss_mib() - before) / count:.3f}", flush=True)
        for agent in agents:
            await agent.aclose()
        bus.close()

    asyncio.run(host())


def rss_mib() -> float:
    """This process's resident memory now, in MiB."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def hundred_agents(url: str) -> tuple[float, float]:
    """MiB per hosted agent (the mean over the hosts), and milliseconds to list all of them."""
    hosts = [
        subprocess.Popen(
            [sys.executable, __file__, "host", url, str(n * AGENTS_PER_HOST), str(AGENTS_PER_HOST)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(HOSTS)
    ]
    try:
        per_agent = statistics.mean(float(h.stdout.readline()) for h in hosts if h.stdout is not None)
        bus = NatsBus(url, fleet="bench100")
        try:
            deadline = time.monotonic() + 60
            while len(bus.agents()) < HOSTS * AGENTS_PER_HOST and time.monotonic() < deadline:
                time.sleep(0.2)  # every agent's first heartbeat
            times = []
            for _ in range(5):
                start = time.perf_counter()
                listed = bus.agents()
                times.append((time.perf_counter() - start) * 1000)
            assert len(listed) == HOSTS * AGENTS_PER_HOST, len(listed)
        finally:
            bus.close()
        return per_agent, statistics.median(times)
    finally:
        for h in hosts:
            if h.stdin is not None:
                h.stdin.close()
            h.wait(60)


def round_trips(url: str, count: int) -> tuple[list[float], float]:
    """Milliseconds of each delivery (with its receipt), and the messages per second over the whole run."""
    bus = NatsBus(url, fleet="bench")
    try:
        for _ in range(50):  # warm the connection and the server
            bus.deliver(Envelope("main", "peer", "warm up"))
        times = []
        start = time.perf_counter()
        for n in range(count):
            began = time.perf_counter()
            receipt = bus.deliver(Envelope("main", "peer", f"message {n}"))
            times.append((time.perf_counter() - began) * 1000)
            assert receipt.to == "peer" and type(receipt) is Receipt, receipt
        rate = count / (time.perf_counter() - start)
        return times, rate
    finally:
        bus.close()


def fleet_nats_figures() -> list[tuple[str, float, str, float, bool]] | None:
    """(name, value, unit, target, at_least) rows; None when nats-server is not installed."""
    if nats_binary() is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        server = NatsServer(Path(tmp) / "js").start()
        receiver = subprocess.Popen(
            [sys.executable, __file__, "peer", server.url], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        try:
            assert receiver.stdout is not None and receiver.stdout.readline().strip() == "ready"
            times, rate = round_trips(server.url, MESSAGES)
            per_agent, list_ms = hundred_agents(server.url)
        finally:
            if receiver.stdin is not None:
                receiver.stdin.close()
            receiver.wait(30)
            server.stop()
    times.sort()
    p50 = statistics.median(times)
    p99 = times[int(len(times) * 0.99) - 1]
    return [
        (f"cross-process AgentSend round trip p50 ({MESSAGES} messages)", p50, "ms", TARGET_P50_MS, False),
        ("cross-process AgentSend round trip p99", p99, "ms", TARGET_P99_MS, False),
        ("messages per second, one sender to one process", rate, "/s", TARGET_PER_SECOND, True),
        (
            f"memory per agent, {HOSTS * AGENTS_PER_HOST} agents over {HOSTS} processes",
            per_agent,
            "MiB",
            TARGET_AGENT_MIB,
            False,
        ),
        (f"fleet ls of {HOSTS * AGENTS_PER_HOST} agents", list_ms, "ms", TARGET_LIST_MS, False),
    ]


def main() -> int:
    rows = fleet_nats_figures()
    if rows is None:
        print("skipped: nats-server is not installed (apt-get install nats-server)")
        return 0
    ok = True
    for name, value, unit, target, at_least in rows:
        good = value >= target if at_least else value < target
        bound = ">=" if at_least else "<"
        print(f"{name:<52} {value:>9.2f} {unit:<3} target {bound} {target:g} {unit:<3} {'ok' if good else 'MISSED'}")
        ok &= good
    return 0 if ok else 1


if __name__ == "__main__":
    if sys.argv[1:2] == ["peer"]:
        peer(sys.argv[2])
    elif sys.argv[1:2] == ["host"]:
        host_agents(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        sys.exit(main())
