"""A deterministic model that plays back scripted responses: for tests, benchmarks and offline examples.

    model = ScriptedModel([
        tool_turn(("Read", {"path": "a.py"})),
        text_turn("a.py defines main()"),
    ])

Each step is an `AssistantMessage`, a `ProviderError` to raise, or a function of the request that returns
either (to answer from what the agent sent). Every request is recorded in `requests`.

For a fleet, `RoutedModel` gives each agent its own script, told apart by the label in its system prompt:

    model = RoutedModel({"main": [tool_turn(("AgentSpawn", {"prompt": "...", "label": "a"})), ...],
                         "a": [text_turn("found it")]})
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from sagent.events import ModelEvent, ResponseComplete, TextDelta, ThinkingDelta, ToolCallDelta
from sagent.providers.base import Model, ProviderError
from sagent.types import AssistantContent, AssistantMessage, ModelRequest, TextPart, ThinkingPart, ToolCall, Usage

Step = AssistantMessage | ProviderError | Callable[[ModelRequest], "AssistantMessage | ProviderError"]

_ids = itertools.count(1)


def text_turn(text: str, usage: Usage | None = None) -> AssistantMessage:
    return AssistantMessage((TextPart(text),), usage=usage or Usage(), stop_reason="end_turn")


def tool_turn(*calls: tuple[str, dict[str, Any]], text: str = "", usage: Usage | None = None) -> AssistantMessage:
    """A response that calls tools: each call is (tool name, arguments)."""
    parts: list[AssistantContent] = [TextPart(text)] if text else []
    parts += [ToolCall(f"call_{next(_ids)}", name, dict(args)) for name, args in calls]
    return AssistantMessage(tuple(parts), usage=usage or Usage(), stop_reason="tool_use")


class ScriptedModel(Model):
    """Plays `steps` in order, one per request; fails clearly when the script runs out."""

    def __init__(
        self,
        steps: Iterable[Step] = (),
        *,
        name: str = "scripted",
        provider: str = "scripted",
        chunk_size: int = 16,
        delay: float = 0.0,
        accepts_images: bool = True,
    ) -> None:
        self._steps = list(steps)
        self._accepts_images = accepts_images
        self._name = name
        self._provider = provider
        self._chunk = chunk_size
        self._delay = delay
        self.requests: list[ModelRequest] = []

    @property
    def provider(self) -> str:
        return self._provider

    @property
    def name(self) -> str:
        return self._name

    @property
    def accepts_images(self) -> bool:
        return self._accepts_images

    def add(self, *steps: Step) -> None:
        self._steps.extend(steps)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        self.requests.append(request)
        if not self._steps:
            raise ProviderError("the scripted model has no response left", provider=self._provider)
        step = self._steps.pop(0)
        if callable(step) and not isinstance(step, AssistantMessage):
            step = step(request)
        if isinstance(step, ProviderError):
            raise step
        message = replace(step, provider=self._provider, model=self._name)
        if message.usage == Usage():
            message = replace(message, usage=_estimate_usage(request, message))
        for index, part in enumerate(message.content):
            if self._delay:
                await asyncio.sleep(self._delay)
            if isinstance(part, TextPart):
                for i in range(0, len(part.text), self._chunk):
                    yield TextDelta(part.text[i : i + self._chunk])
            elif isinstance(part, ThinkingPart):
                yield ThinkingDelta(part.text)
            elif isinstance(part, ToolCall):
                yield ToolCallDelta(index, part.id, part.name, json.dumps(part.arguments))
        yield ResponseComplete(message)


def _estimate_usage(request: ModelRequest, message: AssistantMessage) -> Usage:
    """A deterministic stand-in for token counts: about four characters per token."""
    prompt = len(request.system) + sum(len(repr(m)) for m in request.messages)
    return Usage(input_tokens=prompt // 4 + 1, output_tokens=len(repr(message.content)) // 4 + 1)


_LABEL = re.compile(r'You are the sub-agent "([^"]+)"')


def agent_label(request: ModelRequest) -> str:
    """The label of the agent that sent `request`: a sub-agent's is in its system prompt; else "main"."""
    found = _LABEL.search(request.system)
    return found.group(1) if found else "main"


class RoutedModel(Model):
    """One model for a whole fleet, with a script per agent label (`route` tells the label of a request).

    Children that inherit their parent's model share this one, and each still gets its own answers."""

    def __init__(
        self,
        scripts: Mapping[str, Iterable[Step] | ScriptedModel],
        *,
        name: str = "scripted",
        provider: str = "scripted",
        delay: float = 0.0,
        route: Callable[[ModelRequest], str] = agent_label,
    ) -> None:
        """A script is a list of steps, or a `ScriptedModel` of its own (for a different delay)."""
        self._name, self._provider, self._route = name, provider, route
        self.models = {
            label: steps
            if isinstance(steps, ScriptedModel)
            else ScriptedModel(steps, name=name, provider=provider, delay=delay)
            for label, steps in scripts.items()
        }

    @property
    def provider(self) -> str:
        return self._provider

    @property
    def name(self) -> str:
        return self._name

    def requests(self, label: str) -> list[ModelRequest]:
        return self.models[label].requests

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        label = self._route(request)
        model = self.models.get(label)
        if model is None:
            raise ProviderError(f"no script for the agent {label!r}", provider=self._provider)
        return model.stream(request)
