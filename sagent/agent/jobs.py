"""Background jobs: tool calls that run on while the agent goes on working.

A call goes to the background when the model asks (`background: true`), when the user asks, or when it
runs past the agent's `background_after` limit. Its tool call is answered at once with the job's id, and
when it finishes its result comes to the agent as a new message: history is never rewritten. A `Jobs
wait` takes the result directly instead.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Literal

from sagent.types import PeerMessage, ToolCall, ToolResult

JobState = Literal["running", "done", "cancelled"]
# What a user is shown: a job that is done with an error result reads as failed.
JobStatus = Literal["running", "done", "failed", "cancelled"]
WaitOutcome = Literal["done", "timeout", "stopped"]


@dataclass(eq=False)
class Job:
    id: str
    call: ToolCall
    task: asyncio.Task[None] | None
    started: float = field(default_factory=time.monotonic)
    state: JobState = "running"
    result: ToolResult | None = None
    duration_ms: float = 0.0
    waited: bool = False  # a `Jobs wait` is taking the result, so no message is sent
    foreground: bool = False  # the agent's run does not end before this job does
    delivered: PeerMessage | None = None  # the message that brought the result, once sent
    done: asyncio.Event = field(default_factory=asyncio.Event)

    def summary(self) -> str:
        args = self.call.arguments
        known = [args[k] for k in ("command", "path", "pattern", "prompt", "url") if k in args]
        texts = known or [v for k, v in args.items() if isinstance(v, str) and k != "background"]
        key = str(texts[0]).replace("\n", " ") if texts else ""
        return f"{self.call.name} {key[:80]}".rstrip()

    @property
    def status(self) -> JobStatus:
        """The state as a user reads it: "failed" is a job done with an error result."""
        if self.state == "done" and self.result is not None and self.result.is_error:
            return "failed"
        return self.state

    def line(self) -> str:
        elapsed = (self.duration_ms / 1000) if self.state != "running" else time.monotonic() - self.started
        return f"{self.id}  {self.status:<9} {elapsed:6.1f}s  {self.summary()}"

    def message(self) -> PeerMessage:
        """The result, as the message that brings it to the agent."""
        assert self.result is not None
        verb = "failed" if self.result.is_error else "finished"
        text = self.result.text or "(no output)"
        return PeerMessage(
            f"background job {self.id}",
            f"{self.summary()} {verb} after {self.duration_ms / 1000:.1f} s:\n{text}",
        )


class JobTable:
    """Every job of one agent, by id and by the tool call it runs."""

    def __init__(self) -> None:
        self._jobs: dict[str, Job] = {}
        self._by_call: dict[str, Job] = {}
        self._count = 0
        self._waits: set[asyncio.Event] = set()  # one for each `Jobs wait` under way

    async def wait(self, job: Job, timeout: float) -> WaitOutcome:
        """Wait up to `timeout` seconds for `job` to end: "done", "timeout", or "stopped" when `stop_waits`
        was called first (a message came that must be read now)."""
        stop = asyncio.Event()
        self._waits.add(stop)
        waiters = [asyncio.ensure_future(job.done.wait()), asyncio.ensure_future(stop.wait())]
        try:
            await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self._waits.discard(stop)
            for waiter in waiters:
                waiter.cancel()
        if job.done.is_set():
            return "done"
        return "stopped" if stop.is_set() else "timeout"

    def stop_waits(self) -> None:
        """End every `wait` under way now (each returns "stopped"): the agent has a message to read."""
        for stop in self._waits:
            stop.set()

    def add(self, call: ToolCall, task: asyncio.Task[None] | None, started: float | None = None) -> Job:
        self._count += 1
        job = Job(f"job-{self._count}", call, task)
        if started is not None:
            job.started = started
        self._jobs[job.id] = job
        self._by_call[call.id] = job
        return job

    def of_call(self, call_id: str) -> Job | None:
        """The job that runs this tool call, if one does."""
        return self._by_call.get(call_id)

    def mark(self) -> int:
        """A mark for `cancel_since`: the jobs added after it are newer."""
        return self._count

    def cancel_since(self, mark: int) -> list[Job]:
        """Cancel the jobs added since `mark` that still run (those of a run the user stopped); the jobs
        that ended."""
        ended: list[Job] = []
        for job in list(self._jobs.values())[mark:]:  # in the order they were added (jobs are never removed)
            if job.state == "running":
                ended += self.cancel(job)
        return ended

    def get(self, job_id: str) -> Job:
        job = self._jobs.get(job_id.strip())
        if job is None:
            known = ", ".join(self._jobs) or "none"
            raise KeyError(f"no job {job_id!r}; the jobs are: {known}")
        return job

    def finish(self, result: ToolResult, duration_ms: float) -> Job | None:
        """Record a finished call; the job it belongs to, or None when it is not a job's (or was cancelled)."""
        job = self._by_call.get(result.call_id)
        if job is None or job.state != "running":
            return None
        job.state, job.result, job.duration_ms = "done", result, duration_ms
        job.done.set()
        return job

    def cancel(self, job: Job) -> list[Job]:
        """Cancel the job's task. Calls on one file share a task, so the jobs sharing it end too."""
        ended = [j for j in self._jobs.values() if j.state == "running" and (j is job or j.task is job.task)]
        if job.task is not None:
            job.task.cancel()
        for j in ended:
            j.state = "cancelled"
            j.duration_ms = (time.monotonic() - j.started) * 1000
            j.done.set()
        return ended

    def cancel_all(self) -> None:
        for job in list(self._jobs.values()):
            if job.state == "running":
                self.cancel(job)

    def running(self) -> list[Job]:
        return [j for j in self._jobs.values() if j.state == "running"]

    def all(self) -> list[Job]:
        return list(self._jobs.values())

    def holds_run(self) -> bool:
        """True while a job marked foreground is still running."""
        return any(j.foreground and j.state == "running" for j in self._jobs.values())
