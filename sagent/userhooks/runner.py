"""Run one hook command: a shell command line, its JSON input on stdin, its output and exit code back.

The command runs with `/bin/sh -c` in the project directory, in a process group of its own, with
`SAGENT_PROJECT_DIR` (and `CLAUDE_PROJECT_DIR`, for scripts written for Claude Code) set to the project
directory. When it outlives its timeout, or the run that waits for it is interrupted, it is killed with
everything it started: its process group, and (Linux) every process carrying the call's tag in its
environment, which `setsid`, `nohup` and double forks keep (`sagent.tools.processes`, as for Bash). When
it exits, what it left running goes too. Its pipes are read in a thread without blocking, up to
`MAX_OUTPUT` bytes per stream kept and the rest dropped, and only for a moment once its processes are
gone: neither a flood nor a child holding a pipe open can keep the call from returning.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import selectors
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from sagent.tools.base import off_loop
from sagent.tools.processes import (
    TAG_PREFIX,
    become_subreaper,
    end_processes,
    new_token,
    register,
    start_time,
    unregister,
)

MAX_OUTPUT = 256 * 1024
"""Bytes of a hook's stdout (and of its stderr) kept; the rest is read and dropped."""
DRAIN = 0.5
"""Seconds to read what is left in a hook's pipes once its processes are gone."""


@dataclass(frozen=True, slots=True)
class Finished:
    """What a hook command did: its exit code (None when it did not finish), its output, and why it did not
    finish (`failure`: it timed out, or could not start), if so."""

    code: int | None
    stdout: str
    stderr: str
    failure: str = ""


def hook_environment(project_dir: Path, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a hook runs with: sagent's own, and the project directory under both names."""
    env = dict(os.environ if base is None else base)
    env["SAGENT_PROJECT_DIR"] = str(project_dir)
    env["CLAUDE_PROJECT_DIR"] = str(project_dir)
    return env


async def run_command(command: str, payload: bytes, *, cwd: Path, env: Mapping[str, str], timeout: float) -> Finished:
    """Run `command` with `payload` on its stdin; at most `timeout` seconds, then every process of it is
    killed (its process group, and whatever left the group carrying its tag) and the call returns."""
    token = new_token()
    become_subreaper()  # orphans of the hook (a double fork) stay ours to find and reap
    pipes = _Pipes(payload)
    try:
        process = await asyncio.create_subprocess_exec(
            "/bin/sh",
            "-c",
            command,
            stdin=pipes.child_stdin,
            stdout=pipes.child_stdout,
            stderr=pipes.child_stderr,
            cwd=cwd,
            env={**env, f"{TAG_PREFIX}{token}": "1"},
            start_new_session=True,
        )
    except (OSError, ValueError) as error:  # ValueError: a NUL byte in the command
        pipes.close_all()
        return Finished(None, "", "", f"could not start: {getattr(error, 'strerror', None) or error}")
    finally:
        pipes.close_child_ends()
    register(token, process.pid)
    since = start_time(process.pid)
    # A daemon thread of its own (not the loop's small pool, which hooks and Bash calls at once could fill).
    pump = asyncio.ensure_future(off_loop(pipes.pump))
    failure = ""
    try:
        try:
            code: int | None = await asyncio.wait_for(process.wait(), timeout)
        except TimeoutError:
            code, failure = None, f"timed out after {timeout:g} s and was killed"
        # Killed at the timeout; on exit, whatever it left running (a child holding its pipe) goes too.
        await asyncio.shield(_end(token, since, process, pump, pipes))
    except asyncio.CancelledError:  # interrupted while it ran: nothing of it is left running
        await asyncio.shield(_end(token, since, process, pump, pipes))
        raise
    finally:
        unregister(token)
    if failure:
        return Finished(None, "", "", failure)
    return Finished(code, _text(pipes.kept[0]), _text(pipes.kept[1]))


async def _end(
    token: str, since: int | None, process: asyncio.subprocess.Process, pump: asyncio.Future[None], pipes: _Pipes
) -> None:
    """Kill every process of the hook, reap its shell, and read what is left in its pipes for a moment."""
    pipes.stop_at = time.monotonic() + DRAIN
    await off_loop(end_processes, token, process.pid, owned=process.pid, since=since)
    with contextlib.suppress(ProcessLookupError):
        await process.wait()
    await pump


class _Pipes:
    """A hook's three pipes, ours rather than asyncio's (so the hook is done when its shell exits, not when
    the last holder of its stdout does), served by one thread: the payload is written as the hook takes
    it, stdout and stderr read as they come, at most MAX_OUTPUT bytes of each kept, until both end or
    `stop_at`."""

    def __init__(self, payload: bytes) -> None:
        self.child_stdin, self._stdin = os.pipe()
        self._stdout, self.child_stdout = os.pipe()
        self._stderr, self.child_stderr = os.pipe()
        self._payload = memoryview(payload)
        self.kept: tuple[bytearray, bytearray] = (bytearray(), bytearray())
        self.stop_at: float | None = None
        self._child_ends_open = True

    def close_child_ends(self) -> None:
        if self._child_ends_open:
            self._child_ends_open = False
            for fd in (self.child_stdin, self.child_stdout, self.child_stderr):
                os.close(fd)

    def close_all(self) -> None:
        self.close_child_ends()
        for fd in (self._stdin, self._stdout, self._stderr):
            with contextlib.suppress(OSError):
                os.close(fd)

    def pump(self) -> None:
        os.set_blocking(self._stdin, False)
        outputs = {self._stdout: self.kept[0], self._stderr: self.kept[1]}
        try:
            with selectors.DefaultSelector() as selector:
                for fd in outputs:
                    selector.register(fd, selectors.EVENT_READ)
                stdin_open = True
                if self._payload:
                    selector.register(self._stdin, selectors.EVENT_WRITE)
                else:
                    os.close(self._stdin)
                    stdin_open = False
                while outputs and (self.stop_at is None or time.monotonic() < self.stop_at):
                    for key, _ in selector.select(0.05):
                        fd = int(key.fd)
                        if fd == self._stdin:
                            try:
                                self._payload = self._payload[os.write(fd, self._payload[:65536]) :]
                            except BlockingIOError:
                                continue
                            except OSError:  # it exited, or closed its stdin without reading it all
                                self._payload = self._payload[:0]
                            if not self._payload:
                                selector.unregister(fd)
                                os.close(fd)
                                stdin_open = False
                            continue
                        data = os.read(fd, 65536)
                        if not data:
                            selector.unregister(fd)
                            outputs.pop(fd)
                            continue
                        kept = outputs[fd]
                        if len(kept) < MAX_OUTPUT:
                            kept += data[: MAX_OUTPUT - len(kept)]
                if stdin_open:
                    os.close(self._stdin)
        finally:
            for fd in (self._stdout, self._stderr):
                os.close(fd)


def _text(data: bytes | bytearray) -> str:
    return data.decode("utf-8", errors="replace")
