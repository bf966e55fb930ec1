"""What the REPL's commands and screen may use of the REPL: a small protocol and the state it keeps.

The arrows point one way: `app` (the `Repl`) imports `commands` and `screen`; those two know the REPL only
through `ReplHost`, so they never import `app`, and a test can drive them with any object that has these
members.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from sagent.repl.liveness import WorkClock

if TYPE_CHECKING:
    from prompt_toolkit.application import Application

    from sagent.agent.agent import Agent
    from sagent.repl.fleet_view import FleetPlace
    from sagent.repl.launch import Launch
    from sagent.repl.picker import Picker
    from sagent.repl.render import Renderer, Settings
    from sagent.tasks import TaskList
    from sagent.types import UserContent, UserMessage

QUIT_WINDOW_S = 3.0
"""A second Ctrl+C within this many seconds quits."""


@dataclass
class Queued:
    """Input typed while the agent works, shown under the live area until it is delivered."""

    message: UserMessage
    deferred: bool  # True: held until idle (Tab); False: delivered at the next safe point (Enter)


@dataclass
class ReplState:
    """What the status line and the commands read; kept apart from the widgets so tests can build one."""

    last_input_tokens: int = 0
    queued: list[Queued] = field(default_factory=list)
    ctrl_c_at: float = 0.0
    note: str = ""  # a one-line hint under the input (press Ctrl+C again to quit...)
    clock: WorkClock = field(default_factory=WorkClock)  # the turn being worked on: time, tokens, spend
    picker: Picker | None = None  # an open searchable list (/model): the input box is its search field
    context: list[UserContent] = field(default_factory=list)  # `!command` outputs for the next message
    shell: asyncio.Task[None] | None = None  # the `!command` running now (Esc cancels it)
    fleet: FleetPlace | None = None  # the agent's place in a fleet across processes (`sagent --fleet`)
    launch: Launch | None = None  # the settings files and flags the REPL started with (/status, /config)
    tasks_hidden: bool = False  # the user hid the task list above the prompt (Ctrl+T)
    tasks_done: TaskList | None = None  # the finished task list last seen at the end of a turn (not shown again)


class ReplHost(Protocol):
    """The REPL as its slash commands and its prompt_toolkit screen see it."""

    agent: Agent
    """The agent the user talks to now (replaced by /clear and /resume)."""
    settings: Settings
    renderer: Renderer
    state: ReplState
    history_file: Path | None
    """Where the input box keeps its history across runs; None keeps it in memory."""
    new_agent: Callable[..., Agent]
    """`new_agent(session_path=None)`: an agent on the current model (for /clear and /resume)."""
    switch: Callable[[Agent, str | None, str | None], str] | None
    """`switch(agent, provider, model)` moves the agent to another model; None where it cannot."""
    app: Application[None] | None
    """The running prompt_toolkit application, or None before it starts and after it ends."""

    @property
    def busy(self) -> bool:
        """True while the agent runs a task."""
        ...

    def submit(self, text: str, defer: bool = False) -> None:
        """Take the input box's text: a slash command, a prompt, or input queued for the running task."""
        ...

    def commit(self, blocks: list[str]) -> None:
        """Print finished blocks above the live area."""
        ...

    def refresh(self) -> None:
        """Repaint the live area."""
        ...

    def background(self, coroutine: Coroutine[Any, Any, Any]) -> None:
        """Run a coroutine beside the REPL."""
        ...

    def replace_agent(self, agent: Agent) -> None:
        """Move to another agent; the old one is closed."""
        ...

    def pull_back(self) -> str | None:
        """Take the newest queued message back for editing, if it has not been delivered."""
        ...

    def interrupt(self) -> None:
        """Interrupt the running task, keeping what it produced."""
        ...

    def quit(self) -> None:
        """Leave the REPL."""
        ...

    def status_text(self, width: int | None = None) -> str:
        """The status line, fitted to `width` columns (the settings' width when None)."""
        ...

    def agents_text(self) -> str:
        """The live sub-agent panel."""
        ...

    def queued_text(self) -> str:
        """The queued-input panel."""
        ...

    def live_text(self, rows: int) -> str:
        """The live area, cut to fit `rows`."""
        ...
