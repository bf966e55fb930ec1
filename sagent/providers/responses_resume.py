"""Resume instead of replay, on OpenAI's Responses API: the server keeps the conversation (`store=true`)
and each request names the last response (`previous_response_id`) and sends only what is new since it
(the tool results, the next user message).

    model = ResumingOpenAIModel("gpt-5.4")       # an OpenAIModel that resumes where it can

The local history stays the source of truth: a request is resumed only when its messages begin with
exactly the messages of the previous request plus the answer the server gave, else (after a compaction, a
model switch, a retracted message, a new process) the whole history is sent and the chain starts again.
When the server has lost the previous response (it expired, or was deleted), the request is sent again
with the whole history. OpenAI keeps stored responses for 30 days; resuming needs `store=true`, so the
conversation is held by OpenAI, which the stateless default avoids (see docs/sessions.md).

Google's Interactions API resumes the same way (`sagent.providers.google_interactions`); OpenAI's older
Assistants threads keep a conversation too; Anthropic's Messages API and the Chat Completions APIs do not
(their prompt caching saves the cost of the resent prefix instead, not its upload).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from sagent.events import ModelEvent, ResponseComplete
from sagent.providers.base import ProviderError
from sagent.providers.openai_responses import OpenAIModel, convert_history
from sagent.types import Message, ModelRequest


def lost_previous(error: ProviderError) -> bool:
    """Whether the server refused a request because it no longer has the response it names."""
    text = str(error).lower()
    return "previous_response" in text or ("previous response" in text and "not found" in text)


class ResumingOpenAIModel(OpenAIModel):
    """An `OpenAIModel` that sends only the new items when the server holds the rest (see the module)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._covered: tuple[Message, ...] = ()  # the messages the last stored response holds, its answer last
        self._response_id: str | None = None
        self.resumed = 0  # requests sent as a continuation
        self.full = 0  # requests sent with the whole history

    def resume_params(self, request: ModelRequest) -> dict[str, Any]:
        """The request body: only the new items after `previous_response_id` when the history continues the
        last stored response, else the whole history; stored either way."""
        params = self.build_params(request)
        params["store"] = True
        covered = len(self._covered)
        if self._response_id and covered and request.messages[:covered] == self._covered:
            params["previous_response_id"] = self._response_id
            params["input"] = convert_history(request.messages[covered:])
        return params

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        params = self.resume_params(request)
        try:
            async for event in self._send(request, params):
                yield event
        except ProviderError as error:
            if "previous_response_id" not in params or not lost_previous(error):
                raise
            self._response_id, self._covered = None, ()
            async for event in self._send(request, self.resume_params(request)):  # the whole history again
                yield event

    async def _send(self, request: ModelRequest, params: dict[str, Any]) -> AsyncIterator[ModelEvent]:
        if "previous_response_id" in params:
            self.resumed += 1
        else:
            self.full += 1
        seen: dict[str, str] = {}
        async for event in self.send(params, lambda raw: _note_id(raw, seen)):
            if isinstance(event, ResponseComplete):
                self._response_id = seen.get("id")
                self._covered = (*request.messages, event.message)
            yield event


def _note_id(event: Any, seen: dict[str, str]) -> None:
    """Note the response id from the first of the SDK's events that carries it."""
    response = event.get("response") if isinstance(event, dict) else None
    identifier = response.get("id") if isinstance(response, dict) else None
    if isinstance(identifier, str) and "id" not in seen:
        seen["id"] = identifier
