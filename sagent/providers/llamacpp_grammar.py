"""Tool calls for a local model held to a grammar: the default way tools reach llama.cpp.

`GrammarToolModel` describes the offered tools in the system prompt in the text protocol's format
(`sagent.providers.text_tools`), writes earlier calls and results back as text, and sends each request with
a GBNF grammar (`sagent.providers.tool_grammar`) so the reply is exactly one valid call of an offered tool or
plain words. Nothing is HTML-escaped on the way: the prompt is rendered by the model's own chat template.

A `TurnPolicy` says which of the two a turn may be, counted in tool rounds since the user's last message:
the embedded 135M model looks first (its first reply to a prompt is a call) and answers after one round,
because it does not choose well between looking and answering; a model the user picks chooses freely and
is asked for words after `rounds` rounds. An answer turn after results repeats the user's request below
the last result, which is what lets a small model answer about the results instead of drifting.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, replace

from sagent.events import ModelEvent, ResponseComplete, TextDelta, ToolCallDelta
from sagent.providers.llamacpp_tools import NativeToolsModel
from sagent.providers.text_tools import CLOSE, OPEN, ParsedText, TextToolModel, parse_text_calls, render_history
from sagent.providers.tool_grammar import turn_grammar
from sagent.types import (
    AssistantContent,
    AssistantMessage,
    Message,
    ModelRequest,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResult,
    ToolSpec,
    UserMessage,
)


@dataclass(frozen=True, slots=True)
class TurnPolicy:
    """What a local model's reply may be, by the tool rounds taken since the user's last message."""

    look_first: bool = False
    """The first reply to a prompt must be a tool call (when tools are offered)."""
    rounds: int = 4
    """After this many rounds the reply must be words about the results."""
    cut_repeats: bool = False
    """Words end where the model starts writing again what it wrote (`repeat_start`)."""


EMBEDDED_POLICY = TurnPolicy(look_first=True, rounds=1, cut_repeats=True)
"""For the embedded 135M model: one look with a tool, then an answer from what it returned."""

EXAMPLES: dict[str, dict[str, object]] = {
    "List": {},
    "Read": {"path": "README.md"},
    "Glob": {"pattern": "**/*.py"},
    "Grep": {"pattern": "def main"},
    "Bash": {"command": "ls"},
    "WebFetch": {"url": "https://example.com"},
}
"""The arguments each built-in tool is shown with: a small model copies what it is shown."""

RESULT_TAGS = ("<tool_result", "</tool_result>")
"""Where an answer stops: a model that writes one is copying a result, not answering."""

ANSWER_NOTE = "Answer my request from this result, in a few plain sentences: {request}"

REPEAT_WINDOW = 100
"""Characters written a second time, word for word, that end a small model's answer: past its first few
sentences the 135M model goes round in circles, one paragraph again and again until its token limit."""


def repeat_start(text: str, window: int = REPEAT_WINDOW, after: int = 0) -> int | None:
    """Where `text` starts writing again, word for word, `window` characters it wrote before (None when it
    never does); only copies ending after `after` are looked for, so a stream is checked once per delta."""
    for end in range(max(window, after + 1), len(text) + 1):
        if text.find(text[end - window : end], 0, end - window) != -1:
            return end - window
    return None


_DANGLING_FENCE = re.compile(r"(```|~~~)[\w.+-]*[ \t]*\n?$")


def dangling_fence(text: str) -> int | None:
    """Where a code fence the answer opened at its very end, with nothing in it, starts (the answer cut
    there reads whole), or None. A small model's answer often stops right after opening one: shown, it
    leaves the terminal in a code block that never closes."""
    found = _DANGLING_FENCE.search(text)
    if found is None or text.count(found.group(1)) % 2 == 0:  # an even count: the last fence closes a block
        return None
    return len(text[: found.start()].rstrip())


def example_arguments(tool: ToolSpec) -> dict[str, object]:
    """Arguments to show for `tool`: a known example, else its required properties with a placeholder."""
    if tool.name in EXAMPLES:
        return EXAMPLES[tool.name]
    schema = dict(tool.input_schema)
    properties = schema.get("properties") or {}
    placeholders = {"integer": 1, "number": 1, "boolean": True, "array": [], "object": {}}
    return {
        name: placeholders.get(str((properties.get(name) or {}).get("type")), "...")
        for name in schema.get("required") or []
    }


def first_sentence(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line.split(". ")[0].rstrip(".")


def local_protocol_prompt(tools: Sequence[ToolSpec]) -> str:
    """The system prompt's tool section for a small local model: one example, one line per tool."""
    shown = next((t for t in tools if t.name == "List"), tools[0])
    example = json.dumps({"name": shown.name, "arguments": example_arguments(shown)})
    lines = [
        "## Tools",
        "To look at files, write one tool call and nothing else, like this:",
        OPEN,
        example,
        CLOSE,
        "Its result comes back in a <tool_result> block. Then answer the user in plain words from it.",
        "The tools:",
    ]
    for tool in tools:
        described = first_sentence(tool.description or "")
        lines.append(f"- {tool.name}: {described}. Arguments: {json.dumps(example_arguments(tool))}")
    return "\n".join(lines)


def rounds_since_prompt(messages: Sequence[Message]) -> tuple[int, str]:
    """Tool rounds since the user's last message, and that message's text."""
    rounds = 0
    for message in reversed(messages):
        if isinstance(message, UserMessage):
            return rounds, message.text
        if isinstance(message, AssistantMessage) and message.tool_calls:
            rounds += 1
    return rounds, ""


def _remind(messages: tuple[Message, ...], request_text: str) -> tuple[Message, ...]:
    """`messages` with the user's request repeated below the last tool result."""
    if not request_text or not messages or not isinstance(messages[-1], UserMessage):
        return messages
    last = messages[-1]
    note = ANSWER_NOTE.format(request=request_text.strip())
    return (*messages[:-1], UserMessage.of(f"{last.text}\n{note}"))


class GrammarToolModel(TextToolModel):
    """`inner` (a llama.cpp server's chat completions) with tools through the text protocol, each reply held
    by a grammar to one valid call or plain words."""

    inner: NativeToolsModel

    def __init__(self, inner: NativeToolsModel, policy: TurnPolicy | None = None) -> None:
        super().__init__(inner)
        self.policy = policy or TurnPolicy()

    def plan(self, request: ModelRequest) -> tuple[ModelRequest, str | None]:
        """The request the server gets, and the grammar its reply is held to (None: free text)."""
        rounds, asked = rounds_since_prompt(request.messages)
        history = render_history(request.messages)
        called_before = any(isinstance(m, AssistantMessage) and m.tool_calls for m in request.messages)
        if not request.tools:
            # No tools (or taken away): words only where calls were made, so none is written as text.
            grammar = turn_grammar((), calls=False) if called_before else None
            if called_before and isinstance(request.messages[-1], ToolResult):
                history = _remind(history, asked)
            return replace(request, messages=history), grammar
        system = f"{request.system}\n\n{local_protocol_prompt(request.tools)}".strip()
        answer_now = rounds >= self.policy.rounds
        if answer_now:
            history = _remind(history, asked)
        must_call = rounds == 0 and self.policy.look_first
        grammar = turn_grammar(request.tools, calls=not answer_now, text=not must_call)
        return replace(request, system=system, tools=(), messages=history), grammar

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        translated, grammar = self.plan(request)
        held: list[str] = []  # text that may be a call: shown only once it is known to be words
        words = False
        # The words so far, how many of them are shown, and where they were cut when the model repeats
        # itself: the last REPEAT_WINDOW characters wait, as they may turn out to be the start of a copy.
        shown, emitted, cut = "", 0, None
        holding = REPEAT_WINDOW if self.policy.cut_repeats else 0
        # A small model answering after a result tends to copy it, closing tag and all: words end there.
        stop = RESULT_TAGS if grammar is not None and "answer" in grammar.split("\n", 1)[0] else ()
        async for event in self.inner.stream_with_grammar(translated, grammar, stop):
            if isinstance(event, TextDelta):
                if cut is not None:
                    continue
                if not words:
                    held.append(event.text)
                    so_far = "".join(held)
                    if not so_far or OPEN.startswith(so_far[: len(OPEN)]):
                        continue
                    words, event = True, TextDelta(so_far)
                before, shown = len(shown), shown + event.text
                if holding:
                    cut = repeat_start(shown, after=before)
                upto = cut if cut is not None else len(shown) - holding
                if upto > emitted:
                    yield TextDelta(shown[emitted:upto])
                    emitted = upto
                continue
            if not isinstance(event, ResponseComplete):
                yield event
                continue
            end = cut if cut is not None else len(shown)
            if holding:
                dangling = dangling_fence(shown[:end])
                if dangling is not None and dangling >= emitted:  # still held back: never shown
                    cut = end = dangling
            if end > emitted:
                yield TextDelta(shown[emitted:end])
            message = event.message
            if cut is not None:
                kept = tuple(p for p in message.content if not isinstance(p, TextPart))
                message = replace(message, content=(*kept, TextPart(shown[:cut].rstrip())))
            done, calls = self._parsed(message, bool(request.tools))
            for index, call in enumerate(calls):
                yield ToolCallDelta(index, call.id, call.name, json.dumps(call.arguments))
            yield ResponseComplete(done)

    @staticmethod
    def _parsed(message: AssistantMessage, tools: bool) -> tuple[AssistantMessage, tuple[ToolCall, ...]]:
        parsed = parse_text_calls(message.text) if tools else ParsedText(message.text, ())
        parts: list[AssistantContent] = [p for p in message.content if isinstance(p, ThinkingPart)]
        if parsed.text:
            parts.append(TextPart(parsed.text))
        parts += parsed.calls
        stop = "tool_use" if parsed.calls else message.stop_reason
        return replace(message, content=tuple(parts), stop_reason=stop), parsed.calls


__all__ = [
    "CLOSE",
    "EMBEDDED_POLICY",
    "GrammarToolModel",
    "TurnPolicy",
    "dangling_fence",
    "local_protocol_prompt",
    "repeat_start",
]
