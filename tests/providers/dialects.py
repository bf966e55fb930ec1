"""One description per provider of how its fake server is scripted and where its wire format puts things,
so the conformance suite can ask every provider the same questions.

A dialect speaks in provider-neutral terms (a text reply, these tool calls, this usage, this fault) and
answers in them (the signature sent back, the tool-result ids sent back), while each fake server streams
its provider's real wire format to the provider's official SDK.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from sagent.providers.anthropic import AnthropicModel
from sagent.providers.base import Model
from sagent.providers.google import GoogleModel
from sagent.providers.openai_compat import OpenAICompatModel
from sagent.providers.openai_responses import OpenAIModel
from tests.fakes import anthropic_server as anth
from tests.fakes import gemini_server as gem
from tests.fakes import openai_chat_server as chat
from tests.fakes import openai_responses_server as resp
from tests.fakes.sse_server import FakeServer, Stream

Calls = list[tuple[str, dict[str, Any]]]


@dataclass(frozen=True)
class Dialect:
    name: str
    model_id: str
    # USD per million tokens the catalog must hold for model_id: input, output, cache read.
    prices: tuple[float, float, float]
    server: Callable[[list[Any]], FakeServer]
    model: Callable[..., Model]  # (base URL, **constructor options such as idle_timeout)
    text: Callable[[str], Any]
    tools: Callable[[Calls], Any]
    thinking: Callable[[str, str, str], Any]  # (thought, signature, text)
    usage: Callable[[int, int, int], Any]  # (uncached input, cache read, output): a text reply "ok"
    fault: Callable[[int, str, float | None], Any]  # (status, message, retry-after seconds)
    cut: Callable[[str], Any]  # a text reply whose stream stops half-way
    turn: Callable[[str, Calls], Any]  # some text, then tool calls, in one reply
    malformed_call: Callable[[str, str], Any]  # (tool name, raw argument text that is not valid JSON)
    # Read back from a request body:
    signature_sent: Callable[[dict[str, Any]], str | None]
    call_ids_sent: Callable[[dict[str, Any]], list[str]]
    result_ids_sent: Callable[[dict[str, Any]], list[str]]
    overloaded_status: int = 503
    # Whether the wire format carries reasoning back to the model (Chat Completions has no field for it).
    keeps_signatures: bool = True


# --------------------------------------------------------------------------------------------- anthropic


def _anthropic_fault(status: int, message: str, retry_after: float | None) -> anth.Fault:
    kinds = {
        429: "rate_limit_error",
        529: "overloaded_error",
        401: "authentication_error",
        400: "invalid_request_error",
        500: "api_error",
    }
    headers = {"retry-after": str(retry_after)} if retry_after is not None else {}
    return anth.Fault(status, kinds.get(status, "api_error"), message, headers)


def _anthropic_blocks(body: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [b for m in body["messages"] for b in m["content"] if isinstance(b, dict) and b.get("type") == kind]


ANTHROPIC = Dialect(
    name="anthropic",
    model_id="claude-sonnet-4-6",
    prices=(3.0, 15.0, 0.3),
    server=anth.FakeAnthropic,
    model=lambda url, **kw: AnthropicModel("claude-sonnet-4-6", base_url=url, api_key="test", **kw),
    text=anth.text_response,
    tools=lambda calls: anth.tool_use_response(calls),
    thinking=anth.thinking_response,
    usage=lambda fresh, cached, out: anth.text_response(
        "ok", input_tokens=fresh, cache_read_input_tokens=cached, output_tokens=out
    ),
    fault=_anthropic_fault,
    cut=lambda text: anth.Reply([{"type": "text", "text": text}], cut_after=5),
    turn=lambda text, calls: anth.tool_use_response(calls, text),
    malformed_call=anth.raw_tool_json_response,
    signature_sent=lambda body: next((b["signature"] for b in _anthropic_blocks(body, "thinking")), None),
    call_ids_sent=lambda body: [b["id"] for b in _anthropic_blocks(body, "tool_use")],
    result_ids_sent=lambda body: [b["tool_use_id"] for b in _anthropic_blocks(body, "tool_result")],
    overloaded_status=529,
)

# ------------------------------------------------------------------------------------- openai responses


def _responses_fault(status: int, message: str, retry_after: float | None) -> resp.Fault:
    codes = {429: "rate_limit_exceeded", 400: "context_length_exceeded", 401: "invalid_api_key"}
    headers = {"retry-after": str(retry_after)} if retry_after is not None else {}
    return resp.Fault(status, message, codes.get(status), headers)


def _items(body: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [i for i in body["input"] if i.get("type") == kind]


OPENAI = Dialect(
    name="openai",
    model_id="gpt-5.4",
    prices=(2.5, 15.0, 0.25),
    server=resp.FakeResponses,
    model=lambda url, **kw: OpenAIModel("gpt-5.4", base_url=url, api_key="test", **kw),
    text=resp.responses_text,
    tools=lambda calls: resp.responses_tools(calls),
    thinking=resp.responses_reasoning,
    usage=lambda fresh, cached, out: resp.responses_text(
        "ok", input_tokens=fresh + cached, cached_tokens=cached, output_tokens=out
    ),
    fault=_responses_fault,
    cut=lambda text: resp.ResponsesReply([{"type": "message", "text": text}], cut_after=6),
    turn=lambda text, calls: resp.responses_tools(calls, text),
    malformed_call=lambda name, raw: resp.ResponsesReply(
        [{"type": "function_call", "call_id": "call_bad", "name": name, "arguments": raw}]
    ),
    signature_sent=lambda body: next((i["encrypted_content"] for i in _items(body, "reasoning")), None),
    call_ids_sent=lambda body: [i["call_id"] for i in _items(body, "function_call")],
    result_ids_sent=lambda body: [i["call_id"] for i in _items(body, "function_call_output")],
)

# ---------------------------------------------------------------------------------- chat completions


def _chat_fault(status: int, message: str, retry_after: float | None) -> tuple[Any, ...]:
    headers = {"retry-after": str(retry_after)} if retry_after is not None else {}
    return (status, {"error": {"message": message, "type": "error"}}, headers)


def _chat_thinking(thought: str, signature: str, text: str) -> list[dict[str, Any]]:
    # Chat Completions servers stream reasoning as `reasoning_content` and have no signature.
    out = [
        chat.chunk({"role": "assistant", "reasoning_content": thought[i : i + 5]}) for i in range(0, len(thought), 5)
    ]
    return out + chat.text_chunks(text)


def _chat_usage(fresh: int, cached: int, out: int) -> list[dict[str, Any]]:
    usage = {
        "prompt_tokens": fresh + cached,
        "completion_tokens": out,
        "total_tokens": fresh + cached + out,
        "prompt_tokens_details": {"cached_tokens": cached},
    }
    return chat.text_chunks("ok", usage)


def _chat_turn(text: str, calls: Calls) -> list[dict[str, Any]]:
    # The text without its finish chunk, then the calls without their opening role chunk.
    return chat.text_chunks(text)[:-1] + chat.tool_chunks([(name, json.dumps(args)) for name, args in calls])[1:]


def _chat_messages(body: dict[str, Any], role: str) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] == role]


OPENAI_COMPAT = Dialect(
    name="openai-compat",
    model_id="kimi-k2-thinking",
    prices=(0.6, 2.5, 0.15),
    server=chat.FakeChat,
    model=lambda url, **kw: OpenAICompatModel(
        "kimi-k2-thinking", base_url=url, api_key="test", provider="moonshot", **kw
    ),
    text=chat.text_chunks,
    tools=lambda calls: chat.tool_chunks([(name, json.dumps(args)) for name, args in calls]),
    thinking=_chat_thinking,
    usage=_chat_usage,
    fault=_chat_fault,
    cut=lambda text: Stream([(None, c) for c in chat.text_chunks(text)], cut_after=3),
    turn=lambda text, calls: _chat_turn(text, calls),
    malformed_call=lambda name, raw: chat.tool_chunks([(name, raw)]),
    signature_sent=lambda body: None,
    call_ids_sent=lambda body: [c["id"] for m in _chat_messages(body, "assistant") for c in m.get("tool_calls", [])],
    result_ids_sent=lambda body: [m["tool_call_id"] for m in _chat_messages(body, "tool")],
    keeps_signatures=False,
)

# ------------------------------------------------------------------------------------------------ google


def _gemini_fault(status: int, message: str, retry_after: float | None) -> gem.Fault:
    details = []
    if retry_after is not None:  # Gemini says when to retry in the error details, not in a header
        details = [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{retry_after:g}s"}]
    return gem.Fault(status, message, details)


def _gemini_parts(body: dict[str, Any], key: str) -> list[dict[str, Any]]:
    return [p for c in body["contents"] for p in c["parts"] if key in p]


GOOGLE = Dialect(
    name="google",
    model_id="gemini-3-flash-preview",
    prices=(0.5, 3.0, 0.05),
    server=gem.FakeGemini,
    model=lambda url, **kw: GoogleModel("gemini-3-flash-preview", base_url=url, api_key="test", **kw),
    text=gem.gemini_text,
    tools=lambda calls: gem.gemini_tools(calls),
    thinking=gem.gemini_thinking,
    usage=lambda fresh, cached, out: gem.gemini_text(
        "ok", promptTokenCount=fresh + cached, cachedContentTokenCount=cached, candidatesTokenCount=out
    ),
    fault=_gemini_fault,
    cut=lambda text: gem.GeminiReply([{"text": text}], cut_after=2),
    turn=lambda text, calls: gem.gemini_tools(calls, text),
    # Gemini parses the model's call itself: one that does not parse comes as a finish reason, no call.
    malformed_call=lambda name, raw: gem.gemini_malformed_call(f"{name}({raw}"),
    signature_sent=lambda body: next((p["thoughtSignature"] for p in _gemini_parts(body, "thoughtSignature")), None),
    call_ids_sent=lambda body: [p["functionCall"]["id"] for p in _gemini_parts(body, "functionCall")],
    result_ids_sent=lambda body: [p["functionResponse"]["id"] for p in _gemini_parts(body, "functionResponse")],
)


def _steps(body: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [s for s in body["input"] if s["type"] == kind]


def _resuming_google(url: str, **options: Any) -> Model:
    from sagent.providers.google_interactions import ResumingGoogleModel

    return ResumingGoogleModel("gemini-3-flash-preview", base_url=url, api_key="test", **options)


# The same fake and replies, spoken over the Interactions API (`--resume-mode resume`): the conformance suite
# asks it the questions it asks every provider; the CLI fault runs keep to the providers' names above.
GOOGLE_INTERACTIONS = replace(
    GOOGLE,
    name="google-interactions",
    model=_resuming_google,
    signature_sent=lambda body: next((s["signature"] for s in _steps(body, "thought") if "signature" in s), None),
    call_ids_sent=lambda body: [s["id"] for s in _steps(body, "function_call")],
    result_ids_sent=lambda body: [s["call_id"] for s in _steps(body, "function_result")],
)

DIALECTS = (ANTHROPIC, OPENAI, OPENAI_COMPAT, GOOGLE)
