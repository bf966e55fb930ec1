"""The one way a command is started: `await launcher(policy, roots)`, then `await launcher.start(...)`.

The Bash tool (and so the REPL's `!command`, background jobs and sub-agents) starts every command here.
Under a policy that confines, the command runs in the session's live sandbox (sagent.sandbox.live); with
`danger-full-access`, or where the sandbox cannot start and the policy does not require it, it runs as
sagent's own child (said once, on stderr). Either way the caller gets a `Running` with the same contract:
wait for it, or end every process it started.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from sagent.sandbox.bwrap import mark_unavailable, unavailable
from sagent.sandbox.policy import SandboxPolicy

if TYPE_CHECKING:  # the live sandbox is imported only when a command runs in one
    from sagent.sandbox.live import Call, LiveSandbox

_said: set[str] = set()
_said_lock = threading.Lock()


class SandboxRequired(Exception):
    """The policy requires the sandbox (`sandbox.required`) and it cannot start here."""


class SandboxFailed(SandboxRequired):
    """The sandbox for this policy and workspace could not start (the machine can sandbox): the command is
    not run outside it."""


class Running(Protocol):
    """A started command."""

    pid: int
    """Its pid (in the sandbox's own PID namespace when sandboxed)."""

    async def wait(self) -> int:
        """Its exit code (a negative signal number when a signal ended it)."""
        ...

    async def end(self, grace: float) -> None:
        """SIGTERM every process it started, SIGKILL what is left after `grace` seconds, and reap them."""
        ...


class Launcher(Protocol):
    sandboxed: bool
    scratch: Path
    """A folder both the command and sagent can write, for sagent's own small files (where a call's
    working directory ended up)."""

    async def start(self, argv: list[str], cwd: Path, env: dict[str, str], output: int, token: str) -> Running:
        """Start `argv` in `cwd` with `env`, no stdin, stdout and stderr on `output`, in a session of its own."""
        ...


def announce_unavailable(reason: str) -> None:
    """Say once per process, on stderr, that commands run without the sandbox, and why."""
    line = f"sagent: the sandbox cannot start ({reason}); commands run without it (sandbox.required: error instead)"
    with _said_lock:
        if _said:
            return
        _said.add(reason)
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def required_message(reason: str) -> str:
    return f"the sandbox is required (sandbox.required) but cannot start here: {reason}"


def sandbox_state(policy: SandboxPolicy) -> str | None:
    """None when `policy`'s sandbox can run here (or it asks for none), else why it cannot."""
    return unavailable() if policy.confines else None


def confines(policy: SandboxPolicy | None) -> bool:
    """Whether commands run under `policy` are really sandboxed here."""
    return policy is not None and policy.confines and unavailable() is None


async def launcher(policy: SandboxPolicy | None, roots: tuple[Path, ...]) -> Launcher:
    """How to start the next command under `policy`, with `roots` as the workspace. SandboxRequired when
    the policy requires a sandbox that cannot start."""
    if policy is None or not policy.confines:
        return HostLauncher()
    reason = unavailable()
    if reason is None:
        from sagent.sandbox.live import SandboxFailure, forget, sandbox_for

        live = None
        try:
            live = sandbox_for(policy, roots)
            await asyncio.shield(asyncio.wrap_future(live.ready))
            return SandboxLauncher(live)
        except SandboxFailure as error:
            if live is not None:
                forget(live)
            if not error.machine:  # this policy's sandbox failed, not the machine's: the call fails, closed
                raise SandboxFailed(str(error)) from None
            reason = str(error)
            mark_unavailable(reason)
    if policy.required:
        raise SandboxRequired(required_message(reason))
    announce_unavailable(reason)
    return HostLauncher()


# ------------------------------------------------------------------------------------- in the sandbox


class SandboxRun:
    """A command running in the live sandbox."""

    def __init__(self, live: LiveSandbox, call: Call, pid: int) -> None:
        self._live, self._call, self.pid = live, call, pid

    async def wait(self) -> int:
        # Shielded: a timeout or cancel of the waiter must not cancel the record of the exit.
        return await asyncio.shield(asyncio.wrap_future(self._call.exited))

    async def end(self, grace: float) -> None:
        from sagent.sandbox.live import SandboxFailure

        if not self._call.exited.done():  # once bash has exited its namespace is gone: nothing to end
            self._live.end(self._call, grace)
        with contextlib.suppress(SandboxFailure):
            await asyncio.shield(asyncio.wrap_future(self._call.exited))


class SandboxLauncher:
    sandboxed = True

    def __init__(self, live: LiveSandbox) -> None:
        self._live = live
        self.scratch = live.control

    async def start(self, argv: list[str], cwd: Path, env: dict[str, str], output: int, token: str) -> Running:
        from sagent.sandbox.live import SandboxFailure

        try:
            call = self._live.run(argv, cwd, env, output)
            pid = await asyncio.shield(asyncio.wrap_future(call.started))
        except SandboxFailure as error:
            raise OSError(f"the command could not start in the sandbox: {error}") from None
        return SandboxRun(self._live, call, pid)


# -------------------------------------------------------------------------------------- sagent's child


class HostRun:
    """A command run as sagent's child, its processes found by tag (see sagent.tools.processes)."""

    def __init__(self, process: asyncio.subprocess.Process, token: str) -> None:
        from sagent.tools.processes import register, start_time

        self._process, self._token, self.pid = process, token, process.pid
        self._since = start_time(process.pid)  # none of the call's processes is older than its bash
        register(token, process.pid)

    async def wait(self) -> int:
        return await self._process.wait()

    async def end(self, grace: float) -> None:
        from sagent.tools.processes import end_processes

        pid, token, since = self.pid, self._token, self._since
        await asyncio.to_thread(end_processes, token, pid, grace=grace, owned=pid, since=since)
        with contextlib.suppress(ProcessLookupError):
            await self._process.wait()
        self._forget()

    def _forget(self) -> None:
        from sagent.tools.processes import unregister

        unregister(self._token)


class HostLauncher:
    sandboxed = False

    def __init__(self) -> None:
        self.scratch = Path(tempfile.gettempdir())

    async def start(self, argv: list[str], cwd: Path, env: dict[str, str], output: int, token: str) -> Running:
        from sagent.tools.processes import become_subreaper

        become_subreaper()
        process = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=output,
            stderr=output,
            start_new_session=True,
            env=env,
        )
        return HostRun(process, token)
