"""Run one hook command: a shell command line, its JSON input on stdin, its output and exit code back.

The command runs with `/bin/sh -c` in the project directory, in a process group of its own, with
`SAGENT_PROJECT_DIR` (and `CLAUDE_PROJECT_DIR`, for scripts written for Claude Code) set to the project
directory. When it outlives its timeout, or the run that waits for it is interrupted, the whole group is
killed: a hook's children do not outlive it. Its output is kept up to `MAX_OUTPUT` bytes per stream and
read to the end, so a chatty hook can neither exhaust memory nor block on a full pipe.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

MAX_OUTPUT = 256 * 1024
"""Bytes of a hook's stdout (and of its stderr) kept; the rest is read and dropped."""


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
    """Run `command` with `payload` on its stdin; at most `timeout` seconds, then its process group is killed."""
    try:
        process = await asyncio.create_subprocess_shell(
            command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            env=dict(env),
            start_new_session=True,
        )
    except OSError as error:
        return Finished(None, "", "", f"could not start: {error.strerror or error}")
    try:
        async with asyncio.timeout(timeout):
            reading = asyncio.gather(_read(process.stdout), _read(process.stderr), _feed(process, payload))
            stdout, stderr, _ = await reading
            code = await process.wait()
    except TimeoutError:
        _kill_group(process)
        await process.wait()
        return Finished(None, "", "", f"timed out after {timeout:g} s and was killed")
    except BaseException:  # interrupted (cancelled) while it ran: nothing of it is left running
        _kill_group(process)
        raise
    return Finished(code, _text(stdout), _text(stderr))


async def _feed(process: asyncio.subprocess.Process, payload: bytes) -> None:
    stdin = process.stdin
    if stdin is None:
        return
    # A hook that does not read its input may exit before taking it: that is not an error.
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stdin.write(payload)
        await stdin.drain()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stdin.close()


async def _read(stream: asyncio.StreamReader | None) -> bytes:
    if stream is None:
        return b""
    kept: list[bytes] = []
    size = 0
    while chunk := await stream.read(65536):
        if size < MAX_OUTPUT:
            kept.append(chunk[: MAX_OUTPUT - size])
        size += len(chunk)
    return b"".join(kept)


def _kill_group(process: asyncio.subprocess.Process) -> None:
    if process.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")
