"""An agent's prompt hashes are taken message by message, the state after its earlier messages kept for the
next request: each hash must still equal the hash of the whole request encoded at once, whatever happens to
the history between requests (it grows, is compacted or rewound, a result is cleared, two conversations
take turns, the system prompt changes, a lone surrogate forces the ASCII form)."""

from __future__ import annotations

import hashlib
from dataclasses import replace

from sagent.evidence.manifest import NOT_SENT, PromptHasher, _unnumbered
from sagent.lib.json import canonical_json
from sagent.types import (
    AssistantMessage,
    Message,
    ModelRequest,
    TextPart,
    ToolCall,
    ToolResult,
    ToolSpec,
    UserMessage,
    to_dict,
)

TOOLS = (ToolSpec("Read", "Read a file.", {"type": "object", "properties": {"path": {"type": "string"}}}),)


def whole(request: ModelRequest) -> tuple[str, str]:
    """The two hashes as defined: the canonical JSON of the whole request, hashed at once."""
    tools = [{"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in request.tools]
    messages = [{k: v for k, v in to_dict(m).items() if k not in NOT_SENT} for m in request.messages]
    exact = {"system": request.system, "tools": tools, "messages": messages}
    unnumbered = {"system": request.system, "tools": tools, "messages": _unnumbered(messages)}
    return hashlib.sha256(canonical_json(exact)).hexdigest(), hashlib.sha256(canonical_json(unnumbered)).hexdigest()


def rounds(count: int, tag: str = "") -> list[Message]:
    history: list[Message] = [UserMessage.of(f"read the files {tag}")]
    for n in range(count):
        call = ToolCall(f"call_{tag}{n}", "Read", {"path": f"f{n}.txt"})
        history += [AssistantMessage((call,)), ToolResult.of(call, f"line {n} ü")]
    return history


def request(history: list[Message], system: str = "Be brief.") -> ModelRequest:
    return ModelRequest(system, tuple(history), TOOLS)


_hasher = PromptHasher()


def prompt_hashes(request: ModelRequest) -> tuple[str, str]:
    """The hashes as an agent's manifests take them: one hasher, request after request."""
    return _hasher.hashes(request)


def test_each_request_of_a_growing_session_hashes_as_the_whole() -> None:
    history = rounds(0)
    for n in range(6):
        req = request(history)
        assert prompt_hashes(req) == whole(req)
        call = ToolCall(f"grow{n}", "Read", {"path": "a"})
        history = [*history, AssistantMessage((call,)), ToolResult.of(call, "ok")]


def test_a_history_changed_in_place_is_hashed_anew() -> None:
    history = rounds(5)
    assert prompt_hashes(request(history)) == whole(request(history))
    cleared = list(history)  # a tool result cleared, keeping every other message object
    cleared[4] = replace(history[4], content=(TextPart("[cleared]"),))  # type: ignore[arg-type]
    assert prompt_hashes(request(cleared)) == whole(request(cleared))
    assert prompt_hashes(request(cleared)) != prompt_hashes(request(history))
    compacted = [UserMessage.of("summary of the work so far"), *history[-2:]]
    assert prompt_hashes(request(compacted)) == whole(request(compacted))
    rewound = history[:3]
    assert prompt_hashes(request(rewound)) == whole(request(rewound))
    same_text = [UserMessage.of("read the files "), *history[1:]]  # equal content, other objects
    assert prompt_hashes(request(same_text)) == whole(request(same_text))


def test_conversations_taking_turns_and_a_new_system_prompt_hash_as_the_whole() -> None:
    a, b = rounds(3, "a"), rounds(4, "b")
    for _ in range(3):
        for history in (a, b):
            assert prompt_hashes(request(history)) == whole(request(history))
            assert prompt_hashes(request(history, "Other.")) == whole(request(history, "Other."))
        a, b = a + rounds(1, "a")[1:], b + rounds(1, "b")[1:]


def test_a_lone_surrogate_anywhere_gives_the_ascii_form_of_the_whole() -> None:
    history = rounds(2)
    assert prompt_hashes(request(history)) == whole(request(history))
    odd = [*history, UserMessage.of("broken \udc80 text")]
    assert prompt_hashes(request(odd)) == whole(request(odd))
    assert prompt_hashes(request(history, "sys \ud800")) == whole(request(history, "sys \ud800"))
