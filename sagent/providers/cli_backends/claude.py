"""`AnthropicCLI`: the installed `claude` binary (Claude Code, headless) as the model, on the user's own login.

One long-lived `claude --print --input-format stream-json --output-format stream-json` process per agent,
its built-in tools switched off (`--tools ""`) and the agent's tools offered by the MCP bridge
(`bridge.py`) as its only MCP server. Each sagent response is one of the CLI's API responses: when the CLI
stops to call tools, the response ends with those `ToolCall`s, sagent's loop runs them, and the next
request's `ToolResult`s are handed to the CLI's waiting MCP calls. A conversation that did not start in
this process (a provider switch, a resumed session, a retry after the CLI died) is replayed into a fresh
process as a transcript.

The CLI uses its own login unless the model is given a key: ANTHROPIC_API_KEY is not passed on by default,
so the subscription is what pays.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from sagent.events import ModelEvent, ResponseComplete, TextDelta, ThinkingDelta, ToolCallDelta
from sagent.providers.base import (
    AuthenticationError,
    BadRequestError,
    OverloadedError,
    ProviderConnectionError,
    ProviderError,
    RateLimitError,
    ServerError,
)
from sagent.providers.cli_backends.bridge import SERVER_NAME, Bridge
from sagent.providers.cli_backends.common import SUBSCRIPTION_MARK, CliProcess, replay_prompt
from sagent.providers.cli_backends.model import CliBackedModel
from sagent.types import (
    AssistantContent,
    AssistantMessage,
    Message,
    ModelRequest,
    StopReason,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResult,
    Usage,
    UserMessage,
)

PROVIDER = "anthropic-cli"
BINARY_VARIABLE = "SAGENT_CLAUDE_BIN"
"""Names the `claude` binary to run, when it is not the one on PATH."""
PREFIX = f"mcp__{SERVER_NAME}__"
ARGUMENT_LIMIT = 100_000
"""A system prompt longer than this (bytes) goes to the CLI in a file rather than as an argument."""
IDLE_TIMEOUT = 600.0
"""Seconds the CLI may stay silent mid-response before it counts as hung (tool waits are not counted)."""


def find_binary(explicit: str | None = None) -> str:
    """The `claude` executable: `explicit`, else $SAGENT_CLAUDE_BIN, else `claude` on PATH; a clear
    `BadRequestError` when there is none."""
    wanted = explicit or os.environ.get(BINARY_VARIABLE) or "claude"
    found = shutil.which(wanted)
    if found is None:
        raise BadRequestError(
            f"the Claude Code CLI ({wanted!r}) is not installed or not on PATH: install it with "
            f"`npm install -g @anthropic-ai/claude-code` and sign in with `claude auth login`, "
            f"or name the binary with {BINARY_VARIABLE}",
            provider=PROVIDER,
        )
    return found


def error_from_result(text: str) -> ProviderError:
    """The typed error for a failed CLI turn, from what the CLI said."""
    lowered = text.lower()
    if any(w in lowered for w in ("login", "log in", "api key", "authenticat", "401", "403", "oauth")):
        return AuthenticationError(
            f"the Claude CLI is not signed in or its key was refused ({text.strip()[:300]}); "
            "`claude auth status` says which, `claude auth login` signs in",
            provider=PROVIDER,
        )
    if "rate limit" in lowered or "429" in lowered or "usage limit" in lowered:
        return RateLimitError(text.strip()[:300], provider=PROVIDER)
    if "overloaded" in lowered or "529" in lowered:
        return OverloadedError(text.strip()[:300], provider=PROVIDER)
    if "prompt is too long" in lowered:
        from sagent.providers.base import ContextTooLongError

        return ContextTooLongError(text.strip()[:300], provider=PROVIDER)
    return ServerError(f"the Claude CLI failed: {text.strip()[:300]}", provider=PROVIDER)


class ClaudeCLIModel(CliBackedModel):
    """A `Model` answered by the Claude Code CLI, with sagent's tools bridged over MCP."""

    CLI_NAME = "Claude CLI"

    def __init__(
        self,
        model: str = "sonnet",
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        binary: str | None = None,
        cwd: str | Path | None = None,
        idle_timeout: float = IDLE_TIMEOUT,
    ) -> None:
        self._name = model
        self.api_key = api_key
        self.base_url = base_url
        self.binary = binary
        self.cwd = str(cwd) if cwd is not None else None
        self.idle_timeout = idle_timeout
        self.bridge: Bridge | None = None
        self.cli: CliProcess | None = None
        self._history: tuple[Message, ...] = ()
        """What the running CLI session has seen, as sagent's messages (including its own answers)."""
        self._waiting: tuple[ToolCall, ...] = ()
        """The tool calls of the last response, whose results the CLI waits for."""
        self._interrupted = False
        """A response was abandoned mid-stream: the CLI may still be in that turn, so it starts afresh."""
        self._system_file: str | None = None
        self.reported_cost_usd = 0.0
        """What the CLI reported its turns cost (at list price; a subscription is not billed per token)."""

    @property
    def provider(self) -> str:
        return PROVIDER

    @property
    def name(self) -> str:
        return self._name

    # ----------------------------------------------------------------------------------------- process

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.pop("ANTHROPIC_API_KEY", None)  # the CLI's own login pays, unless a key is given on purpose
        env.pop("ANTHROPIC_AUTH_TOKEN", None)
        if self.api_key:
            env["ANTHROPIC_API_KEY"] = self.api_key
        if self.base_url:
            env["ANTHROPIC_BASE_URL"] = self.base_url
        env.setdefault("MCP_TOOL_TIMEOUT", str(24 * 3600 * 1000))  # a tool may wait for the user's approval
        env.setdefault("DISABLE_AUTOUPDATER", "1")
        return env

    async def _start(self, request: ModelRequest) -> CliProcess:
        binary = find_binary(self.binary)
        if self.bridge is None:
            self.bridge = Bridge(provider=PROVIDER)
            await self.bridge.serve()
        self.bridge.tools = request.tools
        argv = [
            binary,
            "--print",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
            "--include-partial-messages",
            "--tools",
            "",
            # Only the user's own Claude settings: a project's .claude/settings.json (hooks, env, an
            # apiKeyHelper or a base URL that would carry the user's login away) never runs under sagent,
            # which applies its own settings, and a project's only once trusted (`sagent trust`).
            "--setting-sources",
            "user",
            "--strict-mcp-config",
            "--mcp-config",
            self.bridge.mcp_config(),
            "--allowedTools",
            f"mcp__{SERVER_NAME}",
            "--model",
            self._name,
        ]
        system = request.system or "You are a helpful assistant."
        if len(system.encode()) > ARGUMENT_LIMIT:  # one argument may not exceed 128 KiB on Linux
            import tempfile

            handle, path = tempfile.mkstemp(prefix="sagent-system-", suffix=".md")
            with os.fdopen(handle, "w") as file:
                file.write(system)
            self._system_file = path
            argv += ["--system-prompt-file", path]
        else:
            argv += ["--system-prompt", system]
        try:
            return await CliProcess.start(argv, self._env(), self.cwd, PROVIDER)
        except OSError as error:
            raise BadRequestError(f"cannot start the Claude CLI ({binary}): {error}", provider=PROVIDER) from None

    async def _reset(self) -> None:
        if self.bridge is not None:
            self.bridge.cancel_all("the CLI session was restarted")
        if self.cli is not None:
            await self.cli.stop()
        self.cli = None
        self._history = ()
        self._waiting = ()
        self._interrupted = False
        if self._system_file is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._system_file)
            self._system_file = None

    async def aclose(self) -> None:
        await self._reset()
        if self.bridge is not None:
            await self.bridge.aclose()
            self.bridge = None

    # ------------------------------------------------------------------------------------------ stream

    async def _continue_or_start(self, request: ModelRequest) -> None:
        """Bring the CLI session up to `request`: hand over tool results, send a new user message, or start
        a new session on the whole conversation."""
        messages = request.messages
        known = len(self._history)
        fresh = messages[known:]
        alive = self.cli is not None and self.cli.alive and messages[:known] == self._history and known > 0
        alive = alive and not self._interrupted
        if alive and not self._waiting and self.bridge is not None and request.tools != self.bridge.tools:
            alive = False  # the CLI lists its MCP tools once: a changed tool set needs a new session
        if alive and self._waiting and fresh and all(isinstance(m, ToolResult) for m in fresh):
            assert self.bridge is not None
            results = {m.call_id: m for m in fresh if isinstance(m, ToolResult)}
            for call in self._waiting:
                result = results.get(call.id) or ToolResult.of(call, "no result was given", is_error=True)
                await self._deliver(call, result)
            self._waiting = ()
            self._history = messages
            return
        if alive and not self._waiting and fresh and all(isinstance(m, UserMessage) for m in fresh):
            assert self.cli is not None
            text = "\n\n".join(m.text for m in fresh if isinstance(m, UserMessage))
            await self.cli.send({"type": "user", "message": {"role": "user", "content": text}})
            self._history = messages
            return
        await self._reset()
        self.cli = await self._start(request)
        await self.cli.send({"type": "user", "message": {"role": "user", "content": replay_prompt(messages)}})
        self._history = messages

    async def _read_response(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        assert self.cli is not None
        text: list[str] = []
        thinking: list[str] = []
        blocks: dict[int, dict[str, Any]] = {}
        usage = Usage()
        stop: str | None = None
        while True:
            event = await self.cli.read(self.idle_timeout)
            if event is None:
                tail = self.cli.stderr_tail.strip()
                if tail and ("login" in tail.lower() or "api key" in tail.lower()):
                    raise error_from_result(tail)
                raise ProviderConnectionError(
                    f"the Claude CLI exited mid-response{': ' + tail[-300:] if tail else ''}", provider=PROVIDER
                )
            kind = event.get("type")
            if kind == "result":
                if event.get("is_error") or str(event.get("subtype", "")).startswith("error"):
                    raise error_from_result(str(event.get("result") or event.get("subtype") or "error"))
                self.reported_cost_usd += float(event.get("total_cost_usd") or 0.0)
                if stop is None:  # a turn that made no API call (nothing to say)
                    stop = "end_turn"
                break
            if kind == "assistant" and (event.get("message") or {}).get("model") == "<synthetic>":
                raise error_from_result(_text_of(event["message"]))
            if kind != "stream_event":
                continue
            raw = event.get("event") or {}
            etype = raw.get("type")
            if etype == "message_start":
                text, thinking, blocks, stop = [], [], {}, None
                u = (raw.get("message") or {}).get("usage") or {}
                usage = _usage(u, usage=Usage())
            elif etype == "content_block_start":
                block = dict(raw.get("content_block") or {})
                block["json"] = ""
                blocks[int(raw.get("index", 0))] = block
            elif etype == "content_block_delta":
                delta = raw.get("delta") or {}
                if delta.get("type") == "text_delta":
                    text.append(delta.get("text", ""))
                    yield TextDelta(delta.get("text", ""))
                elif delta.get("type") == "thinking_delta":
                    thinking.append(delta.get("thinking", ""))
                    yield ThinkingDelta(delta.get("thinking", ""))
                elif delta.get("type") == "input_json_delta":
                    blocks.setdefault(int(raw.get("index", 0)), {"json": ""})["json"] += delta.get("partial_json", "")
            elif etype == "message_delta":
                stop = (raw.get("delta") or {}).get("stop_reason") or stop
                usage = _usage(raw.get("usage") or {}, usage=usage)
            elif etype == "message_stop":
                calls = _tool_calls(blocks)
                if stop == "tool_use" and calls:
                    self._waiting = calls
                    for i, call in enumerate(calls):
                        yield ToolCallDelta(i, call.id, call.name, json.dumps(call.arguments))
                    message = self._message(thinking, text, calls, usage, "tool_use")
                    self._history = (*self._history, message)
                    yield ResponseComplete(message)
                    return
        message = self._message(thinking, text, (), usage, _stop(stop))
        self._history = (*self._history, message)
        yield ResponseComplete(message)

    def _message(
        self, thinking: list[str], text: list[str], calls: tuple[ToolCall, ...], usage: Usage, stop: StopReason
    ) -> AssistantMessage:
        content: list[AssistantContent] = []
        if thinking:
            content.append(ThinkingPart("".join(thinking), provider=PROVIDER))
        if text:
            content.append(TextPart("".join(text)))
        content.extend(calls)
        # What the CLI reports is recorded, marked as subscription use (the model's name with the mark; unless
        # the CLI bills an API key given on purpose, its price per token does not apply).
        model = self._name if self.api_key else self._name + SUBSCRIPTION_MARK
        return AssistantMessage(tuple(content), PROVIDER, model, usage, stop)


def _usage(raw: dict[str, Any], *, usage: Usage) -> Usage:
    return Usage(
        input_tokens=int(raw.get("input_tokens") or usage.input_tokens),
        output_tokens=int(raw.get("output_tokens") or usage.output_tokens),
        cache_read_tokens=int(raw.get("cache_read_input_tokens") or usage.cache_read_tokens),
        cache_write_tokens=int(raw.get("cache_creation_input_tokens") or usage.cache_write_tokens),
    )


def _stop(stop: str | None) -> StopReason:
    if stop in ("max_tokens", "refusal"):
        return stop  # type: ignore[return-value]
    return "end_turn"


def _text_of(message: dict[str, Any]) -> str:
    return "".join(b.get("text", "") for b in message.get("content") or [] if isinstance(b, dict))


def _tool_calls(blocks: dict[int, dict[str, Any]]) -> tuple[ToolCall, ...]:
    """sagent's tool calls among a response's blocks: the tool_use blocks naming a bridged tool."""
    calls = []
    for _, block in sorted(blocks.items()):
        if block.get("type") != "tool_use" or not str(block.get("name", "")).startswith(PREFIX):
            continue
        raw = block.get("json") or ""
        try:
            arguments = json.loads(raw) if raw else dict(block.get("input") or {})
            invalid = None
        except ValueError:
            arguments, invalid = {}, raw
        name = str(block["name"])[len(PREFIX) :]
        calls.append(
            ToolCall(str(block.get("id", "")), name, arguments if isinstance(arguments, dict) else {}, invalid)
        )
    return tuple(calls)
