"""The interactive REPL: a prompt_toolkit application on the same `Agent` and event stream as headless mode.

The screen has two parts. Above, the scrollback: finished blocks (paragraphs, tool lines, diffs) printed
once and never redrawn. Below, a small live area that prompt_toolkit repaints: the paragraph streaming
now, running tools, queued input, the input box and a status line. Input typed while the agent works is
queued (Enter: read at the next safe point, long tool calls moving to the background; Tab: held until the
agent is idle) and can be pulled back for editing with Up until it is delivered.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Callable, Coroutine
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sagent.agent.agent import Agent
from sagent.agent.fleet import FleetError
from sagent.attachments import is_shell_context, typed_text
from sagent.events import (
    Compacted,
    ContextPruned,
    ErrorEvent,
    Event,
    MessageAdded,
    Result,
    ToolFinished,
    ToolStarted,
    TurnFinished,
)
from sagent.lib import sdk_threads
from sagent.providers.base import ProviderError
from sagent.repl import approval, budget, stopping
from sagent.repl import config_cmd as config_cmd  # registers /config
from sagent.repl import doctor_cmd as doctor_cmd  # registers /doctor
from sagent.repl import init_cmd as init_cmd  # registers /init
from sagent.repl import notify as notify  # notifications when a turn ends, and the terminal's focus
from sagent.repl import plugins_cmd as plugins_cmd  # registers /plugins
from sagent.repl import session_commands as session_commands  # registers /resume, /rewind, /fork
from sagent.repl import skills_cmd as skills_cmd  # registers /skills
from sagent.repl import status_cmd as status_cmd  # registers /status
from sagent.repl.host import Queued, ReplState
from sagent.repl.liveness import tick
from sagent.repl.mentions import compose_for
from sagent.repl.render import Renderer, Settings
from sagent.types import UserMessage

if TYPE_CHECKING:
    from prompt_toolkit.application import Application
    from prompt_toolkit.buffer import Buffer

    from sagent.custom_commands import Expansion


class Repl:
    """The REPL: owns the agent, the screen and the input queue; implements `ReplHost` for the commands
    and the screen, which import nothing from this module."""

    def __init__(
        self,
        agent: Agent,
        *,
        new_agent: Callable[..., Agent],
        settings: Settings | None = None,
        history_file: Path | None = None,
        switch: Callable[[Agent, str | None, str | None], str] | None = None,
        first_prompt: str | None = None,
        api_key_env: str | None = None,
    ) -> None:
        """`new_agent(session_path=None)` builds an agent on the current model (for /clear and /resume);
        `switch(agent, provider, model)` moves the agent to another model and returns a line to show;
        `first_prompt` is sent as soon as the REPL is up (`sagent "fix the test"`); `api_key_env` is the
        variable `--api-key-env` named for the first model's provider (a refused key's hint names it)."""
        self.first_prompt = first_prompt
        self._key_env = (agent.model.provider, api_key_env)
        self.agent = agent
        self.new_agent = new_agent
        self.switch = switch
        self.settings = settings or Settings()
        self.renderer = Renderer(self.settings)
        self.state = ReplState()
        self.history_file = history_file
        self.task: asyncio.Task[None] | None = None
        self.app: Application[None] | None = None
        self.input: Buffer | None = None
        self._outbox: list[str] = []
        self._flushing = False
        self._tasks: set[asyncio.Future[Any]] = set()
        self._watcher: asyncio.Task[None] | None = None
        self._ticker: asyncio.Task[None] | None = None
        agent.add_sink(self)  # the screen is one of the agent's sinks, beside its session log
        approval.install(self)  # the REPL answers the permission hook's questions

    # ------------------------------------------------------------------------------------- agent side

    @property
    def busy(self) -> bool:
        return self.task is not None and not self.task.done()

    def submit(self, text: str, defer: bool = False) -> None:
        """What Enter (or Tab) does with the text in the input box."""
        approvals = approval.approvals_of(self)
        if approvals is not None and approvals.take_reason(text):  # the reason for a refusal
            self.refresh()
            return
        if not text.strip():
            return
        if text.startswith("!"):  # the user runs a shell command themselves
            from sagent.repl import shell_mode

            shell_mode.start(self, text[1:])
            return
        if text.startswith("#"):  # `# note`: added to the project memory, nothing sent
            from sagent.repl import memory_note

            if memory_note.is_note(text):
                memory_note.take_note(self, text)
                return
        expansion = None
        typed = text
        if text.startswith("/"):
            from sagent.repl.commands import expand_custom, run_command

            expansion = expand_custom(self, text)
            if expansion is None:  # a built-in command, or one that does not exist
                self.background(run_command(self, text))
                return
            command = expansion.command
            if self.busy and (command.allowed_tools is not None or command.model):
                note = f"/{command.name} sets its own tools or model: run it when the agent is idle (Esc interrupts)"
                self.commit([self.renderer.c("yellow", note)])
                return
            self.commit([self.renderer.c("dim", f"/{command.name} → {command.path}")])
            text = expansion.prompt
        message = compose_for(self, text)  # @mentions attached, !command outputs taken along
        if typed != message.text:  # a custom command's prompt, or files attached: keep what was typed
            message = replace(message, typed=typed)
        if not self.busy:
            self._start(message, expansion)
        elif defer:
            self.state.queued.append(Queued(message, deferred=True))
        else:
            self.agent.send(message)
            self.state.queued.append(Queued(message, deferred=False))
        self.refresh()

    def background(self, coroutine: Coroutine[Any, Any, Any]) -> None:
        """Run a coroutine beside the REPL, holding a reference until it is done."""
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def pull_back(self) -> str | None:
        """Take the newest queued message back for editing, if it has not been delivered."""
        while self.state.queued:
            item = self.state.queued.pop()
            if item.deferred or self.agent.retract(item.message):
                self.state.context[:0] = [p for p in item.message.content if is_shell_context(p)]  # kept for the next
                return typed_text(item.message)
        return None

    def _start(self, prompt: UserMessage | None, command: Expansion | None = None) -> None:
        self._unwatch()  # the run reads the inbox now
        stopping.disarm(self)
        spent = self.agent.snapshot(measure=False).total_usd
        self.state.clock.start(spent)
        self.renderer.turn_start_usd = spent
        self.task = asyncio.ensure_future(self._work(prompt, command))
        if self._ticker is None or self._ticker.done():  # one ticker, also when a run follows a run
            self._ticker = asyncio.ensure_future(tick(self))  # the spinner turns while the task runs

    def watch(self) -> None:
        """While the agent is idle, wait for input that does not come from the keyboard (a sub-agent's
        report, a peer's message, a background job's result) and start a run on it."""
        self._unwatch()
        self._watcher = asyncio.ensure_future(self._wait_for_input(self.agent))

    def _unwatch(self) -> None:
        if self._watcher is not None:
            self._watcher.cancel()
            self._watcher = None

    async def _wait_for_input(self, agent: Agent) -> None:
        if await agent.wait_for_input() and agent is self.agent and not self.busy:
            self._start(None)

    def replace_agent(self, agent: Agent) -> None:
        """Move to another agent (/clear, /resume): the old one's sub-agents and jobs stop; the model,
        which the new agent takes over, stays open."""
        old = self.agent
        self.agent = agent
        old.remove_sink(self)
        agent.add_sink(self)
        self.background(old.aclose(keep_model=True))
        self.measure_context()
        self.watch()

    def measure_context(self) -> None:
        """Set the context gauge from the agent's own estimate of its next request: right after a resume
        it shows the resumed conversation's size, not zero or the previous session's."""
        self.state.last_input_tokens = self.agent.context_tokens if self.agent.history else 0

    async def _work(self, prompt: UserMessage | None, command: Expansion | None = None) -> None:
        undo = None
        try:
            if command is not None:  # a custom command's tools and model hold for its run
                from sagent.custom_commands import apply_command

                undo = apply_command(self.agent, command)
            async for _ in self.agent.run(prompt):
                pass  # each event reached the screen through `on_event`, as the agent emitted it
        except (FleetError, ProviderError) as error:  # the command's model cannot be used
            self.commit([self.renderer.c("yellow", f"/{command.command.name if command else ''}: {error}")])
        except Exception as error:  # the agent turns provider failures into results; this is a bug path
            self.commit([self.renderer.c("red", f"error: {type(error).__name__}: {error}")])
        finally:
            if undo is not None:
                undo()
            self.refresh()
        # Input that arrived after the last safe point, or was held for idle, starts the next run.
        held = [q for q in self.state.queued if q.deferred]
        for item in held:
            self.state.queued.remove(item)
            self.agent.send(item.message)
            self.state.queued.append(Queued(item.message, deferred=False))
        if self.agent.has_pending_input:
            self._start(None)
        else:
            self.watch()
            notify.turn_ended(self)  # a terminal not focused is told; the Notification hooks run

    def on_event(self, agent: Agent, event: Event) -> None:
        """Show an event of the REPL's agent (its sink: called as the agent emits it, after the log)."""
        if agent is not self.agent or not agent.running:
            return  # an agent /clear or /resume replaced; or a command's own change (/compact prints its own)
        self.commit(self.renderer.feed(event))
        if isinstance(event, ErrorEvent) and event.kind == "authentication":
            self.commit(self._key_hint())
        self.state.clock.feed(event)
        if isinstance(event, Result) and event.subtype == "error_max_budget_usd":
            self.commit([self.renderer.c("yellow", budget.raise_hint(self.agent))])
        if isinstance(event, MessageAdded):
            self.state.queued = [q for q in self.state.queued if q.message is not event.message]
        elif isinstance(event, TurnFinished):
            self.state.last_input_tokens = event.usage.total_input_tokens + event.usage.output_tokens
        elif isinstance(event, Compacted | ContextPruned):
            self.state.last_input_tokens = event.tokens_after
        elif isinstance(event, Result) and not self.agent.has_pending_input:
            # Sent input the run did not take was blocked by a hook (the notice said so): no longer queued.
            self.state.queued = [q for q in self.state.queued if q.deferred]
        elif isinstance(event, ToolStarted | ToolFinished | Result):
            pass
        self.refresh()

    def _key_hint(self) -> list[str]:
        """The line under a refused key's error: the variable to check, as headless mode says it."""
        from sagent.providers.registry import key_hint

        provider = self.agent.model.provider
        first, api_key_env = self._key_env
        hint = key_hint(provider, api_key_env if provider == first else None)
        return [self.renderer.c("yellow", f"  {hint}")] if hint else []

    def interrupt(self) -> None:
        if self.busy:
            self.agent.interrupt()

    # ----------------------------------------------------------------------------------- output side

    def commit(self, blocks: list[str]) -> None:
        """Print finished blocks above the live area, in order, batching what arrives in one tick."""
        self._outbox.extend(blocks)
        if not self._outbox:
            return
        if self.app is None or not self.app.is_running:
            self._write()
        elif not self._flushing:
            self._flushing = True
            asyncio.get_running_loop().call_soon(lambda: self.background(self._flush()))

    async def _flush(self) -> None:
        from prompt_toolkit.application import run_in_terminal

        try:
            await run_in_terminal(self._write, in_executor=False)
        finally:
            self._flushing = False
        self.commit([])  # what arrived while this flush waited for the terminal

    def _write(self) -> None:
        blocks, self._outbox = self._outbox, []
        if blocks:
            sys.stdout.write("\n".join(blocks) + "\n")
            sys.stdout.flush()

    def refresh(self) -> None:
        if self.app is not None:
            self.app.invalidate()

    # ------------------------------------------------------------------------------------ status

    def status_text(self, width: int | None = None) -> str:
        """The status line, fitted to `width` columns (the terminal's; padding included): the least useful
        parts shortened or left out first, the permission mode kept (sagent/repl/status_line.py)."""
        from sagent.permissions.policy import mode_of
        from sagent.repl.status_line import StatusFacts, fit

        now = self.agent.snapshot(measure=False)  # repainted often: the context is not measured here
        fleet = self.state.fleet
        facts = StatusFacts(
            provider=now.provider,
            model=now.model,
            cost=f"${now.total_usd:.4f}" + ("+?" if now.unpriced_models else ""),
            used_tokens=self.state.last_input_tokens,
            context_window=now.context_window,
            fleet=fleet.text() if fleet is not None else "",  # with --fleet: `fleet NAME as LABEL`
            fleet_label=fleet.label if fleet is not None else "",
            jobs=len(now.running_jobs()),
            running=tuple(r.call.name for r in self.renderer.running.values() if r.call.id not in self.renderer.asking),
            mode=mode_of(self.agent) or "",
        )
        return fit(facts, (self.settings.width if width is None else width) - 2)

    def agents_text(self) -> str:
        """One line per sub-agent alive in the tree: label, model, status, spend."""
        lines = []
        for row in self.agent.snapshot(measure=False).walk()[1:]:
            if row.alive:
                line = f"{'  ' * row.depth}◆ {row.label} · {row.model} · {row.status} · ${row.total_usd:.4f}"
                lines.append(line[: self.settings.width - 1])
        return "\n".join(lines)

    def queued_text(self) -> str:
        lines = []
        for item in self.state.queued:
            label = "after this task" if item.deferred else "queued"
            lines.append(f"  ⏳ {label}: {' '.join(typed_text(item.message).split())[: self.settings.width - 24]}")
        if lines:
            lines.append("  (Up takes the last one back to edit)")
        return "\n".join(lines)

    def live_text(self, rows: int) -> str:
        """The live area, cut to its last lines when a long paragraph would not fit the terminal."""
        text = self.renderer.live()
        lines = text.split("\n")
        from sagent.repl.task_view import height

        room = max(rows - 6 - len(self.state.queued) - height(self, rows), 3)
        return "\n".join(lines[-room:]) if len(lines) > room else text

    # --------------------------------------------------------------------------------------- run

    async def run(self) -> int:
        """Run until the user quits; the first prompt, if any, is sent as soon as the REPL is up."""
        from sagent.repl.screen import build_application

        self.app, self.input = build_application(self)
        notify.start(self)  # the terminal reports focus from now on
        provider = self.agent.model.provider
        sdk_threads.start(lambda: _warm_up(provider), "sagent-warm-up")  # waited for by a teardown, as SDK code
        self.commit(self.banner())
        _tell_local_progress(self)
        self.measure_context()
        self.watch()
        if self.first_prompt:
            self.submit(self.first_prompt)
        hangup = _on_hangup(self.quit)
        try:
            await self.app.run_async()
        finally:
            self._unwatch()
            if self.busy:
                self.agent.quit()
                assert self.task is not None
                await asyncio.gather(self.task, return_exceptions=True)
            hangup()  # only now: a hangup is often signalled twice, and the second must not kill us mid-cleanup
            notify.stop(self)
            self.app = None
            self._write()
            await self.agent.aclose()
        return 0

    def banner(self) -> list[str]:
        model = self.agent.model
        lines = [
            self.renderer.c("bold", "sagent")
            + self.renderer.c("dim", f" · {model.provider}/{model.name} · {self.agent.context.cwd}"),
            self.renderer.c(
                "dim",
                "Enter sends · Alt+Enter newline · Tab: hold till idle · Esc interrupts · /help · Ctrl+C twice quits",
            ),
        ]
        if self.state.fleet is not None:
            place = self.state.fleet.text()
            lines.append(self.renderer.c("dim", f"in the {place}: AgentSend reaches its agents, /agents lists them"))
        lines += skills_cmd.banner_lines(self)
        if self.agent.history:
            lines += self.renderer.history(list(self.agent.history))
            lines.append(self.renderer.c("dim", f"─ resumed session {self.agent.session_id}"))
        return lines

    def quit(self) -> None:
        if self.app is not None and self.app.is_running:
            self.app.exit()


def _on_hangup(quit: Callable[[], None]) -> Callable[[], None]:
    """SIGHUP (the terminal closed) and SIGTERM quit the REPL the way /quit does, so the running tools'
    processes end and the session is closed, instead of the process dying mid-call. Returns the undo."""
    loop = asyncio.get_running_loop()
    signals = [getattr(signal, name) for name in ("SIGHUP", "SIGTERM") if hasattr(signal, name)]
    for sig in signals:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, quit)

    def undo() -> None:
        for sig in signals:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(sig)

    return undo


def terminal_settings(width: int) -> Settings:
    """Colour and Markdown as the environment allows: NO_COLOR and dumb terminals get plain text."""
    dumb = os.environ.get("TERM", "") in ("dumb", "")
    color = not dumb and "NO_COLOR" not in os.environ
    return Settings(width=width, color=color, markdown=not dumb)


def _tell_local_progress(repl: Repl) -> None:
    """The local model says above the prompt, not on stderr under the screen, that it is starting."""
    if repl.agent.model.provider != "local":
        return
    from sagent.providers.llamacpp import tell_progress_to

    tell_progress_to(repl.agent.model, lambda text: repl.commit([repl.renderer.c("dim", text)]))


def _warm_up(provider: str) -> None:
    """Import the provider's SDK and the Markdown renderer while the user types the first prompt, so the
    first answer does not wait a second for imports."""
    import importlib

    from sagent.providers.specs import find_spec

    spec = find_spec(provider)
    for name in (spec.sdk if spec and spec.sdk else "openai", "rich.markdown", "rich.console"):
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
