"""What can arrive in an agent's inbox. Everything the loop reacts to comes through this one queue.

Model output and tool results carry the `epoch` of the phase that started them: after an interrupt, a
late item from a cancelled stream or tool is recognised as stale and dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

from sagent.events import ModelEvent, Retrying
from sagent.types import PeerMessage, ToolResult, UserMessage


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
    result: ToolResult
    duration_ms: float
    epoch: int


@dataclass(frozen=True, slots=True)
class Interrupt:
    """Stop the model stream and running tools now, keeping what they produced."""


@dataclass(frozen=True, slots=True)
class Quit:
    """Interrupt, and accept no more work."""


InboxItem = UserInput | ModelOutput | ModelFailed | ToolDone | Interrupt | Quit
