"""The adapters convert (and Anthropic's also encodes) each message once while it stays in the history.
What they send must be exactly what converting the whole history afresh gives, round after round, and a
message that changed (a compaction's summary, a rewind, a cleared tool result, each a new message object)
must never be served from what an earlier request converted."""

from __future__ import annotations

import json
from dataclasses import replace

from sagent.providers import anthropic, google, google_history, message_cache, openai_compat, openai_responses
from sagent.types import (
    AssistantMessage,
    ImagePart,
    Message,
    ModelRequest,
    ServerToolPart,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResult,
    ToolSpec,
    UserMessage,
)
from tests.fakes import openai_chat_server as chat_server
from tests.fakes.openai_chat_server import FakeChat

TOOLS = (ToolSpec("Read", "Read a file.", {"type": "object", "properties": {"path": {"type": "string"}}}),)


def rounds(count: int, start: int = 0) -> list[Message]:
    out: list[Message] = []
    for n in range(start, start + count):
        call = ToolCall(f"call_{n}", "Read", {"path": f"f{n}.txt"})
        thinking = ThinkingPart(f"think {n}", signature=f"sig{n}", provider="anthropic")
        out += [AssistantMessage((thinking, TextPart(f"reading ü{n}"), call)), ToolResult.of(call, f"line {n}")]
    return out


def histories() -> list[list[Message]]:
    """The histories a session sends, in order: it grows, a result is cleared, it is compacted and rewound."""
    grown = [UserMessage.of("read the files"), *rounds(3)]
    steps = [grown[:1], grown, [*grown, *rounds(1, 3)]]
    cleared = list(steps[-1])
    cleared[2] = replace(cleared[2], content=(TextPart("[result cleared]"),))  # type: ignore[arg-type]
    steps.append(cleared)
    steps.append([*cleared, UserMessage.of("and now?"), *rounds(2, 4)])
    steps.append([UserMessage.of("summary of the work"), *steps[-1][-4:]])  # a compaction keeps the last ones
    steps.append(steps[-1][:2])  # a rewind
    steps.append([*steps[-1], AssistantMessage((TextPart("done"),))])
    return steps


def test_anthropic_sends_each_round_the_bytes_a_fresh_conversion_gives() -> None:
    model = anthropic.AnthropicModel(api_key="test")
    for history in [*histories(), *histories()[::-1]]:
        request = ModelRequest("Be brief.", tuple(history), TOOLS)
        fresh = {**model.build_params(request), "stream": True}
        assert model._body(request) == json.dumps(fresh, ensure_ascii=False, separators=(",", ":")).encode()


def test_anthropic_moves_its_cache_breakpoints_as_user_turns_are_added() -> None:
    cache, history = anthropic.HistoryCache(), [UserMessage.of("start")]
    for n in range(8):  # tool rounds, a user message merged into a turn, an assistant reply alone
        history += rounds(1, n) if n % 3 else [UserMessage.of(f"note {n}"), AssistantMessage((TextPart("ok"),))]
        sent = json.loads(cache.json(tuple(history)))
        assert sent == anthropic.convert_history(tuple(history))
        marked = [t for t in sent if any("cache_control" in b for b in t["content"])]
        assert len(marked) == min(2, sum(t["role"] == "user" for t in sent))


def test_anthropic_converts_again_when_the_advisor_is_offered_or_not() -> None:
    blocks = json.dumps([{"type": "server_tool_use", "id": "srvtoolu_1", "name": "advisor", "input": {}}])
    consulted = AssistantMessage((ServerToolPart("advisor", "anthropic", blocks, text="advice: go"), TextPart("ok")))
    history = (UserMessage.of("plan"), consulted, UserMessage.of("next"))
    model = anthropic.AnthropicModel(api_key="test")
    for server_tools in (False, True, False):
        sent = model._history.json(history, server_tools=server_tools)
        assert json.loads(sent) == anthropic.convert_history(history, server_tools=server_tools)
        assert ("server_tool_use" in sent) is server_tools


def test_google_sends_each_round_what_a_fresh_conversion_gives() -> None:
    cache = google.HistoryCache()
    for history in [*histories(), *histories()[::-1], *histories()]:
        contents = cache.convert(tuple(history))
        assert contents == google.convert_history(tuple(history))
        body = {"contents": contents, "tools": [{"functionDeclarations": []}]}
        assert google_history.encode_body(body, cache.json(contents)) == json.dumps(body).encode()


def with_images(history: list[Message]) -> list[Message]:
    """`history` with an image in its second tool result (chat and Responses send it after the result)."""
    out = list(history)
    for n, message in enumerate(out):
        if isinstance(message, ToolResult) and n > 2:
            out[n] = replace(message, content=(*message.content, ImagePart("aGk=")))
            break
    return out


def test_openai_chat_and_responses_send_each_round_what_a_fresh_conversion_gives() -> None:
    chat = openai_compat.OpenAICompatModel("m", api_key="test", base_url="http://127.0.0.1:9")
    responses = openai_responses.OpenAIModel(api_key="test")
    for history in histories() + [with_images(h) for h in histories()]:
        request = ModelRequest("Be brief.", tuple(history), TOOLS)
        sent = chat.build_params(request)["messages"]
        assert sent == [{"role": "system", "content": "Be brief."}, *openai_compat.convert_history(request.messages)]
        assert responses.build_params(request)["input"] == openai_responses.convert_history(request.messages)


def test_openai_responses_encodes_each_round_the_bytes_of_a_fresh_conversion() -> None:
    model = openai_responses.OpenAIModel(api_key="test")
    for history in [*histories(), *[with_images(h) for h in histories()[::-1]]]:
        params = model.build_params(ModelRequest("Be brief.", tuple(history), TOOLS))
        sent = message_cache.encode_body(params, "input", model._history.json(params["input"]))
        fresh = {**params, "input": openai_responses.convert_history(tuple(history))}
        assert sent == json.dumps(fresh, ensure_ascii=False, separators=(",", ":")).encode()


async def test_openai_chat_sends_the_body_the_sdks_create_would_send() -> None:
    """Each round's body, encoded by sagent from each message's JSON, against the SDK's `create` given the
    same parameters as named arguments (what sagent sent before), both read back by the fake;
    the model's `extra_body` fields are merged into the body, not nested under an `extra_body` field."""
    steps = histories() + [with_images(h) for h in histories()]
    with FakeChat([chat_server.text_chunks("ok", {"prompt_tokens": 1}) for _ in range(2 * len(steps))]) as fake:
        model = openai_compat.OpenAICompatModel("m", api_key="test", base_url=fake.url, extra_body={"top_k": 3})
        sdk = model._sdk()
        for history in steps:
            request = ModelRequest("Be brief.", tuple(history), TOOLS)
            async for _ in model.stream(request):
                pass
            chunks = await sdk.chat.completions.create(**model.build_params(request))
            async for _ in chunks:
                pass
        bodies = [r["body"] for r in fake.requests]
        assert bodies[0::2] == bodies[1::2]  # the same fields and values (the SDK orders its named ones)
        assert all(r["body"]["top_k"] == 3 and "extra_body" not in r["body"] for r in fake.requests)
        await model.aclose()
