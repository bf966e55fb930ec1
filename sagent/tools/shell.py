"""Bash: runs a command in a persistent working directory, in its own process group, so a timeout or an
interrupt kills everything the command started."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import tempfile
import uuid
from pathlib import Path
from typing import Any

from sagent.tools.base import MAX_OUTPUT, AnyOrder, ToolContext, ToolError

DEFAULT_TIMEOUT = 120
MAX_TIMEOUT = 600


class Bash(AnyOrder):
    name = "Bash"
    reproducible = True  # its output can be had again: compaction may prune it
    description = (
        "Run a bash command. The working directory persists between calls (a `cd` stays). stdout and "
        f"stderr come back together, with the exit code when it is not 0. Timeout {DEFAULT_TIMEOUT} s by "
        f"default, at most {MAX_TIMEOUT} s (larger values are refused); on timeout the command and all its "
        f"children are killed. Output over {MAX_OUTPUT:,} characters keeps its head and tail, and the full "
        "text is saved to a file whose path is given. No standard input: do not start interactive programs."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "the command line"},
            "timeout": {"type": "integer", "description": "seconds, 1 to 600", "default": DEFAULT_TIMEOUT},
            "description": {"type": "string", "description": "a few words on what it does, for the user"},
        },
        "required": ["command"],
    }

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        timeout = arguments.get("timeout") or DEFAULT_TIMEOUT
        if not 1 <= timeout <= MAX_TIMEOUT:
            raise ToolError(f"timeout must be from 1 to {MAX_TIMEOUT} seconds, got {timeout}")
        if not ctx.cwd.is_dir():
            raise ToolError(f"the working directory {ctx.cwd} no longer exists")
        cwd_file = Path(tempfile.gettempdir()) / f"sagent-cwd-{uuid.uuid4().hex}"
        # An EXIT trap records where the command ended up, even after `exit N`, without touching its output.
        script = f"trap 'pwd -P > \"{cwd_file}\"' EXIT\n{arguments['command']}\n"
        proc = await asyncio.create_subprocess_exec(
            "bash",
            "-c",
            script,
            cwd=ctx.cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            out, _ = await asyncio.wait_for(proc.communicate(), timeout)
        except TimeoutError:
            await _kill_group(proc)
            raise ToolError(f"timed out after {timeout} s; the command and its children were killed") from None
        except asyncio.CancelledError:
            await _kill_group(proc)
            raise
        finally:
            with contextlib.suppress(OSError):
                new_cwd = cwd_file.read_text().strip()
                if new_cwd and Path(new_cwd).is_dir():
                    ctx.cwd = Path(new_cwd)
            cwd_file.unlink(missing_ok=True)
        # The command may have left children in the group (`sleep 99 &`): they go with it.
        await _kill_group(proc, grace=0)
        text = out.decode("utf-8", errors="replace")
        if proc.returncode:
            text = text.rstrip("\n") + f"\nexit code {proc.returncode}"
        return text or "(no output)"  # a long output is cut to head and tail by the agent, all of it kept


async def _kill_group(proc: asyncio.subprocess.Process, grace: float = 2.0) -> None:
    """SIGTERM the process group, then SIGKILL whatever is left after `grace` seconds."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        if sig == signal.SIGTERM and grace:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), grace)
    with contextlib.suppress(ProcessLookupError):
        await proc.wait()
