"""What can arrive in an agent's inbox. Everything the loop reacts to comes through this one queue.

Model output and tool results carry the `epoch` of the phase that started them: after an interrupt, a
late item from a cancelled stream or tool is recognised as stale and dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

from sagent.events import ModelEvent, Retrying
from sagent.providers.base import Model
from sagent.types import Effort, PeerMessage, ToolResult, UserMessage


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


@dataclass(frozen=True, slots=True)
class ToBackground:
    """Move the tool calls still running to the background (`epoch` None: whatever round is running)."""

    epoch: int | None = None


@dataclass(frozen=True, slots=True)
class Interrupt:
    """Stop the model stream and running tools now, keeping what they produced."""


@dataclass(frozen=True, slots=True)
class Quit:
    """Interrupt, and accept no more work."""


InboxItem = UserInput | ModelOutput | ModelFailed | ToolDone | Control | ToBackground | Interrupt | Quit
