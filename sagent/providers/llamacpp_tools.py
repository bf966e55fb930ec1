"""Native tool calls on a llama.cpp server, and the choice between them and the text protocol.

llama-cpp-python's server honours `tool_choice: "auto"` only with its `chatml-function-calling` chat format,
and only without streaming; its template also renders no `tool` messages, so a tool's result is sent as a
user message that names the call. `llama-server` (started with `--jinja`) takes tools and tool messages as
the OpenAI API has them, streamed or not. `NativeToolsModel` sends a request with tools in one piece and
turns the answer into the same events a stream gives.

`tool_mode` (`auto`, `grammar`, `native`, `text`; the `SAGENT_LOCAL_TOOLS` variable) picks how tools reach
a local model: `auto` is `grammar` (the text protocol held to one valid call or plain words by a GBNF
grammar, `sagent.providers.llamacpp_grammar`), falling back to the plain text protocol
(`sagent.providers.text_tools`) for good when the server refuses grammars; `native` is the server's own
function calling (llama-cpp-python's `chatml-function-calling` template HTML-escapes the whole prompt, which
teaches a small model to write `&#34;`: that is why it is not the default).

Usage: a server that reports no token counts (llama-cpp-python streams none) gets an estimate (about four
characters a token) rather than zeros, so the context gauge and the session log never read 0.
"""

from __future__ import annotations

import dataclasses
import html
import json
import os
from collections.abc import AsyncIterator
from typing import Any, Literal

from sagent.events import ModelEvent, ResponseComplete, TextDelta, ToolCallDelta
from sagent.providers.base import ProviderError
from sagent.providers.faults import endpoint_of
from sagent.providers.openai_compat import OpenAICompatModel, as_sent, map_openai_error, parse_tool_call
from sagent.providers.text_tools import parse_pseudo_calls
from sagent.types import AssistantContent, AssistantMessage, ModelRequest, StopReason, TextPart, Usage

ToolMode = Literal["auto", "grammar", "native", "text"]
TOOL_MODES: tuple[ToolMode, ...] = ("auto", "grammar", "native", "text")
MODE_VARIABLE = "SAGENT_LOCAL_TOOLS"


def tool_mode_from_env(given: str | None = None) -> ToolMode:
    """The tool mode asked for (`given`, else `SAGENT_LOCAL_TOOLS`, else `auto`); ValueError for another word."""
    value = (given or os.environ.get(MODE_VARIABLE) or "auto").strip().lower()
    if value not in TOOL_MODES:
        raise ValueError(f"{MODE_VARIABLE} must be one of {', '.join(TOOL_MODES)}, not {value!r}")
    return value


def refuses_tools(error: ProviderError) -> bool:
    """True when a server's 4xx says it cannot take tools or a grammar (so the text protocol should be used)."""
    text = str(error).lower()
    return error.kind == "bad_request" and any(word in text for word in ("tool", "function", "grammar"))


class NativeToolsModel(OpenAICompatModel):
    """Chat Completions with tools sent whole (not streamed); requests without tools still stream."""

    def __init__(
        self,
        model: str,
        *,
        results_as_user: bool = False,
        whole: bool = False,
        sampling: dict[str, float] | None = None,
        **options: Any,
    ) -> None:
        """`whole`: send every request whole, never streamed (for a server whose streams carry no usage).
        `sampling`: fields added to every request body (a penalty against repeating itself, say)."""
        super().__init__(model, **options)
        self.results_as_user = results_as_user
        self.whole = whole
        self.sampling = dict(sampling or {})

    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        params = {**self.sampling, **super().build_params(request)}
        if not request.tools:
            return params
        params["stream"] = False
        params.pop("stream_options", None)
        params["tool_choice"] = "auto"
        if self.results_as_user:
            params["messages"] = [_as_user(m) for m in params["messages"]]
        return params

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        async for event in self.stream_with_grammar(request, None):
            yield event

    async def stream_with_grammar(
        self, request: ModelRequest, grammar: str | None, stop: tuple[str, ...] = ()
    ) -> AsyncIterator[ModelEvent]:
        """The reply to `request`, held to the GBNF `grammar` when one is given, ending before any of `stop`."""
        params = self.build_params(request)
        if grammar is not None:
            params["grammar"] = grammar  # a field of llama.cpp's request body, sent as it is (`as_sent`)
        if stop:
            params["stop"] = list(stop)
        if params["stream"] and not self.whole:
            async for event in super().stream_params(params):
                yield with_usage(event, params)
            return
        params["stream"] = False
        params.pop("stream_options", None)
        client = await self._client.aget()
        try:
            response = await client.chat.completions.create(**as_sent(params))
        except ProviderError:
            raise
        except Exception as error:
            raise map_openai_error(error, self.provider, endpoint_of(client), self._idle_timeout) from error
        for event in self.events_of(response):
            yield with_usage(event, params)

    def events_of(self, response: Any) -> list[ModelEvent]:
        """The events of one whole Chat Completions answer, as its stream would have given them."""
        choice = response.choices[0]
        message = choice.message
        events: list[ModelEvent] = []
        parts: list[AssistantContent] = []
        if message.content and not (not message.tool_calls and pseudo_calls(message.content)):
            events.append(TextDelta(message.content))
            parts.append(TextPart(message.content))
        for index, tc in enumerate(message.tool_calls or pseudo_calls(message.content or "")):
            events.append(ToolCallDelta(index, tc.id, tc.function.name, tc.function.arguments or ""))
            parts.append(parse_tool_call(tc.id or f"call_{index}", tc.function.name, tc.function.arguments or ""))
        u = response.usage
        usage = Usage(input_tokens=u.prompt_tokens or 0, output_tokens=u.completion_tokens or 0) if u else Usage()
        calls = any(not isinstance(p, TextPart) for p in parts)
        stop: StopReason = "tool_use" if calls else ("max_tokens" if choice.finish_reason == "length" else "end_turn")
        done = AssistantMessage(tuple(parts), self.provider, self.name, usage, stop, response.id)
        events.append(ResponseComplete(done))
        return events


def pseudo_calls(text: str) -> list[Any]:
    """The calls a reply wrote as text in the `functions.NAME:` form (HTML escapes undone), shaped like
    the SDK's tool calls; empty when the text holds none."""
    from types import SimpleNamespace

    return [
        SimpleNamespace(id=call.id, function=SimpleNamespace(name=call.name, arguments=json.dumps(call.arguments)))
        for call in parse_pseudo_calls(html.unescape(text))
    ]


def estimate_tokens(text: str) -> int:
    """About how many tokens `text` is (four characters a token): for a server that does not say."""
    return (len(text) + 3) // 4


def with_usage(event: ModelEvent, params: dict[str, Any]) -> ModelEvent:
    """`event`, with an estimated usage when it completes a reply whose server reported none."""
    if not isinstance(event, ResponseComplete) or event.message.usage.input_tokens or event.message.usage.output_tokens:
        return event
    messages = params.get("messages") or []
    prompt = sum(estimate_tokens(json.dumps(m.get("content", ""))) + 4 for m in messages)
    usage = Usage(input_tokens=prompt, output_tokens=estimate_tokens(event.message.text) or 1)
    return ResponseComplete(dataclasses.replace(event.message, usage=usage))


def _as_user(message: dict[str, Any]) -> dict[str, Any]:
    if message.get("role") != "tool":
        return message
    return {"role": "user", "content": f"[result of tool call {message['tool_call_id']}]\n{message['content']}"}
