"""A sandbox kept alive for a session: one bwrap running the supervisor (see supervisor.py), to which each
command is sent over a socket, so a call costs a message and a spawn instead of a new bwrap (4.5 to 6.5 ms).

One live sandbox exists per (policy, workspace) in a process, shared by the agents that have the same
ones; a policy or workspace that changes gets a new sandbox. At most `MAX_LIVE` idle ones stay up; the
one used longest ago is closed when another is needed (never one with a call running). The sandbox dies
with sagent, however sagent ends: bwrap's `--die-with-parent` kills its namespace, and the supervisor
exits when its socket closes.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import contextlib
import itertools
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from sagent.sandbox.bwrap import HIDDEN_VARIABLES, bwrap_args, bwrap_path, which_on
from sagent.sandbox.policy import SandboxPolicy
from sagent.sandbox.supervisor import receive, send

MAX_LIVE = 8
START_TIMEOUT = 20.0
SUPERVISOR = Path(__file__).with_name("supervisor.py")


class SandboxFailure(Exception):
    """The sandbox could not start, or died: the command did not run."""

    def __init__(self, message: str, *, machine: bool = False) -> None:
        super().__init__(message)
        self.machine = machine
        """True when the machine cannot sandbox at all (no bwrap, namespaces refused), not this policy."""


@dataclass
class Call:
    """One command sent to the sandbox: its pid in the sandbox once started, and its exit code."""

    id: int
    started: concurrent.futures.Future[int] = field(default_factory=concurrent.futures.Future)
    exited: concurrent.futures.Future[int] = field(default_factory=concurrent.futures.Future)


class LiveSandbox:
    """One bwrap with its supervisor, running commands for as long as it is needed."""

    def __init__(self, policy: SandboxPolicy, roots: tuple[Path, ...]) -> None:
        self.policy = policy
        self.roots = roots
        _remove_orphans()
        self.control = Path(tempfile.mkdtemp(prefix=PREFIX))
        (self.control / "owner").write_text(_owner_line(os.getpid()))
        self.scratch = self.control / "tmp"
        self.scratch.mkdir()
        self.ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self.proxy_port: int | None = None
        self._calls: dict[int, Call] = {}
        self.claims = 0  # handed out by `sandbox_for` for a call not sent yet: not to be closed meanwhile
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._proxy = None
        bwrap = bwrap_path()
        if bwrap is None:
            raise SandboxFailure("bubblewrap (bwrap) is not installed", machine=True)
        extra: list[str] = []
        if policy.uses_proxy:
            from sagent.sandbox.proxy import DomainProxy

            self._proxy = DomainProxy(self.control / "proxy.sock", policy.allowed_domains)
            extra = [str(self._proxy.path)]
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._sock = ours
        self._log = open(self.control / "supervisor.log", "wb")  # noqa: SIM115 (kept open while it runs)
        command = [bwrap, *bwrap_args(policy, roots, self.control), "--", sys.executable, "-I", "-S", "-B"]
        command += [str(SUPERVISOR), str(theirs.fileno()), *extra]
        try:
            # Started from the calling thread (the event loop's): bwrap's --die-with-parent follows the
            # thread that started it, which must live as long as sagent does.
            self._process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=self._log,
                pass_fds=(theirs.fileno(),),
                start_new_session=True,
            )
        except OSError as error:
            self.close()
            raise SandboxFailure(f"bwrap cannot run: {error}", machine=True) from None
        finally:
            theirs.close()
        threading.Thread(target=self._read, name="sagent-sandbox", daemon=True).start()

    @property
    def busy(self) -> bool:
        with self._lock:
            return bool(self._calls) or self.claims > 0

    @property
    def alive(self) -> bool:
        return self._process.poll() is None and not (self.ready.done() and self.ready.exception())

    def run(self, argv: list[str], cwd: Path, env: dict[str, str], output: int) -> Call:
        """Start `argv` in the sandbox in `cwd` with `env`, its stdout and stderr on the descriptor `output`."""
        call = Call(next(self._ids))
        with self._lock:
            self._calls[call.id] = call
            self.claims = max(self.claims - 1, 0)
        environment = self.environment(env)
        message = {"op": "run", "id": call.id, "argv": argv, "cwd": str(cwd), "env": environment}
        # Found once here (the sandbox sees the same files, read-only), not on each call in the sandbox, its
        # PATH walked by a cold process; a program not found is left to the sandbox to find and report.
        program = which_on(argv[0], environment.get("PATH")) if "/" not in argv[0] else None
        if program is not None:
            message["program"] = program
        try:
            with self._lock:
                send(self._sock, message, [output])
        except OSError as error:
            with self._lock:
                self._calls.pop(call.id, None)
            raise SandboxFailure(f"the sandbox is gone ({error.strerror or error})") from None
        return call

    def end(self, call: Call, grace: float) -> None:
        """End every process of `call`: SIGTERM, then SIGKILL after `grace` seconds (at once for 0)."""
        with contextlib.suppress(OSError), self._lock:
            send(self._sock, {"op": "end", "id": call.id, "grace": grace})

    def environment(self, env: dict[str, str]) -> dict[str, str]:
        """What a command sees: `env` without the addresses of programs outside the sandbox, with the
        proxy's address when there is one."""
        out = {k: v for k, v in env.items() if k not in HIDDEN_VARIABLES}
        if not self.policy.full_network:  # the user's own proxy is out of reach; sagent's replaces it
            for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
                out.pop(name, None)
                out.pop(name.lower(), None)
        if self.proxy_port is not None:
            address = f"http://127.0.0.1:{self.proxy_port}"
            for name in ("HTTP_PROXY", "HTTPS_PROXY"):
                out[name] = out[name.lower()] = address
        out["SAGENT_SANDBOX"] = self.policy.mode
        if self.policy.mode == "read-only":  # a scratch folder of sagent's, emptied when the sandbox closes
            out["TMPDIR"] = str(self.scratch)
        return out

    def _read(self) -> None:
        while True:
            try:
                message, fds = receive(self._sock)
            except (OSError, ValueError):
                message, fds = None, []
            for fd in fds:
                os.close(fd)
            if message is None:
                break
            op = message.get("op")
            if op == "ready":
                port = message.get("port")
                self.proxy_port = port if isinstance(port, int) else None
                self.ready.set_result(None)
                continue
            if op == "broken" and not self.ready.done():
                said = message.get("message")
                failure = SandboxFailure(f"the sandbox cannot isolate commands: {said}", machine=True)
                self.ready.set_exception(failure)
                continue
            with self._lock:
                ident = message.get("id")
                call = self._calls.get(ident) if isinstance(ident, int) else None
            if call is None:
                continue
            if op == "started":
                _settle(call.started, _number(message.get("pid")))
            elif op == "exited":
                with self._lock:
                    self._calls.pop(call.id, None)
                _settle(call.started, -1)
                _settle(call.exited, _number(message.get("status")))
            else:
                with self._lock:
                    self._calls.pop(call.id, None)
                error = SandboxFailure(str(message.get("message") or message))
                for future in (call.started, call.exited):
                    with contextlib.suppress(concurrent.futures.InvalidStateError):
                        future.set_exception(error)
        # The supervisor is gone: every call still open failed, and the sandbox is not used again.
        said = self._said()
        failure = SandboxFailure("the sandbox could not start or stopped" + (f": {said}" if said else ""))
        if not self.ready.done():
            self.ready.set_exception(failure)
        with self._lock:
            calls, self._calls = list(self._calls.values()), {}
        for call in calls:
            for future in (call.started, call.exited):
                with contextlib.suppress(concurrent.futures.InvalidStateError):
                    future.set_exception(failure)

    def _said(self) -> str:
        with contextlib.suppress(OSError):
            lines = (self.control / "supervisor.log").read_text(errors="replace").strip().splitlines()
            return lines[-1] if lines else ""
        return ""

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.close()
        process = getattr(self, "_process", None)
        if process is not None and process.poll() is None:
            with contextlib.suppress(OSError):
                process.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(2)
        if self._proxy is not None:
            self._proxy.close()
        with contextlib.suppress(OSError):
            self._log.close()
        shutil.rmtree(self.control, ignore_errors=True)


PREFIX = "sagent-sandbox-"
_orphans_removed = False


def _owner_line(pid: int) -> str:
    """The pid and its start time: a later process with the same pid is not the owner."""
    try:
        started = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        started = "?"
    return f"{pid} {started}"


def _remove_orphans() -> None:
    """Once per process: remove the control folders of sandboxes whose sagent died without tidying up
    (`kill -9`), with what a read-only sandbox's scratch $TMPDIR held."""
    global _orphans_removed
    if _orphans_removed:
        return
    _orphans_removed = True
    for folder in Path(tempfile.gettempdir()).glob(PREFIX + "*"):
        try:
            pid_text, _, _ = (folder / "owner").read_text().partition(" ")
            owner_line = (folder / "owner").read_text()
        except OSError:
            continue
        if pid_text.isdigit() and _owner_line(int(pid_text)) != owner_line:
            shutil.rmtree(folder, ignore_errors=True)


def _number(value: object) -> int:
    return value if isinstance(value, int) else -1


def _settle(future: concurrent.futures.Future[int], value: int) -> None:
    with contextlib.suppress(concurrent.futures.InvalidStateError):
        future.set_result(value)


_live: dict[tuple[SandboxPolicy, tuple[Path, ...], str], LiveSandbox] = {}
_live_lock = threading.Lock()


def sandbox_for(policy: SandboxPolicy, roots: tuple[Path, ...]) -> LiveSandbox:
    """The live sandbox for `policy` and the workspace `roots`, started when there is none (or it died)."""
    key = (policy, roots, json.dumps(sorted((k, os.environ.get(k, "")) for k in ("HOME", "TMPDIR"))))
    with _live_lock:
        found = _live.pop(key, None)
        if found is not None and found.alive:
            _live[key] = found  # most recently used last
            found.claims += 1
            return found
        if found is not None:
            found.close()
        idle = [k for k, v in _live.items() if not v.busy]  # least recently used first
        for old in idle[: max(len(_live) - MAX_LIVE + 1, 0)]:
            _live.pop(old).close()  # a sandbox with a call running is never closed under it
        started = LiveSandbox(policy, roots)
        started.claims += 1
        _live[key] = started
        return started


def forget(sandbox: LiveSandbox) -> None:
    with _live_lock:
        for key, value in list(_live.items()):
            if value is sandbox:
                del _live[key]
    sandbox.close()


@atexit.register
def close_all() -> None:
    """Close every live sandbox (also done by the kernel when sagent dies: this only tidies the files)."""
    with _live_lock:
        live = list(_live.values())
        _live.clear()
    for sandbox in live:
        sandbox.close()
