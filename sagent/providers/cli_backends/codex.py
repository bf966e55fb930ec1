"""`OpenAISubscription`: the installed `codex` binary (Codex CLI, headless) as the model, on the user's own
ChatGPT sign-in.

Each user turn is one `codex exec --json` process (the next turn resumes the same Codex thread with
`codex exec resume <id>`), with Codex's own tools switched off (see `SWITCHED_OFF`), its sandbox read-only,
its approval policy `never`, and the agent's tools offered by the MCP bridge (`bridge.py`) as its only MCP
server. When the model calls a tool, Codex announces the MCP call (`item.started`) and the sagent response
ends with that `ToolCall`; sagent's loop runs it with its permissions, hooks and session log, and the next
request's `ToolResult` answers the waiting MCP call. A conversation that did not start in this Codex thread
(a provider switch, a resumed sagent session, a retry after the CLI died) starts a new thread on a
transcript of it.

Codex uses its own sign-in unless the model is given a key: OPENAI_API_KEY and CODEX_API_KEY are not passed
on, so the subscription is what pays. sagent never reads Codex's stored credentials; it asks
`codex login status` whether there are any.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import tempfile
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from sagent.events import ModelEvent, ResponseComplete, TextDelta, ThinkingDelta, ToolCallDelta
from sagent.providers.base import (
    AuthenticationError,
    BadRequestError,
    ContextTooLongError,
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
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResult,
    Usage,
    UserMessage,
)

PROVIDER = "openai-subscription"
BINARY_VARIABLE = "SAGENT_CODEX_BIN"
"""Names the `codex` binary to run, when it is not the one on PATH."""
KEY_VARIABLE = "SAGENT_CODEX_API_KEY"
"""Holds an API key to bill through Codex instead of the sign-in (Codex reads it as its provider's env_key)."""
BASE_URL_VARIABLE = "SAGENT_CODEX_BASE_URL"
"""A Responses API endpoint for Codex to use instead of OpenAI's (a gateway, or a test's fake server)."""
DEFAULT_MODEL = "default"
"""The model name that leaves the choice to Codex (its own default for the signed-in account)."""
IDLE_TIMEOUT = 600.0
"""Seconds Codex may stay silent mid-response before it counts as hung (tool waits are not counted)."""

SWITCHED_OFF = (
    "unified_exec",
    "shell_tool",
    "multi_agent",
    "goals",
    "view_image",
    "apps",
    "plugins",
    "image_generation",
    "browser_use",
    "computer_use",
    "sleep_tool",
    "tool_suggest",
    "skill_search",
    "hooks",
)
"""Codex features turned off (`--disable`), so none of its own tools reach the model; with the settings in
`_config` (web search, user-input and plan tools off) the model sees only sagent's tools."""


def find_binary(explicit: str | None = None) -> str:
    """The `codex` executable: `explicit`, else $SAGENT_CODEX_BIN, else `codex` on PATH; a clear
    `BadRequestError` when there is none."""
    wanted = explicit or os.environ.get(BINARY_VARIABLE) or "codex"
    found = shutil.which(wanted)
    if found is None:
        raise BadRequestError(
            f"the Codex CLI ({wanted!r}) is not installed or not on PATH: install it with "
            f"`npm install -g @openai/codex` and sign in with `codex login`, or name the binary with {BINARY_VARIABLE}",
            provider=PROVIDER,
        )
    return found


def error_from_message(text: str) -> ProviderError:
    """The typed error for a failed Codex turn, from what Codex said."""
    said = text.strip()[:300]
    lowered = said.lower()
    if any(w in lowered for w in ("not logged in", "log in", "login", "401", "403", "unauthorized", "api key")):
        return AuthenticationError(
            f"the Codex CLI is not signed in or its key was refused ({said}); "
            "`codex login status` says which, `codex login` signs in",
            provider=PROVIDER,
        )
    if any(w in lowered for w in ("rate limit", "429", "usage limit", "too many requests", "quota")):
        return RateLimitError(said, provider=PROVIDER)
    if "context window" in lowered or "context_length" in lowered or "too long" in lowered:
        return ContextTooLongError(said, provider=PROVIDER)
    if "disconnected" in lowered or "connection" in lowered or "timed out" in lowered:
        return ProviderConnectionError(f"the Codex CLI lost its connection: {said}", provider=PROVIDER)
    return ServerError(f"the Codex CLI failed: {said}", provider=PROVIDER)


def _toml_string(value: str) -> str:
    """`value` as a TOML basic string (for a `-c key=value` override)."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + "".join(c if c >= " " else f"\\u{ord(c):04x}" for c in escaped) + '"'


class CodexCLIModel(CliBackedModel):
    """A `Model` answered by the Codex CLI, with sagent's tools bridged over MCP."""

    CLI_NAME = "Codex CLI"

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        binary: str | None = None,
        cwd: str | Path | None = None,
        idle_timeout: float = IDLE_TIMEOUT,
    ) -> None:
        self._name = model
        self.api_key = api_key
        self.base_url = base_url or os.environ.get(BASE_URL_VARIABLE) or None
        self.binary = binary
        self.cwd = str(cwd) if cwd is not None else None
        self.idle_timeout = idle_timeout
        self.bridge: Bridge | None = None
        self.cli: CliProcess | None = None
        self.thread_id: str | None = None
        """The Codex thread this conversation lives in, resumed for the next turn."""
        self._history: tuple[Message, ...] = ()
        """What the Codex thread has seen, as sagent's messages (including its own answers)."""
        self._waiting: tuple[ToolCall, ...] = ()
        """The tool calls of the last response, whose results the CLI waits for."""
        self._interrupted = False
        """A response was abandoned mid-stream: the thread may hold a half turn, so a new one starts."""
        self._signed_in = False
        self._instructions: str | None = None

    @property
    def provider(self) -> str:
        return PROVIDER

    @property
    def name(self) -> str:
        return self._name

    # ----------------------------------------------------------------------------------------- process

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        for name in ("OPENAI_API_KEY", "CODEX_API_KEY", KEY_VARIABLE):
            env.pop(name, None)  # Codex's own sign-in pays, unless a key is given on purpose
        if self.api_key:
            env[KEY_VARIABLE] = self.api_key
        return env

    def _config(self, instructions: str) -> list[str]:
        """The `-c` overrides: sagent's system prompt, no Codex tools, a read-only sandbox, never an
        approval prompt, the bridge as the one MCP server, and the endpoint when one is given."""
        assert self.bridge is not None
        pairs = {
            "model_instructions_file": _toml_string(instructions),
            "web_search": '"disabled"',
            "tools.experimental_request_user_input.enabled": "false",
            "tools.update_plan.enabled": "false",
            "skills.include_instructions": "false",
            "include_environment_context": "false",
            "include_apps_instructions": "false",
            "include_permissions_instructions": "false",
            "project_doc_max_bytes": "0",  # sagent reads the project's instructions itself
            "sandbox_mode": '"read-only"',
            "approval_policy": '"never"',
            "check_for_update_on_startup": "false",
            "analytics.enabled": "false",
            f"mcp_servers.{SERVER_NAME}.url": _toml_string(self.bridge.url),
            f"mcp_servers.{SERVER_NAME}.default_tools_approval_mode": '"approve"',  # sagent asks, not Codex
            f"mcp_servers.{SERVER_NAME}.tool_timeout_sec": str(24 * 3600),  # a tool may wait for the user
        }
        if self.base_url or self.api_key:
            provider = {
                "model_provider": '"sagent"',
                "model_providers.sagent.name": '"sagent"',
                "model_providers.sagent.base_url": _toml_string(self.base_url or "https://api.openai.com/v1"),
                "model_providers.sagent.wire_api": '"responses"',
                "model_providers.sagent.request_max_retries": "0",  # sagent's retry policy decides
                "model_providers.sagent.stream_max_retries": "0",
            }
            if self.api_key:
                provider["model_providers.sagent.env_key"] = _toml_string(KEY_VARIABLE)
            else:
                provider["model_providers.sagent.requires_openai_auth"] = "true"
            pairs |= provider
        argv = [f"--disable={feature}" for feature in SWITCHED_OFF]
        for key, value in pairs.items():
            argv += ["-c", f"{key}={value}"]
        return argv

    async def _check_signed_in(self, binary: str) -> None:
        """On the sign-in (no key given), ask `codex login status`; an `AuthenticationError` when signed out."""
        if self.api_key or self._signed_in:
            return
        try:
            process = await asyncio.create_subprocess_exec(
                binary,
                "login",
                "status",
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                env=self._env(),
                start_new_session=True,
            )
        except OSError as error:
            raise BadRequestError(f"cannot run `{binary} login status`: {error}", provider=PROVIDER) from None
        try:
            out, _ = await asyncio.wait_for(process.communicate(), 60)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
            raise ProviderConnectionError(f"`{binary} login status` gave no answer in 60s", provider=PROVIDER) from None
        if process.returncode != 0:
            said = " ".join(line for line in out.decode(errors="replace").splitlines() if "WARNING" not in line)
            raise AuthenticationError(
                f"the Codex CLI is not signed in ({said.strip()[:200] or 'codex login status failed'}); "
                "`codex login` signs in with ChatGPT",
                provider=PROVIDER,
            )
        self._signed_in = True

    async def _start(self, request: ModelRequest, prompt: str, resume: str | None) -> CliProcess:
        binary = find_binary(self.binary)
        await self._check_signed_in(binary)
        if self.bridge is None:
            self.bridge = Bridge(provider=PROVIDER)
            await self.bridge.serve()
        self.bridge.tools = request.tools
        if self._instructions is None:
            handle, self._instructions = tempfile.mkstemp(prefix="sagent-codex-system-", suffix=".md")
            os.close(handle)
        Path(self._instructions).write_text(request.system or "You are a helpful assistant.")
        argv = [binary, "exec"]
        if resume is not None:
            argv.append("resume")
        argv += ["--json", "--skip-git-repo-check", "--ignore-user-config", "--ignore-rules"]
        argv += self._config(self._instructions)
        if request.effort is not None:  # Codex's reasoning effort, set again on every turn's process
            argv += ["-c", f"model_reasoning_effort={_toml_string(request.effort)}"]
        if self._name != DEFAULT_MODEL:
            argv += ["-m", self._name]
        if resume is not None:
            argv.append(resume)
        argv.append("-")  # the prompt comes on stdin: no argument length limit
        try:
            cli = await CliProcess.start(argv, self._env(), self.cwd, PROVIDER)
        except OSError as error:
            raise BadRequestError(f"cannot start the Codex CLI ({binary}): {error}", provider=PROVIDER) from None
        await cli.send_text(prompt)
        return cli

    async def _end_process(self) -> None:
        if self.bridge is not None:
            self.bridge.cancel_all("the Codex turn ended")
        if self.cli is not None:
            await self.cli.stop()
        self.cli = None

    async def _reset(self) -> None:
        await self._end_process()
        self.thread_id = None
        self._history = ()
        self._waiting = ()
        self._interrupted = False

    async def aclose(self) -> None:
        await self._reset()
        if self.bridge is not None:
            await self.bridge.aclose()
            self.bridge = None
        if self._instructions is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._instructions)
            self._instructions = None

    # ------------------------------------------------------------------------------------------ stream

    async def _continue_or_start(self, request: ModelRequest) -> None:
        """Bring the Codex thread up to `request`: hand over tool results, resume the thread with a new user
        message, or start a new thread on the whole conversation."""
        messages = request.messages
        known = len(self._history)
        fresh = messages[known:]
        same = known > 0 and messages[:known] == self._history and not self._interrupted
        running = same and self.cli is not None and self.cli.alive
        if running and self._waiting and fresh and all(isinstance(m, ToolResult) for m in fresh):
            results = {m.call_id: m for m in fresh if isinstance(m, ToolResult)}
            for call in self._waiting:
                result = results.get(call.id) or ToolResult.of(call, "no result was given", is_error=True)
                await self._deliver(call, result)
            self._waiting = ()
            self._history = messages
            return
        if same and not self._waiting and self.thread_id and fresh and all(isinstance(m, UserMessage) for m in fresh):
            if self.cli is not None:  # the last turn's Codex saves its thread as it exits: let it finish
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.cli.process.wait(), 10)
            await self._end_process()
            text = "\n\n".join(m.text for m in fresh if isinstance(m, UserMessage))
            self.cli = await self._start(request, text, resume=self.thread_id)
            self._history = messages
            return
        await self._reset()
        self.cli = await self._start(request, replay_prompt(messages), resume=None)
        self._history = messages

    async def _read_response(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        assert self.cli is not None
        text: list[str] = []
        thinking: list[str] = []
        problem = ""
        while True:
            event = await self.cli.read(self.idle_timeout)
            if event is None:
                said = problem or self.cli.stderr_tail.strip()[-300:]
                if said and isinstance(error_from_message(said), AuthenticationError):
                    raise error_from_message(said)
                raise ProviderConnectionError(
                    f"the Codex CLI exited mid-response{': ' + said if said else ''}", provider=PROVIDER
                )
            kind = event.get("type")
            item = event.get("item") or {}
            if kind == "thread.started":
                self.thread_id = str(event.get("thread_id") or "") or None
            elif kind == "turn.failed":
                raise error_from_message(str((event.get("error") or {}).get("message") or problem or "turn failed"))
            elif kind == "error":
                problem = str(event.get("message") or problem)
            elif kind == "turn.completed":
                message = self._message(thinking, text, (), _usage(event.get("usage") or {}))
                self._history = (*self._history, message)
                yield ResponseComplete(message)
                return
            elif kind == "item.started" and item.get("type") == "mcp_tool_call" and item.get("server") == SERVER_NAME:
                arguments = item.get("arguments")
                # Codex numbers its items per process; the call's id must be unique in the whole history.
                call = ToolCall(
                    f"call_{uuid.uuid4().hex[:24]}",
                    str(item.get("tool", "")),
                    arguments if isinstance(arguments, dict) else {},
                )
                self._waiting = (call,)
                yield ToolCallDelta(0, call.id, call.name, json.dumps(call.arguments))
                message = self._message(thinking, text, (call,), Usage())
                self._history = (*self._history, message)
                yield ResponseComplete(message)
                return
            elif kind == "item.completed" and item.get("type") == "agent_message":
                piece = str(item.get("text") or "")
                yield TextDelta("\n\n" + piece if text else piece)
                text.append(piece)
            elif kind == "item.completed" and item.get("type") == "reasoning":
                piece = str(item.get("text") or "")
                yield ThinkingDelta("\n\n" + piece if thinking else piece)
                thinking.append(piece)

    def _message(
        self, thinking: list[str], text: list[str], calls: tuple[ToolCall, ...], usage: Usage
    ) -> AssistantMessage:
        content: list[AssistantContent] = []
        if thinking:
            content.append(ThinkingPart("\n\n".join(thinking), provider=PROVIDER))
        if text:
            content.append(TextPart("\n\n".join(text)))
        content.extend(calls)
        # What Codex reports is recorded, marked as subscription use unless an API key was given on purpose.
        model = self._name if self.api_key else self._name + SUBSCRIPTION_MARK
        return AssistantMessage(tuple(content), PROVIDER, model, usage, "tool_use" if calls else "end_turn")


def _usage(raw: dict[str, Any]) -> Usage:
    """A Codex turn's usage (`input_tokens` counts the cached ones too; sagent's excludes them)."""
    cached = int(raw.get("cached_input_tokens") or 0)
    return Usage(
        input_tokens=max(int(raw.get("input_tokens") or 0) - cached, 0),
        output_tokens=int(raw.get("output_tokens") or 0),
        cache_read_tokens=cached,
        cache_write_tokens=int(raw.get("cache_write_input_tokens") or 0),
    )
