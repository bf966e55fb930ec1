"""Native tool calls on a llama.cpp server, and the choice between them and the text protocol.

llama-cpp-python's server honours `tool_choice: "auto"` only with its `chatml-function-calling` chat format,
and only without streaming; its template also renders no `tool` messages, so a tool's result is sent as a
user message that names the call. `llama-server` (started with `--jinja`) takes tools and tool messages as
the OpenAI API has them, streamed or not. `NativeToolsModel` sends a request with tools in one piece and
turns the answer into the same events a stream gives.

`tool_mode` (`auto`, `native`, `text`; the `SAGENT_LOCAL_TOOLS` variable) picks how tools reach a local
model: `auto` is native, falling back to the text protocol (`sagent.providers.text_tools`) for good when
the server refuses tools.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any, Literal

from sagent.events import ModelEvent, ResponseComplete, TextDelta, ToolCallDelta
from sagent.providers.base import ProviderError
from sagent.providers.faults import endpoint_of
from sagent.providers.openai_compat import OpenAICompatModel, map_openai_error, parse_tool_call
from sagent.types import AssistantContent, AssistantMessage, ModelRequest, StopReason, TextPart, Usage

ToolMode = Literal["auto", "native", "text"]
TOOL_MODES: tuple[ToolMode, ...] = ("auto", "native", "text")
MODE_VARIABLE = "SAGENT_LOCAL_TOOLS"


def tool_mode_from_env(given: str | None = None) -> ToolMode:
    """The tool mode asked for (`given`, else `SAGENT_LOCAL_TOOLS`, else `auto`); ValueError for another word."""
    value = (given or os.environ.get(MODE_VARIABLE) or "auto").strip().lower()
    if value not in TOOL_MODES:
        raise ValueError(f"{MODE_VARIABLE} must be one of {', '.join(TOOL_MODES)}, not {value!r}")
    return value


def refuses_tools(error: ProviderError) -> bool:
    """True when a server's 4xx says it cannot take tools (so the text protocol should be used instead)."""
    text = str(error).lower()
    return error.kind == "bad_request" and ("tool" in text or "function" in text)


class NativeToolsModel(OpenAICompatModel):
    """Chat Completions with tools sent whole (not streamed); requests without tools still stream."""

    def __init__(self, model: str, *, results_as_user: bool = False, **options: Any) -> None:
        super().__init__(model, **options)
        self.results_as_user = results_as_user

    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        params = super().build_params(request)
        if not request.tools:
            return params
        params["stream"] = False
        params.pop("stream_options", None)
        params["tool_choice"] = "auto"
        if self.results_as_user:
            params["messages"] = [_as_user(m) for m in params["messages"]]
        return params

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        if not request.tools:
            async for event in super().stream(request):
                yield event
            return
        client = self._sdk()
        try:
            response = await client.chat.completions.create(**self.build_params(request))
        except ProviderError:
            raise
        except Exception as error:
            raise map_openai_error(error, self.provider, endpoint_of(client), self._idle_timeout) from error
        for event in self.events_of(response):
            yield event

    def events_of(self, response: Any) -> list[ModelEvent]:
        """The events of one whole Chat Completions answer, as its stream would have given them."""
        choice = response.choices[0]
        message = choice.message
        events: list[ModelEvent] = []
        parts: list[AssistantContent] = []
        if message.content:
            events.append(TextDelta(message.content))
            parts.append(TextPart(message.content))
        for index, tc in enumerate(message.tool_calls or []):
            events.append(ToolCallDelta(index, tc.id, tc.function.name, tc.function.arguments or ""))
            parts.append(parse_tool_call(tc.id or f"call_{index}", tc.function.name, tc.function.arguments or ""))
        u = response.usage
        usage = Usage(input_tokens=u.prompt_tokens or 0, output_tokens=u.completion_tokens or 0) if u else Usage()
        calls = any(not isinstance(p, TextPart) for p in parts)
        stop: StopReason = "tool_use" if calls else ("max_tokens" if choice.finish_reason == "length" else "end_turn")
        done = AssistantMessage(tuple(parts), self.provider, self.name, usage, stop, response.id)
        events.append(ResponseComplete(done))
        return events


def _as_user(message: dict[str, Any]) -> dict[str, Any]:
    if message.get("role") != "tool":
        return message
    return {"role": "user", "content": f"[result of tool call {message['tool_call_id']}]\n{message['content']}"}
