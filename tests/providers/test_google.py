"""What is particular to Gemini: thinking configuration, signatures placed back on their parts, blocked
prompts, and keys. The shared behaviour is in test_conformance.py."""

from __future__ import annotations

from typing import Any

import pytest

from sagent.events import ResponseComplete
from sagent.providers.base import AuthenticationError
from sagent.providers.google import GoogleModel, _Assembler, convert_history
from sagent.providers.lazy_tls import TrustOnFirstUse
from sagent.types import (
    AssistantMessage,
    ImagePart,
    ModelRequest,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolSpec,
    UserMessage,
)
from tests.fakes.gemini_server import FakeGemini, GeminiReply, gemini_text, gemini_tools


async def stream(steps: list, request: ModelRequest, model_id: str = "gemini-3-flash-preview"):
    with FakeGemini(steps) as fake:
        model = GoogleModel(model_id, base_url=fake.url, api_key="g-test")
        try:
            events = [e async for e in model.stream(request)]
        finally:
            await model.aclose()
        return events, fake.requests


def keys(d: dict) -> dict:
    """The API reads both spellings of a field (thinking_budget, thinkingBudget); compare either."""
    return {k.replace("_", "").lower(): v for k, v in d.items()}


async def test_thinking_configuration_and_the_key_header() -> None:
    budget = ModelRequest("sys", (UserMessage.of("hi"),), thinking_budget=2048, max_tokens=500)
    _, requests = await stream([gemini_text("ok")], budget)
    body, headers = requests[0]["body"], requests[0]["headers"]
    assert ":streamGenerateContent" in requests[0]["path"] and headers["x-goog-api-key"] == "g-test"
    config = keys(body["generationConfig"])
    assert keys(config["thinkingconfig"]) == {"thinkingbudget": 2048, "includethoughts": True}
    assert config["maxoutputtokens"] == 500 and body["systemInstruction"]["parts"] == [{"text": "sys"}]
    level = ModelRequest("sys", (UserMessage.of("hi"),), effort="low")
    _, requests = await stream([gemini_text("ok")], level)
    config = keys(requests[0]["body"]["generationConfig"])
    assert keys(config["thinkingconfig"]) == {"thinkinglevel": "LOW", "includethoughts": True}


async def test_a_blocked_prompt_is_a_refusal_not_a_crash() -> None:
    blocked = GeminiReply([{"text": ""}], finish="SAFETY")
    events, _ = await stream([blocked], ModelRequest("", (UserMessage.of("hi"),)))
    assert isinstance(events[-1], ResponseComplete) and events[-1].message.stop_reason == "refusal"


async def test_no_key_is_an_authentication_error_naming_the_variables() -> None:
    model = GoogleModel("gemini-3-flash-preview")
    with pytest.raises(AuthenticationError, match="GEMINI_API_KEY"):
        [e async for e in model.stream(ModelRequest("", (UserMessage.of("hi"),)))]


def test_signatures_go_back_on_the_parts_they_came_on() -> None:
    message = AssistantMessage(
        (
            ThinkingPart("planning", None, "google"),
            ThinkingPart("", "c2lnLWE=", "google"),
            ToolCall("g1", "Read", {"path": "a"}),
            ToolCall("g2", "Read", {"path": "b"}),
            TextPart("and"),
            ThinkingPart("", "c2lnLWI=", "google"),  # a signature that came last, on an empty chunk
        ),
        "google",
    )
    (user, model) = convert_history((UserMessage((TextPart("hi"), ImagePart("aGVsbG8=", "image/png"))), message))
    assert user["parts"][1]["inlineData"] == {"mime_type": "image/png", "data": "aGVsbG8="}
    thought, first, second, text = model["parts"]
    assert thought["thought"] and thought["text"] == "planning"
    assert first["functionCall"]["name"] == "Read" and first["thoughtSignature"] == "c2lnLWE="
    assert "thoughtSignature" not in second
    assert text["text"] == "and" and text["thoughtSignature"] == "c2lnLWI="


async def test_a_url_safe_signature_is_kept_and_goes_back_as_it_came() -> None:
    """The API sends bytes as URL-safe base64 (`-` and `_`); sagent keeps a signature in standard base64
    and sends it back in the API's own alphabet, so the model gets back exactly the bytes it signed."""
    wire = "-_-_ab"  # the bytes fb ff bf 69, unpadded, as the API may write them
    events, _ = await stream(
        [gemini_tools([("Read", {"path": "a"})], signature=wire)], ModelRequest("", (UserMessage.of("hi"),))
    )
    message = events[-1].message
    thinking, call = message.content
    assert isinstance(thinking, ThinkingPart) and thinking.signature == "+/+/aQ=="
    assert isinstance(call, ToolCall) and call.name == "Read" and call.arguments == {"path": "a"}
    (_, model) = convert_history((UserMessage.of("hi"), message))
    assert model["parts"][0]["thoughtSignature"] == "-_-_aQ=="


async def test_the_request_is_the_json_the_api_takes() -> None:
    request = ModelRequest(
        "be brief",
        (UserMessage.of("hi"),),
        tools=(ToolSpec("Read", "read a file", {"type": "object", "properties": {"path": {"type": "string"}}}),),
        temperature=0.2,
    )
    _, requests = await stream([gemini_text("ok")], request, "models/gemini-3-pro-preview")
    assert requests[0]["path"].split("?")[0].endswith("/models/gemini-3-pro-preview:streamGenerateContent")
    body = requests[0]["body"]
    assert body["contents"] == [{"role": "user", "parts": [{"text": "hi"}]}]
    assert body["systemInstruction"]["parts"] == [{"text": "be brief"}]
    [declaration] = body["tools"][0]["functionDeclarations"]
    assert declaration["name"] == "Read" and declaration["parametersJsonSchema"]["properties"]["path"]
    assert body["generationConfig"]["temperature"] == 0.2


def test_the_sdk_client_gets_sagents_tls_context_and_loads_no_trust_store_for_a_local_endpoint() -> None:
    """google-genai would load a trust store for its HTTP client and another for its websockets when the
    client is built (tens of milliseconds each); a local endpoint on plain HTTP needs neither."""
    client = GoogleModel("gemini-3-flash-preview", base_url="http://127.0.0.1:9", api_key="g-test")._build_client()
    options = client._api_client._http_options
    lazy = options.client_args["verify"]
    assert isinstance(lazy, TrustOnFirstUse) and lazy.cert_store_stats()["x509_ca"] == 0
    assert options.async_client_args["verify"] is lazy and options.async_client_args["ssl"] is lazy


async def test_fields_a_server_writes_in_snake_case_are_read_too() -> None:
    """The API writes camelCase; the SDK's types read snake_case inside parts, usage and feedback as well,
    and so does sagent, for a server (a proxy, a stand-in) that writes those."""
    snake = GeminiReply([{"function_call": {"name": "Read", "args": {"path": "a"}}, "thought_signature": "c2ln"}])
    events, _ = await stream([snake], ModelRequest("", (UserMessage.of("hi"),)))
    thinking, call = events[-1].message.content
    assert isinstance(call, ToolCall) and call.name == "Read" and call.arguments == {"path": "a"}
    assert isinstance(thinking, ThinkingPart) and thinking.signature == "c2ln"

    async def chunks():
        yield {"promptFeedback": {"block_reason": "SAFETY"}, "usageMetadata": {"prompt_token_count": 7}}

    [done] = [e async for e in _Assembler("gemini-3-flash-preview").feed(chunks())]
    assert done.message.stop_reason == "refusal" and done.message.usage.input_tokens == 7


@pytest.mark.parametrize("missing", ["_build_request", "_async_request"])
async def test_a_google_genai_without_its_private_request_calls_sends_the_same_request(
    monkeypatch: pytest.MonkeyPatch, missing: str
) -> None:
    """sagent hands google-genai the request's JSON through calls it does not make public; a release
    without them still gets the same request, through the public `async_request_streamed`."""
    import types

    from google.genai import _api_client

    request = ModelRequest("sys", (UserMessage.of("hi"),), max_tokens=500)
    _, sent = await stream([gemini_text("ok")], request)
    client = _api_client.BaseApiClient
    private = getattr(client, missing)
    public = client.async_request_streamed
    used: list[dict] = []

    async def released(self: Any, method: str, path: str, body: dict, options: Any = None) -> Any:
        used.append(body)  # a release whose public call does its work without the private one
        setattr(self, missing, types.MethodType(private, self))
        try:
            return await public(self, method, path, body, options)
        finally:
            delattr(self, missing)

    monkeypatch.delattr(client, missing)
    monkeypatch.setattr(client, "async_request_streamed", released)
    again, sent_again = await stream([gemini_text("ok")], request)
    assert len(used) == 1
    assert sent_again[0]["body"] == sent[0]["body"] and sent_again[0]["path"] == sent[0]["path"]
    assert isinstance(again[-1], ResponseComplete) and again[-1].message.text == "ok"
