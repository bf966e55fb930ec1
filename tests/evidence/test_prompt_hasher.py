"""The agent's prompt hasher gives the manifest's prompt hashes byte for byte, encoding only the messages a
request adds to the last one: a round's cost must not grow with the conversation."""

from __future__ import annotations

import pytest

from sagent.evidence import manifest as manifest_module
from sagent.evidence.manifest import PromptHasher, prompt_hashes
from sagent.types import AssistantMessage, Message, ModelRequest, TextPart, ToolCall, ToolResult, ToolSpec, UserMessage

TOOLS = (ToolSpec("Echo", "Echo the text (é).", {"type": "object", "properties": {"text": {"type": "string"}}}),)


def exchange(n: int) -> list[Message]:
    call = ToolCall(f"call-{n}", "Echo", {"text": f"ünïcode {n}"})
    return [AssistantMessage((TextPart(f"round {n}"), call)), ToolResult(call.id, "Echo", (TextPart(f"out {n} ✓"),))]


def request(messages: list[Message]) -> ModelRequest:
    return ModelRequest(system="Be brief. ☃", messages=tuple(messages), tools=TOOLS)


def test_a_growing_conversation_hashes_as_a_whole_and_encodes_each_message_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    encoded = 0
    real = manifest_module.sent_message

    def counting(message: Message) -> object:
        nonlocal encoded
        encoded += 1
        return real(message)

    hasher = PromptHasher()
    messages: list[Message] = [UserMessage.of("start")]
    expected = []
    for n in range(12):
        messages += exchange(n)
        expected.append(prompt_hashes(request(messages)))
    monkeypatch.setattr(manifest_module, "sent_message", counting)
    messages = [UserMessage.of("start")]
    for n in range(12):
        messages += exchange(n)
        assert hasher.hashes(request(messages)) == expected[n]
    assert encoded == len(messages)  # 25 messages over 12 requests, each encoded once, not 12 x growing


def test_a_history_that_changed_is_hashed_from_the_start() -> None:
    hasher = PromptHasher()
    messages: list[Message] = [UserMessage.of("start"), *exchange(0), *exchange(1)]
    hasher.hashes(request(messages))
    compacted: list[Message] = [UserMessage.of("summary of the work so far"), *exchange(2)]
    assert hasher.hashes(request(compacted)) == prompt_hashes(request(compacted))
    shorter = compacted[:1]
    assert hasher.hashes(request(shorter)) == prompt_hashes(request(shorter))
    # an equal but different message object is not taken on trust as the one hashed before
    edited = [UserMessage.of("summary of the work so far"), *exchange(3)]
    assert hasher.hashes(request(edited)) == prompt_hashes(request(edited))
    assert hasher.hashes(request([])) == prompt_hashes(request([]))
