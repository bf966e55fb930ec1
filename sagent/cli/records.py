"""JSON records for `--output-format json|stream-json`, and parsing of `--input-format stream-json`.

The shapes follow Claude Code's headless records (`type: system|assistant|user|result|stream_event`, the
same field names), so programs written to read those can read sagent's.
"""

from __future__ import annotations

import base64
import binascii
import json
import sys
import uuid
from typing import Any, assert_never

from sagent.agent.cost import CostTracker
from sagent.cli.decoding import InputNotice
from sagent.events import (
    AdvisorConsulted,
    Compacted,
    ContextPruned,
    ErrorEvent,
    Event,
    HookNotice,
    MessageAdded,
    ModelSwitched,
    Result,
    Retrying,
    Rewound,
    SessionStarted,
    SmallModelCall,
    TaskListChanged,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolFinished,
    ToolResultsCleared,
    ToolStarted,
    TurnFinished,
)
from sagent.types import (
    AssistantMessage,
    ImagePart,
    ServerToolPart,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResult,
    Usage,
    UserContent,
    UserMessage,
)


def usage_record(usage: Usage) -> dict[str, int]:
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_input_tokens": usage.cache_read_tokens,
        "cache_creation_input_tokens": usage.cache_write_tokens,
    }


def _assistant_content(message: AssistantMessage) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, TextPart):
            blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, ThinkingPart):  # the signature as Claude Code's records carry it ("" when none)
            blocks.append({"type": "thinking", "thinking": part.text, "signature": part.signature or ""})
        elif isinstance(part, ToolCall):
            blocks.append({"type": "tool_use", "id": part.id, "name": part.name, "input": part.arguments})
        elif isinstance(part, ServerToolPart):
            blocks.extend(json.loads(part.blocks))  # the provider's own blocks, as its API returned them
    return blocks


def _tool_result(result: ToolResult) -> dict[str, Any]:
    return {
        "type": "tool_result",
        "tool_use_id": result.call_id,
        "content": result.text,
        "is_error": result.is_error,
    }


def model_usage(costs: CostTracker) -> dict[str, dict[str, Any]]:
    return {
        model: {
            "inputTokens": spend.usage.input_tokens,
            "outputTokens": spend.usage.output_tokens,
            "cacheReadInputTokens": spend.usage.cache_read_tokens,
            "cacheCreationInputTokens": spend.usage.cache_write_tokens,
            "costUSD": spend.cost.total,
            "priced": spend.cost.priced,
            "responses": spend.responses,
        }
        for model, spend in costs.by_model.items()
    }


TERMINAL_REASONS = {
    "success": "completed",
    "error_max_turns": "max_turns",
    "error_max_budget_usd": "budget_exhausted",
    "interrupted": "aborted_streaming",
}
"""Why a run ended, in Claude Code's words (`terminal_reason`); another error is the model's or provider's."""


def claude_code_subtype(record: dict[str, Any]) -> None:
    """A result record as Claude Code writes it for a program on the Claude Agent SDK: an interrupted turn
    is an `error_during_execution` whose `terminal_reason` says it was aborted (the SDKs know no
    `interrupted` subtype)."""
    if record.get("subtype") == "interrupted":
        record["subtype"] = "error_during_execution"


def result_record(result: Result, costs: CostTracker) -> dict[str, Any]:
    """The `result` record. `usage`, `modelUsage` and `total_cost_usd` all count the same responses: every
    response of the agent tree in this process (sub-agents, compaction summaries, the small model behind
    WebFetch), so `usage` is the sum of `modelUsage` and `total_cost_usd` the sum of its `costUSD`, exactly."""
    record: dict[str, Any] = {
        "type": "result",
        "subtype": result.subtype,
        "is_error": result.is_error,
        "duration_ms": round(result.duration_ms),
        "duration_api_ms": round(result.duration_api_ms),
        "num_turns": result.num_turns,
        "result": result.text,
        "session_id": result.session_id,
        "total_cost_usd": costs.total_usd,
        "usage": usage_record(costs.usage),
        "modelUsage": model_usage(costs),
        "permission_denials": [],
        "terminal_reason": TERMINAL_REASONS.get(result.subtype, "model_error"),
        "uuid": str(uuid.uuid4()),
    }
    if result.is_error:
        record["errors"] = [result.text]  # what went wrong, where Claude Code's error results say it
    if costs.unpriced_models:
        record["unpriced_models"] = costs.unpriced_models
    return record


def event_record(event: Event, session_id: str, *, partial: bool) -> dict[str, Any] | None:
    """The stream-json record for an event, or None when the event has none (a delta without
    `--include-partial-messages`, a result, which the caller writes with the cost table).

    Every event of the union has its case, and the type checker proves it (`assert_never`): a new event
    must be given a record or named among those that have none."""
    base = {"session_id": session_id}
    match event:
        case SessionStarted():
            return {
                "type": "system",
                "subtype": "init",
                "cwd": event.cwd,
                "model": event.model,
                "provider": event.provider,
                "tools": list(event.tools),
                "resumed": event.resumed,
                **base,
            }
        case TurnFinished(message=message):
            return {
                "type": "assistant",
                "message": {
                    "id": message.response_id,
                    "type": "message",
                    "role": "assistant",
                    "model": message.model,
                    "content": _assistant_content(message),
                    "stop_reason": message.stop_reason,
                    "usage": usage_record(message.usage),
                },
                "parent_tool_use_id": None,
                "uuid": str(uuid.uuid4()),
                **base,
            }
        case ToolFinished():
            return {
                "type": "user",
                "message": {"role": "user", "content": [_tool_result(event.result)]},
                "parent_tool_use_id": None,
                "uuid": str(uuid.uuid4()),
                **base,
            }
        case Retrying():
            return {
                "type": "system",
                "subtype": "api_retry",
                "attempt": event.attempt,
                "retry_delay_ms": round(event.delay * 1000),
                "error": event.error,
                **base,
            }
        case ErrorEvent():
            return {"type": "system", "subtype": "error", "error": event.kind, "message": event.message, **base}
        case AdvisorConsulted():
            consulted = {"trigger": event.trigger, "model": event.model, "native": event.native, "agent": event.agent}
            usage = {"usage": usage_record(event.usage), "cost_usd": event.cost.total, "advice": event.advice}
            return {"type": "system", "subtype": "advisor_consulted", **consulted, **usage, **base}
        case HookNotice():
            notice = {"hook": event.hook, "level": event.level, "message": event.message, "agent": event.agent}
            return {"type": "system", "subtype": "hook_notice", **notice, **base}
        case Compacted():
            metadata = {
                "trigger": event.trigger,
                "pre_tokens": event.tokens_before,
                "post_tokens": event.tokens_after,
                "messages_summarised": event.replaced,
                "messages_kept": event.kept,
                "repaired": list(event.repaired),
            }
            return {"type": "system", "subtype": "compact_boundary", "compact_metadata": metadata, **base}
        case TaskListChanged():
            todos = {"todos": event.tasks.wire(), "agent": event.agent, "parent_tool_use_id": None}
            return {"type": "system", "subtype": "task_list", **todos, "uuid": str(uuid.uuid4()), **base}
        case ContextPruned():
            pruned = [r.call_id for r in event.results]
            sizes = {"pre_tokens": event.tokens_before, "post_tokens": event.tokens_after}
            return {"type": "system", "subtype": "context_pruned", "tool_use_ids": pruned, **sizes, **base}
        case TextDelta() | ThinkingDelta() | ToolCallDelta():
            if not partial:
                return None
            return stream_record(_delta(event), session_id)
        case (
            Result()
            | ModelSwitched()
            | ToolResultsCleared()
            | Rewound()
            | SmallModelCall()
            | MessageAdded()
            | ToolStarted()
        ):
            return None  # a result is written with the cost table; the others have no record in this format
        case _:
            assert_never(event)


def stream_record(event: dict[str, Any], session_id: str) -> dict[str, Any]:
    """A `stream_event` record of the main agent carrying `event`, one event of the provider's stream."""
    return {
        "type": "stream_event",
        "event": event,
        "parent_tool_use_id": None,
        "uuid": str(uuid.uuid4()),
        "session_id": session_id,
    }


def _delta(event: TextDelta | ThinkingDelta | ToolCallDelta) -> dict[str, Any]:
    match event:
        case TextDelta():
            return {"type": "content_block_delta", "delta": {"type": "text_delta", "text": event.text}}
        case ThinkingDelta():
            return {"type": "content_block_delta", "delta": {"type": "thinking_delta", "thinking": event.text}}
        case ToolCallDelta():
            return {
                "type": "content_block_delta",
                "index": event.index,
                "delta": {"type": "input_json_delta", "partial_json": event.arguments_delta},
                "tool_use": {"id": event.id, "name": event.name},
            }
        case _:
            assert_never(event)


class PermissionDenials:
    """The calls of a turn that were refused before they ran (a deny rule, the mode, the approver: their
    result starts `denied: `), for the `permission_denials` of its result, as Claude Code lists them."""

    def __init__(self) -> None:
        self._calls: dict[str, ToolCall] = {}
        self._denied: list[dict[str, Any]] = []

    def see(self, event: Event) -> None:
        if isinstance(event, TurnFinished):
            self._calls.update((c.id, c) for c in event.message.tool_calls)
        elif isinstance(event, ToolFinished) and event.result.is_error and event.result.text.startswith("denied: "):
            call = self._calls.get(event.result.call_id)
            name, arguments = (call.name, call.arguments) if call is not None else ("", {})
            self._denied.append({"tool_name": name, "tool_use_id": event.result.call_id, "tool_input": arguments})

    def take(self) -> list[dict[str, Any]]:
        """The turn's denials; the next turn starts with none."""
        denied, self._denied, self._calls = self._denied, [], {}
        return denied


class InputError(ValueError):
    """A line of `--input-format stream-json` input that is not a user message."""


def parse_input_line(line: str | bytes, notice: InputNotice | None = None) -> UserMessage | None:
    """A user message from one stream-json input line; None for a blank line.

    Bytes that are not UTF-8 and lone surrogates escaped in the JSON become U+FFFD, counted in `notice`
    (which tells the user once)."""
    notice = notice or InputNotice(None, "a stream-json input line")
    if isinstance(line, bytes):
        line = notice.decode(line)
    if not line.strip():
        return None
    try:
        record = notice.clean(json.loads(line))
    except json.JSONDecodeError as error:
        raise InputError(f"input is not JSON ({error.msg}): {line[:120]!r}") from None
    except RecursionError:
        raise InputError(f"input JSON is nested too deeply: {line[:120]!r}") from None
    except ValueError:  # json reads integers with int(), which refuses more digits than Python's limit
        limit = sys.get_int_max_str_digits()
        raise InputError(f"input JSON has a number of more than {limit} digits: {line[:120]!r}") from None
    if not isinstance(record, dict) or record.get("type") != "user":
        raise InputError(f'expected a {{"type": "user", "message": ...}} record, got: {line[:120]!r}')
    message = record.get("message") or {}
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return UserMessage.of(content)
    if isinstance(content, list):
        parts = [_input_part(block) for block in content]
        if parts:
            return UserMessage(tuple(parts))
    raise InputError(f"the user message has no content: {line[:120]!r}")


def _input_part(block: Any) -> UserContent:
    if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
        return TextPart(block["text"])
    if isinstance(block, dict) and block.get("type") == "image":
        source = block.get("source") or {}
        data = source.get("data", "")
        try:
            base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raise InputError("an image block's source.data is not base64") from None
        return ImagePart(data, source.get("media_type", "image/png"))
    raise InputError(f"unsupported content block: {str(block)[:120]}")
