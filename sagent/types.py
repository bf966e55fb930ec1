"""Provider-neutral conversation data: messages, content parts, tool calls, usage and cost.

Everything here is a frozen, slotted dataclass. Provider adapters convert these to and from their wire
formats; the session log serializes them with `to_dict`/`from_dict`. Provider-specific data that must
survive a round trip (thinking signatures, encrypted reasoning) rides along opaquely in `signature`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal

# ---------------------------------------------------------------------------------------------- content


@dataclass(frozen=True, slots=True)
class TextPart:
    text: str
    type: Literal["text"] = "text"


@dataclass(frozen=True, slots=True)
class ImagePart:
    """An image as base64 data."""

    data: str
    media_type: str = "image/png"
    type: Literal["image"] = "image"


@dataclass(frozen=True, slots=True)
class ThinkingPart:
    """Model reasoning. `signature` is opaque provider data that only `provider` can accept back.

    `redacted` marks reasoning the provider returned encrypted: `signature` then holds the payload and
    `text` is empty. `item_id` is the provider's own id for the reasoning item, where it has one (OpenAI).
    """

    text: str
    signature: str | None = None
    provider: str | None = None
    redacted: bool = False
    item_id: str | None = None
    type: Literal["thinking"] = "thinking"


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A request by the model to run a tool.

    `arguments` is the parsed JSON object. When the model sent arguments that are not a JSON object,
    `arguments` is empty and `invalid_arguments` holds the raw text, so the loop can tell the model.
    """

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    invalid_arguments: str | None = None
    type: Literal["tool_call"] = "tool_call"


@dataclass(frozen=True, slots=True)
class ServerToolPart:
    """A tool the provider ran on its own side within one response (Anthropic's server-side advisor).

    `blocks` is the provider's own JSON for the call and its result, sent back unchanged to `provider`
    (the result may be encrypted); `text` is what the tool produced, where it is readable, for people and
    for other providers. `model` and `usage` are what the tool's own model used, billed apart from the
    response's `usage`.
    """

    name: str
    provider: str
    blocks: str
    text: str = ""
    model: str = ""
    usage: Usage | None = None
    type: Literal["server_tool"] = "server_tool"

    @property
    def note(self) -> str:
        """What the tool said, marked, as plain text for a provider that cannot take the blocks back
        (empty when it is not readable)."""
        return f"[{self.name} note]\n{self.text}" if self.text else ""


UserContent = TextPart | ImagePart
AssistantContent = TextPart | ThinkingPart | ToolCall | ServerToolPart
ContentPart = TextPart | ImagePart | ThinkingPart | ToolCall | ServerToolPart

# --------------------------------------------------------------------------------------- usage and cost


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts of one response. `input_tokens` excludes the cached ones."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )

    @property
    def total_input_tokens(self) -> int:
        """Every token of the prompt, cached or not: the context size of the request."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens


def usd(amount: Decimal | float | int | str) -> Decimal:
    """An amount of dollars as an exact decimal. A float is taken at its shortest decimal form (0.06, not
    0.059999999999999997779...), so amounts read back from JSON compare as they were written."""
    if isinstance(amount, Decimal):
        return amount
    if isinstance(amount, float):
        return Decimal(repr(amount))
    return Decimal(amount)


ZERO_USD = Decimal(0)


@dataclass(frozen=True, slots=True)
class Cost:
    """USD cost of some usage, by kind of token. `priced` is False when the model has no known price.

    Amounts are exact decimals, so adding any number of costs never drifts: ten responses of $0.0006 are
    $0.006, not $0.005999999999999999. The constructor also takes floats (a session log written before
    amounts were exact) and converts them with `usd`. `usd_total` is the exact sum; `total` is the same as
    a float, for display and JSON."""

    input: Decimal = ZERO_USD
    output: Decimal = ZERO_USD
    cache_read: Decimal = ZERO_USD
    cache_write: Decimal = ZERO_USD
    priced: bool = True

    def __post_init__(self) -> None:
        for name in ("input", "output", "cache_read", "cache_write"):
            value = getattr(self, name)
            if not isinstance(value, Decimal):
                object.__setattr__(self, name, usd(value))

    @property
    def usd_total(self) -> Decimal:
        """The exact total: what budgets are compared against."""
        return self.input + self.output + self.cache_read + self.cache_write

    @property
    def total(self) -> float:
        """The total as a float (the nearest one to the exact sum, so it prints as 0.043576)."""
        return float(self.usd_total)

    def __add__(self, other: Cost) -> Cost:
        return Cost(
            self.input + other.input,
            self.output + other.output,
            self.cache_read + other.cache_read,
            self.cache_write + other.cache_write,
            self.priced and other.priced,
        )


# --------------------------------------------------------------------------------------------- messages


@dataclass(frozen=True, slots=True)
class UserMessage:
    """A message from the user: `content` is what the model gets (the typed text first, then the files
    and command outputs attached to it). `typed` is what the user typed, when that differs from the text
    of `content` (`explain @app.py`, whose file is attached; `/review app.py`, a custom command's prompt):
    what a rewind or fork puts back in the input box. None: the text parts are what was typed."""

    content: tuple[UserContent, ...]
    role: Literal["user"] = "user"
    typed: str | None = field(default=None, metadata={"omit_if_none": True})

    @classmethod
    def of(cls, text: str) -> UserMessage:
        return cls((TextPart(text),))

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.content if isinstance(p, TextPart))


StopReason = Literal["end_turn", "tool_use", "max_tokens", "refusal", "interrupted", "error"]


@dataclass(frozen=True, slots=True)
class AssistantMessage:
    content: tuple[AssistantContent, ...]
    provider: str = ""
    model: str = ""
    usage: Usage = Usage()
    stop_reason: StopReason = "end_turn"
    # Opaque provider response id, kept for providers that can chain on it.
    response_id: str | None = None
    role: Literal["assistant"] = "assistant"

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.content if isinstance(p, TextPart))

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        return tuple(p for p in self.content if isinstance(p, ToolCall))


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The outcome of one tool call, sent back to the model."""

    call_id: str
    name: str
    content: tuple[UserContent, ...]
    is_error: bool = False
    role: Literal["tool_result"] = "tool_result"

    @classmethod
    def of(cls, call: ToolCall, text: str, *, is_error: bool = False) -> ToolResult:
        return cls(call.id, call.name, (TextPart(text),), is_error)

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.content if isinstance(p, TextPart))


@dataclass(frozen=True, slots=True)
class PeerMessage:
    """A message from another agent (AgentSend), shown to the model as user input naming its sender."""

    sender: str
    text: str
    role: Literal["peer"] = "peer"


Message = UserMessage | AssistantMessage | ToolResult | PeerMessage

# ------------------------------------------------------------------------------------- model requests


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """What the model is told about a tool: its name, description and JSON schema of its arguments."""

    name: str
    description: str
    input_schema: dict[str, Any]


Effort = Literal["minimal", "low", "medium", "high", "xhigh", "max"]
"""How hard a model reasons: each provider takes the levels it knows and the nearest one for the others
(Gemini's thinking level tops out at high; Anthropic's effort starts at low)."""


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """A provider-neutral request: everything a `Model` needs to produce the next assistant message."""

    system: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    max_tokens: int | None = None
    # Token budget for extended thinking; None leaves thinking off (or the provider's default).
    thinking_budget: int | None = None
    effort: Effort | None = None
    temperature: float | None = None
    # A stable key for the conversation, for providers with server-side prompt caching keyed on it.
    cache_key: str | None = None
    # A model the provider may consult on its side, in place of the client-side tool it names; providers
    # without a server-side advisor ignore it and keep that tool.
    server_advisor: ServerAdvisor | None = None
    # Ask for the answer as one JSON object of this schema, on models whose `structured_output` is True;
    # the response's text is then that JSON, whatever the provider's way of asking for it.
    response_schema: ResponseSchema | None = None


@dataclass(frozen=True, slots=True)
class ResponseSchema:
    """Structured output: the answer must be one JSON object matching `schema` (a JSON Schema object whose
    properties are all required and that allows no others, which every provider's strict mode accepts).
    `name` and `description` say what the object is to the providers that name it (Anthropic's forced
    tool, OpenAI's `json_schema` format)."""

    name: str
    schema: dict[str, Any]
    description: str = ""


@dataclass(frozen=True, slots=True)
class ServerAdvisor:
    """An advisor a provider runs itself (Anthropic's advisor tool) instead of the client-side `replaces`
    tool: `model` is consulted at most `max_uses` times in the response, writing at most `max_tokens`."""

    model: str
    max_uses: int
    max_tokens: int
    replaces: str = "Advisor"


# -------------------------------------------------------------------------------------- serialization

_PART_TYPES: dict[str, type[ContentPart]] = {
    "text": TextPart,
    "image": ImagePart,
    "thinking": ThinkingPart,
    "tool_call": ToolCall,
    "server_tool": ServerToolPart,
}
_MESSAGE_TYPES: dict[str, type[Message]] = {
    "user": UserMessage,
    "assistant": AssistantMessage,
    "tool_result": ToolResult,
    "peer": PeerMessage,
}


_PLAIN = (str, int, float, bool, type(None))
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}  # a dataclass's field names, looked up once per class
_OMITTED: dict[type, frozenset[str]] = {}  # its fields left out while None (so older readers still read it)


def to_dict(obj: Any) -> Any:
    """A JSON-ready form of any value built from the dataclasses above (tuples become lists)."""
    kind = type(obj)
    if kind in _PLAIN:
        return obj
    names = _FIELD_NAMES.get(kind)
    if names is None and dataclasses.is_dataclass(kind):
        fields = dataclasses.fields(kind)
        names = _FIELD_NAMES[kind] = tuple(f.name for f in fields)
        _OMITTED[kind] = frozenset(f.name for f in fields if f.metadata.get("omit_if_none"))
    if names is not None:
        omitted = _OMITTED[kind]
        if omitted:
            return {n: to_dict(getattr(obj, n)) for n in names if n not in omitted or getattr(obj, n) is not None}
        return {name: to_dict(getattr(obj, name)) for name in names}
    if isinstance(obj, list | tuple):
        return [to_dict(v) for v in obj]
    if isinstance(obj, dict):
        return {k: to_dict(v) for k, v in obj.items()}
    if isinstance(obj, Decimal):
        return float(obj)  # JSON has no decimals; the nearest float prints as the exact amount does
    return obj


def part_from_dict(data: dict[str, Any]) -> ContentPart:
    cls = _PART_TYPES[data["type"]]
    if isinstance(data.get("usage"), dict):
        data = {**data, "usage": Usage(**data["usage"])}
    return cls(**data)


def message_from_dict(data: dict[str, Any]) -> Message:
    """Rebuild a message written by `to_dict`."""
    data = dict(data)
    cls = _MESSAGE_TYPES[data["role"]]
    if "content" in data:
        data["content"] = tuple(part_from_dict(p) for p in data["content"])
    if "usage" in data:
        data["usage"] = Usage(**data["usage"])
    return cls(**data)
