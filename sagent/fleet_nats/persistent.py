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

Nothing of the tree's budget is held for it while it lives (a child that lives on cannot keep its
parent from working). Instead, before each of its requests, it asks its parent's process to hold the
request's estimate against the tree's budget (`sagent.<fleet>.agent.<label>.budget`), as a local
sub-agent's gate holds it up its own chain: the parent answers at once, refusing when what the tree has
spent, what its requests in flight hold and this estimate would cross the budget; the child then ends as
`error_max_budget_usd` with the parent's reason, its request not sent. When the request is over, the child
sends what it spent together with the release of the hold, in one message, so the parent's tree counts
the spend the moment the hold goes. A parent that does not answer refuses. So the tree stops before its
budget, exactly as a tree in one process does.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import asdict, replace
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from sagent.agent.cost import CostTracker
from sagent.agent.fleet import Envelope, FleetError
from sagent.fleet_nats import names
from sagent.fleet_nats.inbox import budget_stop
from sagent.types import ZERO_USD, Cost, Usage

HOLD_WAIT = 10.0  # seconds a persistent child waits for its parent to hold a request's estimate

if TYPE_CHECKING:
    from nats.aio.msg import Msg
    from nats.aio.subscription import Subscription

    from sagent.agent.agent import Agent
    from sagent.fleet_nats.bus import NatsBus


# ------------------------------------------------------------------------------------ the parent's side


async def follow_spending(bus: NatsBus, parent: Agent, label: str) -> list[Subscription]:
    """Count what the child `label` elsewhere reports spending into `parent`'s tree, as it comes, and
    answer its requests to hold its next request's estimate against the tree's budget; the subscriptions
    doing it (drained when a one-shot child has answered)."""
    loop = asyncio.get_running_loop()
    tracker = CostTracker(parent=parent.cost)  # the child's spend joins the parent's tree, not its own
    holding = [ZERO_USD]  # what the child's requests in flight hold of the tree's budget now

    def count(spent: dict[str, Any]) -> None:
        was_over = parent.cost.over_budget()
        for model, usage in spent.items():
            with contextlib.suppress(TypeError, ValueError):
                tracker.add(str(model), Usage(**usage))
        if not was_over and parent.cost.over_budget():
            # The fleet stops the tree's other agents and remote children; the parent, which the tree's
            # counting takes for the spender here, stops too when it is working: the spend was not its own.
            parent.interrupt(budget=parent.budget_reason())

    def release(amount: Decimal) -> None:
        amount = min(max(amount, ZERO_USD), holding[0])  # never more than it holds
        holding[0] -= amount
        tracker.release(amount)

    def hold(amount: Decimal) -> str | None:
        refusing = tracker.refusing(Cost(input=amount))
        if refusing is not None:
            return _refusal(parent, refusing, amount)
        holding[0] += amount
        tracker.reserve(amount)
        return None

    def settle(data: dict[str, Any]) -> None:
        release(_amount(data.get("release")))  # the hold goes and the spend is counted in the same step
        spent = data.get("usage")
        if isinstance(spent, dict):
            count(spent)
        if data.get("done"):
            release(holding[0])

    async def on_usage(msg: Msg) -> None:
        with contextlib.suppress(ValueError):
            spent = json.loads(msg.data)
            if isinstance(spent, dict):
                loop.call_soon_threadsafe(count, spent)

    async def on_budget(msg: Msg) -> None:
        try:
            data = json.loads(msg.data)
            if not isinstance(data, dict):
                raise ValueError("not an object")
        except ValueError:
            return
        if "hold" not in data:
            loop.call_soon_threadsafe(settle, data)
            return

        async def answer() -> str | None:
            return hold(_amount(data["hold"]))

        try:
            refused = await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(answer(), loop))
        except Exception as error:  # the parent's loop is gone: nothing can be held
            refused = f"the parent could not hold the budget: {error}"
        with contextlib.suppress(Exception):
            await msg.respond(json.dumps({"held": refused is None, "reason": refused or ""}).encode())

    subscribing = [
        bus.nc.subscribe(names.agent_subject(bus.fleet, label, "usage"), cb=on_usage),
        bus.nc.subscribe(names.agent_subject(bus.fleet, label, "budget"), cb=on_budget),
    ]
    return [await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work, bus.loop)) for work in subscribing]


def _amount(value: object) -> Decimal:
    """An amount of USD from the wire (a decimal string); 0 for anything else."""
    try:
        amount = Decimal(str(value))
    except (ArithmeticError, ValueError):
        return ZERO_USD
    return amount if amount.is_finite() and amount >= 0 else ZERO_USD


def _refusal(parent: Agent, tracker: CostTracker, amount: Decimal) -> str:
    in_flight = f" (${tracker.reserved:.4f} more in flight)" if tracker.reserved else ""
    if tracker.tokens_used_up():
        return tracker.stop_reason(parent.label)
    return (
        f"stopped before a request estimated at ${amount:.4f}: ${tracker.spent:.4f} spent by the tree of agents "
        f"{parent.label} leads{in_flight} of the budget of ${tracker.budget or 0:.4f} (max_budget_usd); "
        "the request was not sent"
    )


# ----------------------------------------------------------------------------------- the worker's side


class PersistentChild:
    """Drives a persistent sub-agent on the worker: runs, reports to its parent, waits for messages."""

    def __init__(self, bus: NatsBus, child: Agent, parent_label: str) -> None:
        self.bus = bus
        self.child = child
        self.parent_label = parent_label
        self.events = names.agent_subject(bus.fleet, child.label, "events")
        self.report = SpendReport(bus, child)

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
                self.report.send()
                if child.closed or result is None or result.subtype == "error_max_budget_usd":
                    break
                if not self._report("idle", result):
                    break  # the parent has left the fleet: nobody reads the reports any more
                if not await child.wait_for_input():
                    break
        except Exception as error:  # a bug, not a model error: those end as a Result
            result = child.failure(f"{type(error).__name__}: {error}")
        finally:
            self.report.send(done=True)
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

    def lend_budget(self) -> None:
        """Hold each of the child's requests against its tree's budget in the parent's process first."""
        self.child.cost.lender = TreeBudget(self.report, self.parent_label)


class SpendReport:
    """Sends a child's spend to its parent's tree, as it grows, on `sagent.<fleet>.agent.<label>.budget`."""

    def __init__(self, bus: NatsBus, child: Agent) -> None:
        self.bus = bus
        self.child = child
        self._reported: dict[str, Usage] = {}  # what was already sent to the parent's tree, by model

    def send(self, release: Decimal = ZERO_USD, done: bool = False) -> None:
        """Send what the child spent since the last time, with the release of a hold (`release`) or of every
        hold (`done`) in the same message."""
        spent: dict[str, Any] = {}
        for model, spend in self.child.cost.by_model.items():
            before = self._reported.get(model, Usage())
            if spend.usage != before:
                spent[model] = asdict(_minus(spend.usage, before))
                self._reported[model] = spend.usage
        if spent or release or done:
            # On the budget subject, after (so in order with) the child's holds.
            subject = names.agent_subject(self.bus.fleet, self.child.label, "budget")
            data = json.dumps({"release": str(release), "usage": spent, "done": done}).encode()
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(self.bus.nc.publish(subject, data), self.bus.loop)


class TreeBudget:
    """A child's `BudgetLender` on a worker: its parent's process holds each request's estimate against the
    tree's budget before the request is sent (see the module's docstring)."""

    def __init__(self, report: SpendReport, parent_label: str) -> None:
        self.report = report
        self.parent_label = parent_label

    async def hold(self, amount: Decimal) -> str | None:
        bus, label = self.report.bus, self.report.child.label
        asking = bus.nc.request(
            names.agent_subject(bus.fleet, label, "budget"), json.dumps({"hold": str(amount)}).encode(), HOLD_WAIT
        )
        try:
            reply = await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(asking, bus.loop))
            data = json.loads(reply.data)
        except Exception as error:
            return (
                f"stopped before a request: {self.parent_label}, which keeps the tree's budget, did not answer "
                f"({str(error) or type(error).__name__}); the request was not sent"
            )
        if isinstance(data, dict) and data.get("held") is True:
            return None
        reason = data.get("reason") if isinstance(data, dict) else None
        return str(reason or f"{self.parent_label} refused to hold the tree's budget; the request was not sent")

    def settle(self, amount: Decimal) -> None:
        self.report.send(release=amount)


def _minus(after: Usage, before: Usage) -> Usage:
    return Usage(**{k: v - getattr(before, k) for k, v in asdict(after).items()})
