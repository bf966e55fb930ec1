"""What can arrive in an agent's inbox, and the rules for it. Everything the loop reacts to comes through
this one queue.

Model output and tool results carry the `epoch` of the phase that started them: after an interrupt, a
late item from a cancelled stream or tool is recognised as stale and dropped. `Inbox` holds the queue and
what waits for the next safe point (input, controls), and decides in one place what an item arriving in
the middle of a phase does: stop the phase (an interrupt, a quit) or wait.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sagent.agent.jobs import JobTable
from sagent.events import ModelEvent, Retrying
from sagent.providers.base import Model
from sagent.types import Effort, PeerMessage, ToolResult, UserMessage

if TYPE_CHECKING:  # annotations only: the loop's run is what an interrupt stops
    from sagent.agent.loop import Run


@dataclass(frozen=True, slots=True)
class UserInput:
    """A user or peer message. While the agent works it waits for the next safe point."""

    message: UserMessage | PeerMessage


@dataclass(frozen=True, slots=True)
class ModelOutput:
    event: ModelEvent | Retrying
    epoch: int


@dataclass(frozen=True, slots=True)
class ModelFailed:
    error: Exception
    epoch: int


@dataclass(frozen=True, slots=True)
class ToolDone:
    """A tool call finished: a call of the current round, or one running as a background job."""

    result: ToolResult
    duration_ms: float
    epoch: int


@dataclass(frozen=True, slots=True)
class Control:
    """A change to the agent's runtime, applied at its next safe point (between model calls): from a
    coordinator over AgentSend, or from the agent itself through AgentSelf."""

    sender: str
    model: Model | None = None
    effort: Effort | None = None
    thinking_budget: int | None = None  # 0 turns thinking off
    compact: bool = False
    focus: str | None = None
    clear_tools: tuple[str, ...] | None = None  # clear the results of these tools ...
    clear_keep_last: int | None = None  # ... or every result but the last N


@dataclass(frozen=True, slots=True)
class ToBackground:
    """Move the tool calls still running to the background (`epoch` None: whatever round is running; `name`
    given: only the calls it names, see `calls.is_named`)."""

    epoch: int | None = None
    name: str | None = None


@dataclass(frozen=True, slots=True)
class Interrupt:
    """Stop the model stream and running tools now, keeping what they produced. With `budget` (the reason)
    the run ends as `error_max_budget_usd`: the budget of the agent's tree is spent."""

    budget: str | None = None


@dataclass(frozen=True, slots=True)
class Quit:
    """Interrupt, and accept no more work."""


InboxItem = UserInput | ModelOutput | ModelFailed | ToolDone | Control | ToBackground | Interrupt | Quit


class Inbox:
    """An agent's inbox: the queue every item arrives on, the input and controls waiting for the next safe
    point, and the rules for what arrives while a phase (a model call, a tool round) runs."""

    def __init__(self, jobs: JobTable) -> None:
        self.jobs = jobs  # a background job's result that arrives becomes input
        self.queue: asyncio.Queue[InboxItem] = asyncio.Queue()
        self.queued: list[UserMessage | PeerMessage] = []  # input taken from the queue, for the next safe point
        self.controls: list[Control] = []  # runtime changes taken from the queue, for the next safe point
        self.unread_input = 0  # UserInput items in the queue not yet moved to `queued`
        self.stopped_by: str | None = None  # the coordinator that stopped the agent, named in the run's reason
        self.taken: list[UserMessage | PeerMessage] = []  # input taken from the queue while a phase ran
        # Background jobs' results that came after the user stopped a run: they start nothing by themselves
        # and join the queue with the next input (the user's next message, a sub-agent's report).
        self.held: list[PeerMessage] = []
        self.holding = False
        self._epoch = 0

    @property
    def pending(self) -> int:
        """How many inputs wait for a run to take them."""
        return len(self.queued) + self.unread_input

    def put(self, item: InboxItem) -> None:
        self.queue.put_nowait(item)

    def post_input(self, message: UserMessage | PeerMessage) -> None:
        self.unread_input += 1
        self.queue.put_nowait(UserInput(message))

    async def get(self) -> InboxItem:
        return await self.queue.get()

    def next_epoch(self) -> int:
        """A new phase starts: items of earlier phases are stale from now on."""
        self._epoch += 1
        return self._epoch

    def retract(self, message: UserMessage | PeerMessage) -> bool:
        """Take back input that has not entered the history yet; False when it was already taken."""
        for index, queued in enumerate(self.queued):
            if queued is message:
                del self.queued[index]
                return True
        waiting = []
        found = False
        while not self.queue.empty():
            item = self.queue.get_nowait()
            if not found and isinstance(item, UserInput) and item.message is message:
                found = True
                self.unread_input -= 1
            else:
                waiting.append(item)
        for item in waiting:
            self.queue.put_nowait(item)
        return found

    def waiting_input(self) -> list[UserMessage | PeerMessage]:
        """The input (a user's or a peer's message) taken from the queue that has not joined the history
        yet: it arrived during the model call, before the tool round it asked for."""
        self.taken = [m for m in self.taken if any(m is q for q in self.queued)]
        return self.taken

    def drain(self, run: Run) -> bool:
        """At a safe point of a run: take everything waiting in the inbox; True when it stops the run."""
        while not self.queue.empty():
            if self.on_busy(self.queue.get_nowait(), run):
                return True
        return run.done()

    def take_idle(self) -> None:
        """At a safe point: move waiting input to the queue; drop what no phase is waiting for."""
        while not self.queue.empty():
            self.accept(self.queue.get_nowait())

    def accept(self, item: InboxItem) -> None:
        """Keep what must outlive the phase it arrived in: input, controls, background jobs' results."""
        if isinstance(item, UserInput):
            self.unread_input -= 1
            if self.holding:  # the results held since the stop go first, as they came first
                self.queued += self.held
                self.held, self.holding = [], False
            self.queued.append(item.message)
            self.taken = [*self.waiting_input(), item.message]  # what joined the history meanwhile is dropped
        elif isinstance(item, Control):
            self.controls.append(item)
        elif isinstance(item, ToolDone):
            job = self.jobs.finish(item.result, item.duration_ms)
            if job is not None and not job.waited:
                job.delivered = job.message()
                (self.held if self.holding else self.queued).append(job.delivered)

    def hold_job_results(self) -> None:
        """The user stopped the run: the jobs' results waiting now, and those that come later, wait for the
        next input instead of starting a run by themselves."""
        results = {id(j.delivered) for j in self.jobs.all() if j.delivered is not None}
        self.held += [m for m in self.queued if id(m) in results and isinstance(m, PeerMessage)]
        self.queued = [m for m in self.queued if id(m) not in results]
        self.holding = True

    def on_busy(self, item: InboxItem, run: Run) -> bool:
        """The rule for input that arrives while a phase runs, in one place. True when the phase must stop."""
        if isinstance(item, Interrupt):
            if item.budget is not None:
                run.stop("error_max_budget_usd", item.budget)
            else:
                run.stop("interrupted", "interrupted by the user")
                self.hold_job_results()
            return True
        if isinstance(item, Quit):
            run.stop("interrupted", f"stopped by {self.stopped_by}" if self.stopped_by else "quit")
            return True
        self.accept(item)  # input, controls and job results wait for the next safe point
        return False
