"""What `Agent.run` returns: one run, to iterate for its events or to await for its answer.

    async for event in agent.run("fix the failing test"):   # every event, ending with one Result
        ...
    reply = await agent.run("fix the failing test")          # the answer; AgentError if the run failed
    print(reply.content)

A run takes a prompt as a string, a `UserMessage`, or a JSON directive: an object `{"prompt": "..."}`,
given as a dict or as a string holding that JSON. "prompt" is the only key a directive has today; any other
key is refused (ValueError naming it) rather than ignored, so an option sagent does not know never passes
for one it obeyed. A string that is not JSON, or JSON without a "prompt" key, is the prompt text itself.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator, Generator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

from sagent.events import Event, Result, TurnFinished
from sagent.lib.json import FrozenJSON, FrozenMap, json_freeze
from sagent.types import AssistantMessage, UserMessage

if TYPE_CHECKING:
    from sagent.lib.json import JSON

Prompt: TypeAlias = "str | UserMessage | Mapping[str, JSON]"
"""What `Agent.run` and `Agent.ask` take: text, a message, or a directive `{"prompt": ...}`."""

DIRECTIVE_KEYS = ("prompt",)


class AgentError(Exception):
    """Raised by `Agent.ask`, and by an awaited run, when the run ends in anything but success."""

    def __init__(self, result: Result) -> None:
        super().__init__(result.text)
        self.result = result


@dataclass(frozen=True, slots=True)
class Reply:
    """What an awaited run gives: its final assistant message and the `Result` that ended it."""

    message: AssistantMessage
    result: Result

    @property
    def content(self) -> str:
        """The answer's text (`message.content` holds its parts: text, thinking, tool calls)."""
        return self.message.text

    @property
    def text(self) -> str:
        """The answer's text, as `AssistantMessage.text` names it."""
        return self.message.text

    def __str__(self) -> str:
        return self.message.text


def read_prompt(prompt: Prompt | None) -> tuple[str | UserMessage | None, FrozenMap[FrozenJSON] | None]:
    """The message to send for `prompt`, and the directive it came in (frozen), if it was one."""
    if prompt is None or isinstance(prompt, UserMessage):
        return prompt, None
    if isinstance(prompt, str):
        parsed = _json_object(prompt)
        if parsed is None or "prompt" not in parsed:
            return prompt, None
        prompt = parsed
    directive = json_freeze(prompt)
    unknown = [key for key in directive if key not in DIRECTIVE_KEYS]
    if unknown:
        raise ValueError(
            f"unknown key(s) in the directive: {', '.join(map(repr, unknown))}; a directive has only "
            f"{', '.join(map(repr, DIRECTIVE_KEYS))}"
        )
    text = directive.get("prompt")
    if not isinstance(text, str):
        raise ValueError(f"a directive's 'prompt' must be a string, not {type(text).__name__}")
    return text, directive


def _json_object(text: str) -> dict[str, Any] | None:
    if not text.lstrip().startswith("{"):
        return None  # plain text: not worth a parse
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


class RunHandle(AsyncIterator[Event]):
    """One run of an agent. Iterate it for the events (as `Agent.run` always yielded them), or await it
    for a `Reply`; both may be mixed: awaiting after some events drains the rest. Nothing starts until
    the first event is asked for or the handle is awaited."""

    __slots__ = ("_events", "_last", "_result", "directive")

    def __init__(self, events: AsyncGenerator[Event, None], directive: FrozenMap[FrozenJSON] | None = None) -> None:
        self._events = events
        self._last: AssistantMessage | None = None
        self._result: Result | None = None
        self.directive = directive
        """The JSON directive this run was given, frozen; None for a plain prompt."""

    def __aiter__(self) -> RunHandle:
        return self

    async def __anext__(self) -> Event:
        event = await self._events.__anext__()
        if isinstance(event, TurnFinished):
            self._last = event.message
        elif isinstance(event, Result):
            self._result = event
        return event

    async def aclose(self) -> None:
        """Stop the run where it is (as closing the generator `Agent.run` used to return did)."""
        await self._events.aclose()

    @property
    def result(self) -> Result | None:
        """The `Result` that ended the run, once it has been reached."""
        return self._result

    def __await__(self) -> Generator[Any, None, Reply]:
        return self._reply().__await__()

    async def _reply(self) -> Reply:
        async for _ in self:
            pass
        result = self._result
        if result is None:
            raise RuntimeError("this run was closed before it ended")
        if result.is_error:
            raise AgentError(result)
        if self._last is None:
            raise RuntimeError("the run succeeded without an assistant message")
        return Reply(self._last, result)
