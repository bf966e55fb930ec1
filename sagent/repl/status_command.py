"""The `statusLine` setting: a command of the user's whose first line the REPL shows, Claude Code's shape.

    "statusLine": {"type": "command", "command": "~/.config/sagent/statusline.sh", "padding": 1}

The command runs in a shell, in the working folder, with the session as one JSON object on stdin (the
fields Claude Code sends, and a `sagent` object of its own: `status_payload`). The first line it prints,
colours kept, is shown on a row of its own just above sagent's status line, which stays (it holds the
permission mode). The command runs again when what it is given changes (after each event of a turn, a
model switch, a new session), at most every `MIN_INTERVAL_S`, one run at a time, never on the REPL's
own time: a run has `TIMEOUT_S` to finish and is then killed with its children; only `MAX_OUTPUT_BYTES`
of its output are read; its stderr is dropped. A run that fails (a non-zero exit, nothing printed, killed
before a whole line) empties the row. A project's `statusLine` applies only in a trusted folder, as its
hooks do (sagent/cli/settings_files.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sagent.repl.terminal_settings import StatusLineSetting, status_line_of

if TYPE_CHECKING:
    from prompt_toolkit.layout import Container

    from sagent.repl.host import ReplHost

MIN_INTERVAL_S = 0.3
"""The least time between two starts of the command."""
TIMEOUT_S = 5.0
"""How long one run may take before it is killed."""
MAX_OUTPUT_BYTES = 64 * 1024
"""Bytes of output read at most; a command printing more is stopped there."""
MAX_LINE_CHARS = 2000
DRAIN_S = 2.0
"""How long the rest of a killed run's output is read, at most, before it is left unread."""
_SGR = re.compile(r"\x1b\[[0-9;:]*m")
_OTHER_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?")
_CONTROLS = re.compile(r"[\x00-\x08\x0a-\x1a\x1c-\x1f\x7f]")


def first_line(output: bytes) -> str:
    """The first line of a command's output as the status row shows it: SGR colour codes kept, every
    other escape sequence and control character dropped (they would move the cursor), tabs as spaces."""
    line = output.split(b"\n", 1)[0].decode("utf-8", errors="replace").rstrip("\r")
    kept: list[str] = []
    at = 0
    for colour in _SGR.finditer(line):  # colours are kept; what lies between them is cleaned
        kept += [_clean(line[at : colour.start()]), colour.group()]
        at = colour.end()
    kept.append(_clean(line[at:]))
    return "".join(kept)[:MAX_LINE_CHARS]


def _clean(text: str) -> str:
    return _CONTROLS.sub("", _OTHER_ESCAPES.sub("", text).replace("\t", " "))


async def run_status_command(
    command: str, payload: bytes, cwd: Path, timeout: float = TIMEOUT_S, env: dict[str, str] | None = None
) -> str:
    """Run `command` with `payload` on stdin; the status row's text ('' when the run failed)."""
    try:
        process = await asyncio.create_subprocess_shell(
            command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            cwd=cwd,
            env=env,
            start_new_session=True,  # its own process group: a timeout kills what it started too
        )
    except OSError:
        return ""
    assert process.stdin is not None and process.stdout is not None
    out = bytearray()
    stdout = process.stdout

    async def feed_and_read() -> None:
        with contextlib.suppress(OSError):  # a command that never reads its stdin
            process.stdin.write(payload)  # type: ignore[union-attr]
            await process.stdin.drain()  # type: ignore[union-attr]
            process.stdin.close()  # type: ignore[union-attr]
        while len(out) < MAX_OUTPUT_BYTES:
            chunk = await stdout.read(MAX_OUTPUT_BYTES - len(out))
            if not chunk:
                return
            out.extend(chunk)

    async def whole_run() -> None:
        await feed_and_read()
        if len(out) < MAX_OUTPUT_BYTES:  # all of it read: wait for its exit status
            await process.wait()

    finished = False
    try:
        await asyncio.wait_for(whole_run(), timeout)
        finished = len(out) < MAX_OUTPUT_BYTES
    except TimeoutError:
        finished = False
    finally:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            # asyncio's `wait()` returns only once the output pipe is closed too, which a reader that stopped
            # reading never sees: past its buffer's limit the pipe is no longer read, and the run would wait
            # for ever. What is left is read to its end (the group is killed), for at most DRAIN_S.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(_drain(stdout), DRAIN_S)
                await process.wait()
    if finished and process.returncode != 0:
        return ""
    if not finished and b"\n" not in out and len(out) < MAX_OUTPUT_BYTES:
        return ""  # killed at the time limit before it printed a whole line
    return first_line(bytes(out))


async def _drain(stream: asyncio.StreamReader) -> None:
    while await stream.read(MAX_OUTPUT_BYTES):
        pass


class StatusCommand:
    """Runs one REPL's status line command when its input changes, and keeps the line it printed."""

    def __init__(self, setting: StatusLineSetting, cwd: Callable[[], Path], on_change: Callable[[], None]) -> None:
        self.setting = setting
        self.cwd = cwd
        self.on_change = on_change
        self.line = ""
        """The row's text now ('' hides the row)."""
        self.runs = 0
        self._pending: dict[str, Any] | None = None
        self._last_key: str | None = None
        self._task: asyncio.Task[None] | None = None
        self._started = 0.0

    def update(self, payload: dict[str, Any]) -> None:
        """Ask for a run with `payload` when it differs from the last one asked for (the clock aside)."""
        key = json.dumps({k: v for k, v in payload.items() if k != "cost"}, sort_keys=True, default=str)
        key += json.dumps({k: v for k, v in payload.get("cost", {}).items() if k != "total_duration_ms"})
        if key == self._last_key:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not on the REPL's event loop: asked again at the next change
            return
        self._last_key = key
        self._pending = payload
        if self._task is None or self._task.done():
            self._task = loop.create_task(self._drain())

    async def _drain(self) -> None:
        while self._pending is not None:
            wait = self._started + MIN_INTERVAL_S - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            payload, self._pending = self._pending, None
            self._started = time.monotonic()
            data = json.dumps(payload, ensure_ascii=False, default=str).encode("utf-8", errors="replace")
            line = await run_status_command(self.setting.command, data, self.cwd())
            self.runs += 1
            if line != self.line:
                self.line = line
                self.on_change()


_BY_HOST: weakref.WeakKeyDictionary[object, StatusCommand | None] = weakref.WeakKeyDictionary()


def status_command_of(host: ReplHost) -> StatusCommand | None:
    """The REPL's status line command, from the settings it started with; None when none is set."""
    if host in _BY_HOST:
        return _BY_HOST[host]
    launch = host.state.launch
    values = launch.sources.loaded.values if launch is not None and launch.sources is not None else {}
    setting = status_line_of(values)
    found = StatusCommand(setting, lambda: host.agent.context.cwd, host.refresh) if setting else None
    _BY_HOST[host] = found
    return found


def rerun_if_changed(host: ReplHost) -> None:
    """Something the status line command may show changed: run it again (throttled, in the background)."""
    found = status_command_of(host)
    if found is not None:
        found.update(status_payload(host))


def status_payload(host: ReplHost) -> dict[str, Any]:
    """What the command gets on stdin: Claude Code's fields, then sagent's own under `sagent`."""
    from sagent import __version__
    from sagent.permissions.policy import mode_of

    agent = host.agent
    now = agent.snapshot(measure=False)
    launch = host.state.launch
    root = launch.sources.loaded.root if launch is not None and launch.sources is not None else agent.context.cwd
    path = agent.session.path
    used = host.state.last_input_tokens
    window = now.context_window
    return {
        "hook_event_name": "Status",
        "session_id": agent.session.id,
        "transcript_path": str(path) if path is not None else "",
        "cwd": str(agent.context.cwd),
        "model": {"id": now.model, "display_name": now.model},
        "workspace": {"current_dir": str(agent.context.cwd), "project_dir": str(root)},
        "version": __version__,
        "output_style": {"name": "default"},
        "cost": {"total_cost_usd": float(now.total_usd), "total_duration_ms": int(1000 * (time.monotonic() - _OPENED))},
        "context_window": {
            "context_window_size": window,
            "total_input_tokens": now.usage.total_input_tokens,
            "total_output_tokens": now.usage.output_tokens,
            "used_percentage": round(100 * used / window, 1) if window else None,
        },
        "exceeds_200k_tokens": used > 200_000,
        "sagent": {
            "provider": now.provider,
            "permission_mode": mode_of(agent) or "",
            "busy": host.busy,
            "jobs": len(now.running_jobs()),
            "context_tokens": used,
            "messages": now.messages,
        },
    }


_OPENED = time.monotonic()  # the REPL imports this module as it opens: the session's duration counts from here


def status_command_window(host: ReplHost) -> Container:
    """The row that shows the command's line, above sagent's own status line; hidden while it is empty."""
    from prompt_toolkit.filters import Condition
    from prompt_toolkit.formatted_text import ANSI
    from prompt_toolkit.layout import ConditionalContainer, Window
    from prompt_toolkit.layout.controls import FormattedTextControl

    def text() -> ANSI:
        found = status_command_of(host)
        line = found.line if found is not None else ""
        return ANSI(" " * (found.setting.padding if found else 0) + line)

    def shown() -> bool:
        found = status_command_of(host)
        return found is not None and bool(found.line)

    return ConditionalContainer(Window(FormattedTextControl(text), height=1, wrap_lines=False), filter=Condition(shown))
