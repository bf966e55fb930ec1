"""Host one agent of a fleet for good: it works on each message that arrives, goes idle, and waits for the
next; its events go out live on `sagent.<fleet>.agent.<label>.events` (for `sagent fleet attach`).

Which session log the label continues is kept in `<data dir>/fleets/<fleet>/<label>.json`, so a restart
(after a crash, a kill, a reboot) resumes the same conversation, and the messages its inbox held come in.
SIGTERM or SIGINT ends it cleanly, keeping its place in the fleet; a `stop` control (`sagent fleet stop`)
ends it and takes it out of the fleet.

What a person sends it (`sagent fleet send`, a line typed in `sagent fleet attach`) is read as soon as a
peer's message is: long tool calls running when it arrives go on in the background (its settings'
`input_preempts`, as in the REPL), so the person never waits for a long Bash or a stuck sub-agent.
"""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from sagent.agent.session import data_dir
from sagent.fleet_nats import names

if TYPE_CHECKING:
    from sagent.agent.agent import Agent
    from sagent.events import Event
    from sagent.fleet_nats.bus import NatsBus


def state_file(fleet: str, label: str) -> Path:
    """Where `sagent serve` remembers the session log of `label` in `fleet`."""
    return data_dir() / "fleets" / fleet / f"{label}.json"


def remembered_session(fleet: str, label: str) -> Path | None:
    """The session log the label was using, when it still exists."""
    try:
        path = Path(json.loads(state_file(fleet, label).read_text())["session"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return path if path.exists() else None


def remember_session(fleet: str, label: str, path: Path | None) -> None:
    if path is None:
        return
    target = state_file(fleet, label)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps({"session": str(path)}))


class Served:
    """The loop of one served agent."""

    def __init__(self, agent: Agent, bus: NatsBus, *, worker: bool = False) -> None:
        # Set here, not from a flag, so that every start of the label (a resumed one too) preempts.
        agent.configure(input_preempts=True)
        self.agent = agent
        self.bus = bus
        self.worker = worker  # takes sub-agents spawned on "any" process (the fleet's queue group)
        self.events = names.agent_subject(bus.fleet, agent.label, "events")
        self.signalled = False

    async def run(self, ready: Callable[[], None] | None = None) -> bool:
        """Serve until a signal (True: keep the label's place) or a stop control (False: leave the fleet).
        `ready` is called once signals are handled and spawn requests are taken (say "serving" there: a
        SIGTERM from then on shuts down cleanly)."""
        from sagent.fleet_nats.remote import SpawnWorker

        loop = asyncio.get_running_loop()
        for number in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(number, self._on_signal)
        agent = self.agent
        try:
            self.bus.call(SpawnWorker(self.bus, agent, loop).listen(any_worker=self.worker), 10)
        except BaseException:
            for number in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(number)
            raise
        if ready is not None:
            ready()
        try:
            while not agent.closed:
                if not await agent.wait_for_input():
                    break
                async for event in agent.run():
                    self.publish(event)
        finally:
            for number in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(number)
        return self.signalled

    def publish(self, event: Event) -> None:
        self.bus.publish_event(self.events, event)

    def _on_signal(self) -> None:
        self.signalled = True
        self.agent.quit()
