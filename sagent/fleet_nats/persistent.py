"""Persistent sub-agents on other processes: AgentSpawn with `on` and `persistent` starts a sub-agent on a
`sagent serve` process that stays after its first answer, in the fleet under its label, as a local
persistent child does.

The worker answers the spawn at once; the child works on its task and, each time it goes idle, reports to
its parent as a message from its label ("[idle] ..."), and when it ends ("[stopped] ..."). Any agent of
the fleet may message it with AgentSend meanwhile; its parent (and the parent's ancestors) may send it
controls, `stop` included. What it spends goes to its parent's tree after each run, on the subject
`sagent.<fleet>.agent.<label>.usage`. When the parent ends (its run is over and it closes, or it is
stopped), its persistent children elsewhere are sent `stop`. When its tree's budget is spent, the stop
says so: the child ends as `error_max_budget_usd` and reports "[stopped (error_max_budget_usd)] ..."
with the reason. A child's spend that reaches the budget stops its parent as well, if it is working.

Its budget is what was left of its parent's tree's budget when it started, not held (a child that lives
on cannot keep its parent from working): the tree can overshoot its budget by what the child spends in
the run during which the rest of the tree spent the remainder.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import asdict, replace
from typing import TYPE_CHECKING, Any

from sagent.agent.cost import CostTracker
from sagent.agent.fleet import Envelope, FleetError
from sagent.fleet_nats import names
from sagent.fleet_nats.inbox import budget_stop
from sagent.types import Usage

if TYPE_CHECKING:
    from nats.aio.msg import Msg

    from sagent.agent.agent import Agent
    from sagent.fleet_nats.bus import NatsBus


# ------------------------------------------------------------------------------------ the parent's side


async def follow_spending(bus: NatsBus, parent: Agent, label: str) -> None:
    """Count what the persistent child `label` reports spending into `parent`'s tree, as it comes."""
    loop = asyncio.get_running_loop()
    tracker = CostTracker(parent=parent.cost)  # the child's spend joins the parent's tree, not its own

    def count(spent: dict[str, Any]) -> None:
        was_over = parent.cost.over_budget()
        for model, usage in spent.items():
            with contextlib.suppress(TypeError, ValueError):
                tracker.add(str(model), Usage(**usage))
        if not was_over and parent.cost.over_budget():
            # The fleet stops the tree's other agents and remote children; the parent, which the tree's
            # counting takes for the spender here, stops too when it is working: the spend was not its own.
            parent.interrupt(budget=parent.budget_reason())

    async def on_message(msg: Msg) -> None:
        with contextlib.suppress(ValueError):
            spent = json.loads(msg.data)
            if isinstance(spent, dict):
                loop.call_soon_threadsafe(count, spent)

    subject = names.agent_subject(bus.fleet, label, "usage")
    await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(bus.nc.subscribe(subject, cb=on_message), bus.loop))


# ----------------------------------------------------------------------------------- the worker's side


class PersistentChild:
    """Drives a persistent sub-agent on the worker: runs, reports to its parent, waits for messages."""

    def __init__(self, bus: NatsBus, child: Agent, parent_label: str) -> None:
        self.bus = bus
        self.child = child
        self.parent_label = parent_label
        self.events = names.agent_subject(bus.fleet, child.label, "events")
        self._reported: dict[str, Usage] = {}  # what was already sent to the parent's tree, by model

    async def drive(self) -> None:
        """Run until the child is stopped, its budget is spent, or its parent is gone; then leave the fleet."""
        from sagent.events import Result

        child = self.child
        result: Result | None = None
        try:
            while True:
                async for event in child.run():
                    self.bus.publish_event(self.events, event)
                    if isinstance(event, Result):
                        result = event
                self._send_spending()
                if child.closed or result is None or result.subtype == "error_max_budget_usd":
                    break
                if not self._report("idle", result):
                    break  # the parent has left the fleet: nobody reads the reports any more
                if not await child.wait_for_input():
                    break
        except Exception as error:  # a bug, not a model error: those end as a Result
            result = child.failure(f"{type(error).__name__}: {error}")
        finally:
            self._send_spending()
            why = budget_stop(child)
            if result is not None and why is not None and result.subtype != "error_max_budget_usd":
                result = replace(result, subtype="error_max_budget_usd", text=why)  # stopped while idle
            if result is not None:
                self._report("stopped", result)
            await child.aclose()
            forget = asyncio.run_coroutine_threadsafe(self.bus.forget_here(child.label), self.bus.loop)
            with contextlib.suppress(Exception):
                await asyncio.wrap_future(forget)

    def _report(self, state: str, result: Any) -> bool:
        outcome = "" if result.subtype == "success" else f" ({result.subtype})"
        text = f"[{state}{outcome}] {result.text}".rstrip()
        try:
            self.bus.deliver(Envelope(self.child.label, self.parent_label, text))
        except FleetError:
            return False
        return True

    def _send_spending(self) -> None:
        """Send the parent's tree what the child spent since the last time."""
        spent: dict[str, Any] = {}
        for model, spend in self.child.cost.by_model.items():
            before = self._reported.get(model, Usage())
            if spend.usage != before:
                spent[model] = asdict(_minus(spend.usage, before))
                self._reported[model] = spend.usage
        if spent:
            subject = names.agent_subject(self.bus.fleet, self.child.label, "usage")
            data = json.dumps(spent).encode()
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(self.bus.nc.publish(subject, data), self.bus.loop)


def _minus(after: Usage, before: Usage) -> Usage:
    return Usage(**{k: v - getattr(before, k) for k, v in asdict(after).items()})
