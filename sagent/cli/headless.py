"""Headless mode: a task in (argument, stdin, or stream-json lines), the answer or JSON records out."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from sagent.agent.agent import Agent
from sagent.agent.fleet import FleetError
from sagent.cli.decoding import InputNotice
from sagent.cli.records import (
    InputError,
    PermissionDenials,
    claude_code_subtype,
    event_record,
    parse_input_line,
    result_record,
)
from sagent.cli.stdin_lines import StdinLines
from sagent.events import (
    AdvisorConsulted,
    Compacted,
    ContextPruned,
    ErrorEvent,
    Event,
    HookNotice,
    MessageAdded,
    Result,
    Retrying,
    ToolFinished,
    ToolStarted,
)
from sagent.providers.base import ProviderError
from sagent.types import UserMessage

if TYPE_CHECKING:
    from sagent.cli.control.channel import ControlChannel

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_MAX_ROUNDS = 3
EXIT_BUDGET = 4
EXIT_INTERRUPTED = 130
EXIT_HANGUP = 129  # 128 + SIGHUP, as a shell reports a process its closed terminal ended

EXIT_CODES = {
    "success": EXIT_OK,
    "error_during_execution": EXIT_ERROR,
    "error_max_turns": EXIT_MAX_ROUNDS,
    "error_max_budget_usd": EXIT_BUDGET,
    "interrupted": EXIT_INTERRUPTED,
}


class Output:
    """Writes one output format. Text: the final answer on stdout, progress on stderr when it is a
    terminal. json: one result object at the end. stream-json: one record per line as events happen."""

    def __init__(self, fmt: str, partial: bool, stdout: IO[str], stderr: IO[str]) -> None:
        self.fmt = fmt
        self.partial = partial
        self.stdout = stdout
        self.stderr = stderr
        self.progress = fmt == "text" and stderr.isatty()
        self.last_result: dict[str, Any] | None = None
        # What to tell a user whose key the provider refused (the variable to check), set by the caller.
        self.key_hint: str | None = None
        # The provider refused the credentials: the run's exit code is EXIT_USAGE, not EXIT_ERROR.
        self.refused_credentials = False
        # Text mode holds an error line until the next event, so a result that repeats it prints it once.
        self._held_error: ErrorEvent | None = None
        self.denials = PermissionDenials()  # the calls refused in this turn, for the result's permission_denials
        # Whether a program on the Claude Agent SDK reads the records (it sent initialize): its result subtypes.
        self.claude_code: Callable[[], bool] = lambda: False
        from sagent.cli.stream_events import MessageStream

        self.stream = MessageStream()  # with --include-partial-messages: the records around each response's deltas

    def _line(self, record: dict[str, Any]) -> None:
        self.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")
        self.stdout.flush()

    def event(self, event: Event, agent: Agent) -> None:
        if isinstance(event, Result):
            self.result(event, agent)
            return
        self.denials.see(event)
        if isinstance(event, ErrorEvent) and event.kind == "authentication":
            self.refused_credentials = True
        if isinstance(event, HookNotice):
            # In every format, progress or not: a hook that failed is never passed over in silence.
            self.stderr.write(f"sagent: hook {event.line()}\n")
            self.stderr.flush()
        elif isinstance(event, AdvisorConsulted):  # a consultation spends money: it is always said
            where = f" ({event.agent})" if event.agent and event.agent != "main" else ""
            self.stderr.write(f"sagent: advisor{where}: {event.line()}\n")
            self.stderr.flush()
        if self.fmt == "stream-json":
            record = event_record(event, agent.session_id, partial=self.partial)
            if record is not None and record.get("subtype") == "init":
                from sagent.sandbox.status import sandbox_record

                record["sandbox"] = sandbox_record(agent.context.sandbox, agent.context.roots)
                from sagent.cli.init_fields import init_fields

                record.update(init_fields(agent, record["tools"]))  # the fields of Claude Code's init record
            lines = [record] if record is not None else []
            if self.partial:  # the whole stream of each response around its deltas, as Claude Code writes it
                lines = self.stream.around(event, record, agent.model.name, agent.session_id)
            for line in lines:
                self._line(line)
            return
        self._release_error()
        if isinstance(event, ErrorEvent):
            if self.fmt == "text":
                self._held_error = event
            else:
                self._error_line(event.message, event.kind)
        elif isinstance(event, Retrying) and self.fmt == "text":
            # Even when stderr is not a terminal: a run waiting on retries must not look hung.
            self.stderr.write(f"sagent: retrying in {event.delay:.1f} s: {event.error}\n")
            self.stderr.flush()
        elif self.progress:
            self._progress(event)

    def _release_error(self) -> None:
        if self._held_error is not None:
            self._error_line(self._held_error.message, self._held_error.kind)
            self._held_error = None

    def _error_line(self, message: str, kind: str) -> None:
        hint = f"; {self.key_hint}" if kind == "authentication" and self.key_hint else ""
        self.stderr.write(f"sagent: {message}{hint}\n")
        self.stderr.flush()

    def _progress(self, event: Event) -> None:
        if isinstance(event, ToolStarted):
            args = json.dumps(event.call.arguments, ensure_ascii=False)
            self.stderr.write(f"· {event.call.name} {args[:100]}\n")
        elif isinstance(event, ToolFinished) and event.result.is_error:
            self.stderr.write(f"  ✗ {event.result.text.splitlines()[0][:120] if event.result.text else ''}\n")
        elif isinstance(event, Compacted | ContextPruned):
            self.stderr.write(event.line() + "\n")

    def result(self, result: Result, agent: Agent) -> None:
        record = result_record(result, agent.cost)
        record["permission_denials"] = self.denials.take()
        if self.claude_code():
            claude_code_subtype(record)
        self.last_result = record
        if self.fmt == "stream-json":
            self._line(record)
        elif self.fmt == "text":
            held, self._held_error = self._held_error, None
            kind = ""
            if held is not None and result.is_error and held.message in result.text:
                kind = held.kind  # the result repeats the error: one line says both
            elif held is not None:
                self._error_line(held.message, held.kind)
            if result.is_error:
                self._error_line(result.text, kind)
            else:
                self.stdout.write(result.text + ("" if result.text.endswith("\n") else "\n"))
                self.stdout.flush()

    def repeat_result(self) -> None:
        """The last result record again, for another message the same turn answered (stream-json output):
        the same fields, its refused calls included, under a record id of its own."""
        if self.fmt == "stream-json" and self.last_result is not None:
            record = dict(self.last_result)
            if "uuid" in record:
                record["uuid"] = str(uuid.uuid4())
            self._line(record)

    def finish(self) -> None:
        self._release_error()
        if self.fmt == "json" and self.last_result is not None:
            self._line(self.last_result)


def _expand(agent: Agent, prompt: UserMessage) -> tuple[UserMessage, Callable[[], None] | None]:
    """The prompt a custom command `/name args` stands for, and what undoes its tools and model after the
    run; the prompt unchanged (and nothing to undo) when it names no custom command."""
    from sagent.custom_commands import CustomCommandError, apply_command, expand_input
    from sagent.skill_commands import load_prompt_commands

    found, broken = load_prompt_commands(Path(agent.settings.cwd or "."))  # the skills too
    name = prompt.text[1:].split(None, 1)[0] if prompt.text[1:].strip() else ""
    if name in broken:
        raise CustomCommandError(broken[name])
    expansion = expand_input(prompt.text, found)
    if expansion is None and prompt.text.strip() == "/init":  # as in the REPL (a custom /init wins)
        from sagent.agent.memory_init import WRITING_TOOLS, init_prompt, init_target

        if not any(name in agent.tools for name in WRITING_TOOLS):
            raise CustomCommandError("/init needs the Write or Edit tool: name them in --tools")
        cwd = agent.context.cwd
        return UserMessage.of(init_prompt(init_target(cwd), cwd)), None
    if expansion is None:
        return prompt, None
    return UserMessage.of(expansion.prompt), apply_command(agent, expansion)


class _OutputSink:
    """The output as one of the agent's sinks (beside its session log): each event is written as the agent
    emits it; the exit code follows the last result.

    With streamed input (`inputs` holds the messages given to the agent), a turn that took several of them
    ends with one result record for each (stream-json output), and calls moved to the background while it
    ran (so that a message could be read) hold the turn open until they end."""

    def __init__(self, output: Output, hangup: asyncio.Event, inputs: list[UserMessage] | None = None) -> None:
        self.output = output
        self.hangup = hangup
        self.code = EXIT_OK
        self.inputs = inputs
        self.taken = 0  # messages of `inputs` the running turn took

    def on_event(self, agent: Agent, event: Event) -> None:
        if self.inputs is not None:
            self._follow(agent, event)
        try:
            self.output.event(event, agent)
            if isinstance(event, Result):
                for _ in range(self.taken - 1):  # every message the turn answered gets its result record
                    self.output.repeat_result()
        except OSError:
            if not self.hangup.is_set():
                raise  # after a hangup the terminal is gone; the session log has every event
        if isinstance(event, Result):
            self.taken = 0
            self.code = EXIT_CODES[event.subtype]
            if self.output.refused_credentials and event.subtype == "error_during_execution":
                self.code = EXIT_USAGE  # a key to fix, like a missing one

    def _follow(self, agent: Agent, event: Event) -> None:
        assert self.inputs is not None
        if isinstance(event, MessageAdded) and any(event.message is m for m in self.inputs):
            self.taken += 1
            self.inputs[:] = [m for m in self.inputs if m is not event.message]
        elif isinstance(event, HookNotice) and event.hook == "UserPromptSubmit" and event.agent == agent.label:
            self.taken += event.message.startswith("prompt blocked")  # answered too: by the hook's refusal
        elif isinstance(event, ToolFinished) and not event.result.is_error and agent.has_pending_input:
            # A call moved to the background so that a waiting message is read (not one the model sent there,
            # nor one past its time limit): the turn ends only once it does, as it would have without the message.
            job = agent.jobs.of_call(event.result.call_id)
            if job is not None and job.state == "running" and job.call.arguments.get("background") is not True:
                job.foreground = True


async def read_stream_json(
    stdin: IO[bytes], stderr: IO[str] | None = None, control: ControlChannel | None = None
) -> AsyncIterator[UserMessage]:
    """User messages from stream-json lines on stdin (read as bytes), as they arrive. Text that is not
    valid UTF-8 is replaced and the user told once on `stderr`. With a `control` channel, its lines (the
    Claude Agent SDK's control protocol) go to it instead, and it learns when stdin closes."""
    notice = InputNotice(stderr, "a stream-json line on standard input", ongoing=True)
    lines = StdinLines(stdin)  # a daemon thread's reads: one blocked never holds the exit
    try:
        while True:
            line = await lines.readline()
            if not line:
                return
            if control is not None and control.take_line(line):
                continue
            message = parse_input_line(line, notice)
            if message is not None:
                if control is not None:
                    await control.before_message()
                yield message
    finally:
        if control is not None:
            control.close()


async def run_headless(
    agent: Agent,
    prompt: UserMessage | None,
    incoming: AsyncIterator[UserMessage] | None,
    output: Output,
) -> int:
    """Run until the prompt and every incoming message are answered; the exit code of the last result.

    Messages that arrive while the agent works join its turn at the next safe point, never waiting for a
    long call, a sub-agent, a `Jobs wait` or a permission question (those go on in the background and hold
    the turn open); in stream-json output each message the turn took gets its result record. An interrupt
    that is not a signal ends the turn, not the session. A prompt `/name args`
    naming a custom command (`sagent.custom_commands`) is that command's prompt, run with its tools and
    model."""
    undo = None
    if prompt is not None and prompt.text.startswith("/"):
        from sagent.custom_commands import CustomCommandError

        try:
            prompt, undo = _expand(agent, prompt)
        except (CustomCommandError, FleetError, ProviderError) as error:
            output.stderr.write(f"sagent: {getattr(error, 'message', None) or error}\n")
            return EXIT_USAGE
    # Streamed input is read as it arrives and never waits for long calls: as typed input in the REPL.
    inputs: list[UserMessage] | None = None
    if incoming is not None:
        agent.configure(input_preempts=True, preempt_questions=True)  # nor for a permission question
        inputs = []
    if prompt is not None:
        agent.send(prompt)
        if inputs is not None:
            inputs.append(prompt)
    bad_input: list[str] = []

    async def feed() -> None:
        if incoming is None:
            return
        try:
            async for message in incoming:
                if inputs is not None:
                    inputs.append(message)
                agent.send(message)  # a turn under way takes it at its next safe point
        except InputError as error:
            bad_input.append(str(error))

    feeder = asyncio.create_task(feed())
    hangup, signalled = _install_signals(agent)
    sink = _OutputSink(output, hangup, inputs)
    agent.add_sink(sink)
    code = EXIT_OK
    opened = False
    try:
        while True:
            if not agent.has_pending_input:
                if feeder.done():
                    break  # the end of input (or a bad line): every message before it has its answer
                # Idle: a line from stdin, or a background job's result, starts the next turn.
                waiter = asyncio.create_task(agent.wait_for_input())
                await asyncio.wait({waiter, feeder}, return_when=asyncio.FIRST_COMPLETED)
                waiter.cancel()
                if waiter.done() and not waiter.cancelled() and not waiter.result():
                    break  # the agent has quit: it takes no more input
                continue
            if not opened:  # the MCP servers' tools are in the run's opening (stream-json's init record)
                opened = True
                mcp = sys.modules.get("sagent.mcp.setup")  # loaded when the run has MCP servers
                if mcp is not None:
                    await mcp.ready(agent)
            async for _ in agent.run():
                pass  # each event reached the output through the sink, as the agent emitted it
            code = sink.code
            if code == EXIT_INTERRUPTED:
                if incoming is None or signalled.is_set():
                    break
                code = EXIT_OK  # the program on stdin interrupted a turn (a control request): the run goes on
    finally:
        agent.remove_sink(sink)  # the output ends with the result: a command's model going back is not in it
        if undo is not None:
            undo()
        feeder.cancel()
        _remove_signals()
    if hangup.is_set() and code == EXIT_INTERRUPTED:
        code = EXIT_HANGUP
    try:
        output.finish()
    except OSError as error:
        if isinstance(error, BrokenPipeError) and not hangup.is_set():
            raise  # the reader of the output left: `main` ends quietly with 141 (sagent.cli.closed_pipe)
    if bad_input:
        output.stderr.write(f"sagent: bad input: {bad_input[0]}\n")
        return EXIT_USAGE
    return code


def _install_signals(agent: Agent) -> tuple[asyncio.Event, asyncio.Event]:
    """Ctrl+C, SIGTERM or SIGHUP (the terminal closed) interrupt the agent: its work so far is kept, its
    tools' processes end, the result is written. A second signal exits at once. The events returned are set
    once a SIGHUP came, for its exit code, and once any of these signals came."""
    loop = asyncio.get_running_loop()
    presses = [0]
    hangup = asyncio.Event()
    signalled = asyncio.Event()

    def on_signal(sig: signal.Signals) -> None:
        if sig.name == "SIGHUP":
            if hangup.is_set():
                return  # a closed terminal may signal twice (its shell, then the kernel): one hangup
            hangup.set()
        presses[0] += 1
        signalled.set()
        if presses[0] > 1 or not agent.running:
            with contextlib.suppress(OSError):
                sys.stderr.write("sagent: interrupted; exiting\n")
            raise SystemExit(EXIT_HANGUP if hangup.is_set() else EXIT_INTERRUPTED)
        agent.interrupt()

    for sig in _SIGNALS:
        # Not possible outside the main thread or without signal support: then the default applies.
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, on_signal, sig)
    return hangup, signalled


_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


def _remove_signals() -> None:
    loop = asyncio.get_running_loop()
    for sig in _SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.remove_signal_handler(sig)
