"""Bash: runs a command in a persistent working directory. Every process the command starts ends with the
call (see processes.py), and its output is read as it comes, in constant memory: a flood of output keeps
its head and tail for the model and goes whole to a file."""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import selectors
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sagent.redaction import StreamRedactor
from sagent.sandbox.spawn import Running, SandboxRequired, confines, launcher
from sagent.tools.base import MAX_OUTPUT, AnyOrder, ToolContext, ToolError
from sagent.tools.editor import Editor
from sagent.tools.processes import end_leftovers, new_token, tagged_environment, write_record
from sagent.types import ToolCall

DEFAULT_TIMEOUT = 120
MAX_TIMEOUT = 600
KILL_GRACE = 2.0  # seconds between SIGTERM and SIGKILL on a timeout or an interrupt
DRAIN = 1.0  # seconds to read what is left in the pipe once the processes are gone
MAX_SPILL_BYTES = 1 << 30  # a full output file stops growing here, so a flood cannot fill the disk
_CHUNK = 1 << 18
READ_IT = "Read it by offset and limit, or Grep it"
RECORDS = "processes"  # the session folder's subfolder for the records of running calls


class Bash(AnyOrder):
    name = "Bash"
    reproducible = True  # its output can be had again: compaction may prune it
    description = (
        "Run a bash command; the working directory persists. stdout and stderr come together, with the exit "
        f"code when not 0. Timeout {DEFAULT_TIMEOUT} s, at most {MAX_TIMEOUT}, then it and its children are "
        "killed. Every process it starts (even with `&`, `nohup`, `setsid`) ends with the call: no daemons. No "
        f"standard input: nothing interactive. Output over {MAX_OUTPUT:,} characters keeps head and tail, the "
        "whole saved to a file it names. Sandboxed: writes only in the project, /tmp and $TMPDIR, no network, "
        "credentials such as ~/.ssh hidden."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "command": {"type": "string"},
            "timeout": {"type": "integer", "description": "seconds, 1 to 600", "default": DEFAULT_TIMEOUT},
            "description": {"type": "string", "description": "a few words for the user"},
            "dangerouslyDisableSandbox": {
                "type": "boolean",
                "description": "outside the sandbox, the user asked first: only when the sandbox blocked "
                "access it really needs",
                "default": False,
            },
        },
        "required": ["command"],
    }

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        timeout = arguments.get("timeout") or DEFAULT_TIMEOUT
        if not 1 <= timeout <= MAX_TIMEOUT:
            raise ToolError(f"timeout must be from 1 to {MAX_TIMEOUT} seconds, got {timeout}")
        if not ctx.cwd.is_dir():
            raise ToolError(f"the working directory {ctx.cwd} no longer exists")
        command = arguments["command"]
        # Leaving the sandbox is for a call a permission policy has put to its question; with none, it stays.
        outside = arguments.get("dangerouslyDisableSandbox") is True and ctx.may_leave_sandbox
        editor = ctx.editor()
        if editor is not None and editor.runs_commands and not confines(None if outside else ctx.sandbox):
            return await _in_editor(editor, command, timeout, ctx)  # the sandbox does not confine it anyway
        try:
            launch = await launcher(None if outside else ctx.sandbox, ctx.roots)
        except SandboxRequired as error:
            raise ToolError(str(error)) from None
        cwd_file = launch.scratch / f"sagent-cwd-{uuid.uuid4().hex}"
        # An EXIT trap records where the command ended up, even after `exit N`, without touching its output.
        script = f"trap 'pwd -P > \"{cwd_file}\"' EXIT\n{command}\n"
        token = new_token()
        noting: asyncio.Future[Path | None] | None = None
        if ctx.session_dir is not None:
            records = ctx.session_dir / RECORDS
            # What a dead run of this session left that no resumed call accounted for (a background call)
            # ends before this process's first call in the session starts; one trip to a thread does both.
            sweep = records not in _swept
            _swept.add(records)
            noting = asyncio.ensure_future(asyncio.to_thread(_note_call, records, token, command, sweep))
            if sweep or not launch.sandboxed:
                # Outside the sandbox the record is what finds the call's processes after a kill -9: it is
                # written before they start. In it, the call's PID namespace dies with sagent whatever the
                # record says, so the record is written while the command starts.
                await noting
        capture = Capture(lambda: ctx.spill_dir() / f"bash-{uuid.uuid4().hex[:12]}.txt")
        # Our own pipe, not asyncio's: the call ends when bash exits, not when the last holder of its
        # stdout (a daemon) closes it.
        read_end, write_end = os.pipe()
        try:
            proc = await launch.start(["bash", "-c", script], ctx.cwd, tagged_environment(token), write_end, token)
        except BaseException as error:
            os.close(read_end)
            _forget_record(noting)
            if isinstance(error, OSError) and launch.sandboxed:
                raise ToolError(str(error)) from None
            raise
        finally:
            os.close(write_end)
        pump = asyncio.ensure_future(asyncio.to_thread(capture.pump, read_end))
        returncode = 0
        try:
            try:
                if noting is not None:  # inside: an interrupt while it is written still ends the command
                    await asyncio.shield(noting)
                returncode = await asyncio.wait_for(proc.wait(), timeout)
            except TimeoutError:
                await _finish(proc, pump, capture, KILL_GRACE)
                so_far = capture.text("")
                raise ToolError(
                    f"timed out after {timeout} s; the command and every process it started were killed"
                    + (f". Its output until then:\n{so_far}" if so_far else "")
                ) from None
            except asyncio.CancelledError:
                await _finish(proc, pump, capture, KILL_GRACE)
                raise
            # Whatever the command left running (`sleep 99 &`, a daemon) goes with it.
            await _finish(proc, pump, capture, 0.0)
        finally:
            _forget_record(noting)
            with contextlib.suppress(OSError):
                new_cwd = cwd_file.read_text().strip()
                if new_cwd and Path(new_cwd).is_dir():
                    ctx.cwd = Path(new_cwd)
            cwd_file.unlink(missing_ok=True)
        exit_line = f"exit code {returncode}" if returncode else ""
        return capture.text(exit_line) or "(no output)"

    def recover(self, call: ToolCall, ctx: ToolContext) -> str | None:
        """After sagent was killed during this call: end what the call left running, and say so."""
        if ctx.session_dir is None:
            return None
        found = end_leftovers(ctx.session_dir / RECORDS, call.arguments.get("command"))
        if found is None:
            return None
        _, pids = found
        if not pids:
            return "None of the processes it started was still running when the session resumed."
        listed = ", ".join(map(str, pids[:20])) + (", …" if len(pids) > 20 else "")
        return (
            f"{len(pids)} process{'es' if len(pids) > 1 else ''} it had started (pid {listed}) "
            "were still running and were killed when the session resumed."
        )


_swept: set[Path] = set()
"""The session folders whose dead runs' leftovers this process has ended: a dead run leaves none later."""


def _forget_record(noting: asyncio.Future[Path | None] | None) -> None:
    """Remove the call's record once it is written: now, or when a write still under way finishes."""

    def remove(done: asyncio.Future[Path | None]) -> None:
        if not done.cancelled() and done.exception() is None and (path := done.result()) is not None:
            path.unlink(missing_ok=True)

    if noting is not None and noting.done():
        remove(noting)
    elif noting is not None:
        noting.add_done_callback(remove)


def _note_call(records: Path, token: str, command: str, sweep: bool) -> Path | None:
    """Record that a call runs (`write_record`), after ending a dead run's leftovers when `sweep`."""
    if sweep:
        end_leftovers(records, None)
    return write_record(records, token, command)


async def _in_editor(editor: Editor, command: str, timeout: float, ctx: ToolContext) -> str:
    """Run `command` in a terminal of the editor (where the user sees it run), as Bash runs it at home: the
    working directory carries over, the output is cut to the context the same way, a timeout kills it."""
    cwd_file = Path(tempfile.gettempdir()) / f"sagent-cwd-{uuid.uuid4().hex}"
    script = f"trap 'pwd -P > \"{cwd_file}\"' EXIT\n{command}\n"
    try:
        run = await editor.run_command(script, ctx.cwd, {}, timeout)
    except OSError as error:
        raise ToolError(f"the editor could not run the command: {error}") from None
    finally:
        with contextlib.suppress(OSError):
            new_cwd = cwd_file.read_text().strip()
            if new_cwd and Path(new_cwd).is_dir():
                ctx.cwd = Path(new_cwd)
        cwd_file.unlink(missing_ok=True)
    capture = Capture(lambda: ctx.spill_dir() / f"bash-{uuid.uuid4().hex[:12]}.txt")
    capture.feed(run.output.encode("utf-8", errors="replace"))
    capture.close()
    if run.timed_out:
        so_far = capture.text("")
        raise ToolError(
            f"timed out after {timeout} s; the editor's terminal was killed"
            + (f". Its output until then:\n{so_far}" if so_far else "")
        )
    ended = f"ended by signal {run.signal}" if run.signal else ""
    exit_line = f"exit code {run.exit_code}" if run.exit_code else ended
    cut = "[the editor kept only the end of the output]\n" if run.truncated else ""
    return cut + (capture.text(exit_line) or "(no output)")


async def _finish(proc: Running, pump: asyncio.Future[None], capture: Capture, grace: float) -> None:
    """End every process of the call, read what is left of its output, and reap bash. Shielded: a second
    interrupt while this runs does not leave processes behind (the work goes on in its thread)."""
    capture.stop_at = time.monotonic() + grace + DRAIN  # the pump gives up then, even if a holder remains

    async def work() -> None:
        await proc.end(grace)
        await pump

    await asyncio.shield(asyncio.ensure_future(work()))


class Capture:
    """A command's output as it arrives, in constant memory: all of it while it fits the context, then its
    head and tail, with the whole stream written to a spill file (mode 0600). An output that is cut is
    redacted as it arrives, before anything of it is kept or cut: a secret split between two reads, or by
    the cut between head and tail, never shows in part (the head, the tail, the file). An output that fits
    is given whole, as the command wrote it (the session log redacts it when it is written)."""

    def __init__(self, spill_path: Callable[[], Path]) -> None:
        self._spill_path = spill_path
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._redactor = StreamRedactor()
        self._short: list[str] = []  # all of the text as it came, while it fits the context
        self._short_chars = 0
        self._redacted: list[str] | None = []  # the same redacted, until it no longer fits
        self.long = False
        self.head = ""
        self.tail = ""
        self.chars = 0  # of the redacted output
        self.path: Path | None = None
        self.spill_error = ""
        self.written = 0  # bytes in the spill file
        self.dropped = 0  # bytes over MAX_SPILL_BYTES, not saved
        self._fd: int | None = None
        self.stop_at: float | None = None  # set when the call ends: read until EOF or this time

    def pump(self, fd: int) -> None:
        """Read `fd` until EOF or `stop_at`, then close it. Runs in a thread: blocking reads and file
        writes stay off the event loop."""
        try:
            with selectors.DefaultSelector() as selector:
                selector.register(fd, selectors.EVENT_READ)
                while self.stop_at is None or time.monotonic() < self.stop_at:
                    if not selector.select(0.1):
                        continue
                    data = os.read(fd, _CHUNK)
                    if not data:
                        break
                    self.feed(data)
        finally:
            os.close(fd)
            self.close()

    def feed(self, data: bytes) -> None:
        self._take(self._decoder.decode(data))

    def _take(self, text: str) -> None:
        if not text:
            return
        if not self.long:
            self._short.append(text)
            self._short_chars += len(text)
            if self._short_chars > MAX_OUTPUT:
                self.long, self._short = True, []
        self._add(self._redactor.feed(text))

    def _add(self, text: str) -> None:
        """Redacted text, kept while the output fits; once it does not, its head, tail and spill file."""
        if self._redacted is not None:
            self._redacted.append(text)
            if not self.long:
                return
            text, self._redacted = "".join(self._redacted), None
            self._open_spill()
        if not text:
            return
        self.chars += len(text)
        if len(self.head) < MAX_OUTPUT // 2:
            self.head += text[: MAX_OUTPUT // 2 - len(self.head)]
        self.tail = (self.tail + text)[-(MAX_OUTPUT // 2) :]
        self._spill(text)

    def _open_spill(self) -> None:
        try:
            path = self._spill_path()
            self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            self.path = path
        except OSError as error:
            self.spill_error = f"{type(error).__name__}: {error}"

    def _spill(self, text: str) -> None:
        if self._fd is None:
            return
        data = text.encode("utf-8", errors="replace")
        room = MAX_SPILL_BYTES - self.written
        if len(data) > room:
            self.dropped += len(data) - room
            data = data[:room]
        try:
            while data:
                n = os.write(self._fd, data)
                self.written += n
                data = data[n:]
        except OSError as error:  # a full disk: keep the head and tail, say what was not saved
            self.spill_error = f"{type(error).__name__}: {error}"
            os.close(self._fd)
            self._fd = None

    def close(self) -> None:
        self._take(self._decoder.decode(b"", final=True))
        self._add(self._redactor.flush())
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def text(self, exit_line: str) -> str:
        """What the model sees: the output (or its head and tail, with where the whole of it is), and the
        exit line. Never over MAX_OUTPUT characters, so it is not cut and spilled a second time."""
        if not self.long:
            text = "".join(self._short)
            return text.rstrip("\n") + f"\n{exit_line}" if exit_line else text
        if self.path is None:
            where = f"the whole output could not be saved ({self.spill_error})"
        elif self.dropped or self.spill_error:
            where = f"the first {self.written:,} bytes of the output are in {self.path}: {READ_IT}"
        else:
            where = f"the whole output is in {self.path}: {READ_IT}"
        half = (MAX_OUTPUT - len(where) - len(exit_line) - 80) // 2
        head, tail = self.head[:half], self.tail[-half:]
        note = f"[… {self.chars - len(head) - len(tail):,} characters cut; {where}]"
        text = f"{head}\n{note}\n{tail}"
        return text.rstrip("\n") + f"\n{exit_line}" if exit_line else text
