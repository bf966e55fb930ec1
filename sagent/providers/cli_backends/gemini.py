"""`GoogleCLI`: the installed `gemini` binary (Gemini CLI, headless) as the model, on the user's own login.

Each prompt is one headless run, `gemini --output-format stream-json` with the prompt on stdin, in a
private workspace whose settings switch every tool of the CLI off but the agent's own, offered by the MCP
bridge (`bridge.py`). When the model calls tools, the CLI prints a `tool_use` line per call and then calls
the bridge: sagent's response ends there with those `ToolCall`s, sagent's loop runs them (permissions,
hooks, jobs, the session log), and the next request's `ToolResult`s answer the CLI's waiting calls, so the
same run goes on. The run ends with the model's answer; the next prompt resumes that CLI session by its id
(`--resume`). A conversation the CLI has not seen as it stands (a provider switch, a resumed sagent session,
a retry after the CLI died) is replayed into a new CLI session as a transcript.

The CLI reports its token use once per run, in its closing `result` line: that use is recorded on the
run's last response, marked as subscription use unless a key was given on purpose.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Literal

from sagent.events import ModelEvent, ResponseComplete, TextDelta, ToolCallDelta
from sagent.providers.base import BadRequestError, ProviderConnectionError, ProviderError
from sagent.providers.cli_backends.bridge import Bridge, BridgeCall, same_arguments
from sagent.providers.cli_backends.common import SUBSCRIPTION_MARK, CliProcess, replay_prompt
from sagent.providers.cli_backends.gemini_setup import (
    PREFIX,
    PROVIDER,
    Workspace,
    command,
    environment,
    error_from,
    find_binary,
    safe_prompt,
    settings,
)
from sagent.providers.cli_backends.model import CliBackedModel
from sagent.types import (
    AssistantContent,
    AssistantMessage,
    Message,
    ModelRequest,
    StopReason,
    TextPart,
    ToolCall,
    ToolResult,
    Usage,
    UserMessage,
)

IDLE_TIMEOUT = 600.0
"""Seconds the CLI may stay silent mid-response before it counts as hung (tool waits are not counted)."""
EXIT_GRACE = 10.0
"""Seconds a finished CLI run is given to exit by itself (saving its session) before the next one resumes it."""
SETTLE = 0.05
"""Seconds to wait for more `tool_use` lines once the CLI has called the bridge (they are written first)."""


class GeminiCLIModel(CliBackedModel):
    """A `Model` answered by the Gemini CLI, with sagent's tools bridged over MCP."""

    CLI_NAME = "Gemini CLI"

    def __init__(
        self,
        model: str = "auto",
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        binary: str | None = None,
        idle_timeout: float = IDLE_TIMEOUT,
    ) -> None:
        self._name = model
        self.api_key = api_key
        self.base_url = base_url
        self.binary = binary
        self.idle_timeout = idle_timeout
        self.bridge: Bridge | None = None
        self.cli: CliProcess | None = None
        self.workspace: Workspace | None = None
        self.session_id: str | None = None
        """The CLI's id of the session that holds `_history`, for `--resume`."""
        self._history: tuple[Message, ...] = ()
        """What the CLI session has seen, as sagent's messages (including its own answers)."""
        self._waiting: tuple[ToolCall, ...] = ()
        """The tool calls of the last response, whose results the running CLI waits for."""
        self._pending: list[ToolCall] = []
        """Tool calls the CLI announced that no response has carried yet."""
        self._interrupted = False
        self._finished = False
        """The CLI's run ended with its result: its session can be resumed with the next prompt."""
        self._line: asyncio.Task[bytes] | None = None

    @property
    def provider(self) -> str:
        return PROVIDER

    @property
    def name(self) -> str:
        return self._name

    # ----------------------------------------------------------------------------------------- process

    async def _start(self, request: ModelRequest, prompt: str, resume: str | None) -> None:
        self._finished = False
        binary = find_binary(self.binary)
        if self.bridge is None:
            self.bridge = Bridge(provider=PROVIDER)
            await self.bridge.serve()
        if self.workspace is None:
            self.workspace = Workspace()
        self.bridge.tools = request.tools
        config = settings(self.bridge.url, request.tools, keyed=bool(self.api_key))
        self.workspace.write(config, request.system or "You are a helpful assistant.")
        env = environment(self.workspace, api_key=self.api_key, base_url=self.base_url)
        try:
            self.cli = await CliProcess.start(
                command(binary, self._name, resume), env, str(self.workspace.root), PROVIDER
            )
        except OSError as error:
            raise BadRequestError(f"cannot start the Gemini CLI ({binary}): {error}", provider=PROVIDER) from None
        stdin = self.cli.process.stdin
        assert stdin is not None
        try:
            stdin.write(safe_prompt(prompt).encode())
            await stdin.drain()
            stdin.close()
        except (BrokenPipeError, ConnectionResetError):
            pass  # it exited at once: what it said is read as its output

    async def _stop_cli(self) -> None:
        if self._line is not None:
            self._line.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._line
            self._line = None
        if self.cli is not None:
            await self.cli.stop()
        self.cli = None

    async def _reset(self) -> None:
        if self.bridge is not None:
            self.bridge.cancel_all("the CLI session was restarted")
        await self._stop_cli()
        self._finished = False
        self.session_id = None
        self._history = ()
        self._waiting = ()
        self._pending = []
        self._interrupted = False

    async def aclose(self) -> None:
        await self._reset()
        if self.bridge is not None:
            await self.bridge.aclose()
            self.bridge = None
        if self.workspace is not None:
            self.workspace.remove()
            self.workspace = None

    # ------------------------------------------------------------------------------------------ stream

    async def _continue_or_start(self, request: ModelRequest) -> None:
        """Bring the CLI up to `request`: hand over tool results to the running CLI, resume its session
        with a new prompt, or start a new session on the whole conversation."""
        messages = request.messages
        known = len(self._history)
        fresh = messages[known:]
        same = known > 0 and messages[:known] == self._history and not self._interrupted and bool(fresh)
        running = self.cli is not None and self.cli.alive
        if same and running and self._waiting and all(isinstance(m, ToolResult) for m in fresh):
            results = {m.call_id: m for m in fresh if isinstance(m, ToolResult)}
            for call in self._waiting:
                await self._deliver(
                    call, results.get(call.id) or ToolResult.of(call, "no result was given", is_error=True)
                )
            self._waiting = ()
            self._history = messages
            return
        resumable = same and not self._waiting and self.session_id is not None and self._finished
        if resumable and all(isinstance(m, UserMessage) for m in fresh):
            text = "\n\n".join(m.text for m in fresh if isinstance(m, UserMessage))
            session = self.session_id
            if self.cli is not None:  # it is saving its session as it exits
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.cli.process.wait(), EXIT_GRACE)
            await self._stop_cli()
            self._pending = []
            await self._start(request, text, session)
            self._history = messages
            return
        await self._reset()
        await self._start(request, replay_prompt(messages), None)
        self._history = messages

    async def _next(self, timeout: float, *, stop_on_call: bool) -> dict[str, Any] | Literal[True] | None:
        """The next JSON line of the CLI; None at its end; True when `stop_on_call` and the CLI has called
        the bridge (it waits for sagent) with no line to read within `SETTLE`."""
        assert self.cli is not None and self.cli.process.stdout is not None
        stdout = self.cli.process.stdout
        while True:
            if self._line is None:
                self._line = asyncio.ensure_future(stdout.readline())
            waits: set[asyncio.Future[Any]] = {self._line}
            called = None
            if stop_on_call and self.bridge is not None:
                self.bridge.arrived.clear()  # before looking, so a call arriving meanwhile is not missed
                unclaimed = [c for c in self.bridge.calls if c.call_id is None]
                if unclaimed and _all_arrived(self._pending, unclaimed):
                    return True  # every call announced is waiting in the bridge
                if unclaimed:
                    limit = SETTLE
                else:
                    called = asyncio.ensure_future(self.bridge.arrived.wait())
                    waits.add(called)
                    limit = timeout
            else:
                limit = timeout
            done, _ = await asyncio.wait(waits, timeout=limit, return_when=asyncio.FIRST_COMPLETED)
            if called is not None:
                called.cancel()
            if self._line not in done:
                if called is not None and called in done:
                    continue  # look again, now with the settle time
                if stop_on_call and limit == SETTLE:
                    return True
                raise ProviderConnectionError(f"the Gemini CLI printed nothing for {timeout:g}s", provider=PROVIDER)
            try:
                line = self._line.result()
            except ValueError:
                raise ProviderConnectionError("the Gemini CLI printed an over-long line", provider=PROVIDER) from None
            finally:
                self._line = None
            if not line:
                return None
            with contextlib.suppress(ValueError):
                value = json.loads(line)
                if isinstance(value, dict):
                    return value

    async def _read_response(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        assert self.cli is not None
        text: list[str] = []
        errors: list[str] = []
        while True:
            event = await self._next(self.idle_timeout, stop_on_call=bool(self._pending))
            if event is True:  # the CLI waits for the results of the calls it announced
                calls, self._pending = tuple(self._pending), []
                self._waiting = calls
                for i, call in enumerate(calls):
                    yield ToolCallDelta(i, call.id, call.name, json.dumps(call.arguments))
                yield ResponseComplete(self._finish(text, calls, Usage(), "tool_use"))
                return
            if event is None:
                raise await self._ended(errors)
            kind = event.get("type")
            if kind == "init":
                self.session_id = str(event.get("session_id") or "") or None
            elif kind == "message" and event.get("role") == "assistant":
                piece = str(event.get("content") or "")
                text.append(piece)
                yield TextDelta(piece)
            elif kind == "tool_use":
                self._pending.append(_tool_call(event))
            elif kind == "error" and event.get("severity") == "error":
                errors.append(str(event.get("message") or "error"))
            elif kind == "result":
                if event.get("status") != "success":
                    failure = event.get("error") or {}
                    said = failure.get("message") if isinstance(failure, dict) else None
                    raise error_from("; ".join([*errors, str(said or "")]) or self.cli.stderr_tail)
                self._finished = True
                usage = _usage(event.get("stats") or {})
                yield ResponseComplete(self._finish(text, (), usage, "end_turn"))
                return

    async def _ended(self, errors: list[str]) -> ProviderError:
        """The CLI's output ended before its result: the typed error for why."""
        assert self.cli is not None
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.cli.process.wait(), 5)
        await asyncio.sleep(0)  # let the last of stderr arrive
        said = "; ".join([*errors, self.cli.stderr_tail.strip()])
        code = self.cli.process.returncode
        if code is not None and code > 0:
            return error_from(said, code)
        return ProviderConnectionError(
            f"the Gemini CLI exited mid-response{': ' + said[-300:] if said else ''}", provider=PROVIDER
        )

    def _finish(self, text: list[str], calls: tuple[ToolCall, ...], usage: Usage, stop: StopReason) -> AssistantMessage:
        content: list[AssistantContent] = [TextPart("".join(text))] if "".join(text) else []
        content.extend(calls)
        # What the CLI reports is recorded, marked as subscription use (the model's name with the mark; unless
        # the CLI bills an API key given on purpose, no price per token applies).
        model = self._name if self.api_key else self._name + SUBSCRIPTION_MARK
        message = AssistantMessage(tuple(content), PROVIDER, model, usage, stop)
        self._history = (*self._history, message)
        return message


def _all_arrived(announced: list[ToolCall], arrived: list[BridgeCall]) -> bool:
    """Whether each call the CLI announced has reached the bridge (the same tool with the same arguments)."""
    left = list(arrived)
    for call in announced:
        match = next((c for c in left if c.name == call.name and same_arguments(c.arguments, call.arguments)), None)
        if match is None:
            return False
        left.remove(match)
    return True


def _tool_call(event: dict[str, Any]) -> ToolCall:
    name = str(event.get("tool_name") or "")
    name = name[len(PREFIX) :] if name.startswith(PREFIX) else name
    arguments = event.get("parameters")
    return ToolCall(str(event.get("tool_id") or ""), name, arguments if isinstance(arguments, dict) else {})


def _usage(stats: dict[str, Any]) -> Usage:
    """The run's token use as the CLI reports it: `input` is what was not read from its cache."""
    cached = int(stats.get("cached") or 0)
    fresh = stats.get("input")
    return Usage(
        input_tokens=int(fresh) if fresh is not None else max(0, int(stats.get("input_tokens") or 0) - cached),
        output_tokens=int(stats.get("output_tokens") or 0),
        cache_read_tokens=cached,
    )


def workspace_of(model: GeminiCLIModel) -> Path | None:
    """The private folder the model's CLI runs in (for tests and diagnostics)."""
    return model.workspace.root if model.workspace is not None else None
