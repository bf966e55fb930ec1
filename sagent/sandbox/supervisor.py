"""The process that lives inside one bubblewrap sandbox for a whole session and runs each command sent to it.

Run as `python -I -S supervisor.py FD [PROXY_SOCKET]` by `sagent.sandbox.live`: standard library only, as
it starts before anything of sagent is importable in the sandbox. FD is a SOCK_SEQPACKET socket to sagent.
Messages are JSON objects, one per packet; a command's output pipe comes with its `run` message as a
file descriptor (SCM_RIGHTS).

Each command runs in a PID namespace of its own, made ahead of time: a *helper* process makes a user and
a PID namespace (`unshare`) and forks the namespace's process 1 (`init`), which waits for the call, starts
its bash, and reaps orphans. Whatever the command starts (`&`, `nohup`, `setsid`, a double fork, `env -i`)
is in that namespace, and when init returns (bash exited, or the call is ended) the kernel kills all of it:
nothing of a call outlives it. A namespace serves one call; the next one is made when a call ends (while
sagent reads the result and the model thinks), so its forks are neither paid by a call nor compete with the
command's start on the CPU; a call that starts while another runs makes its own at once.

With PROXY_SOCKET, the sandbox has no network but its loopback: a listener on 127.0.0.1 (its port is
reported in the `ready` message) carries each connection to sagent's domain proxy through that socket.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import selectors
import signal
import socket
import sys
import threading
import time

CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
MAX_PACKET = 1 << 20


def send(sock: socket.socket, message: dict[str, object], fds: list[int] | None = None) -> None:
    data = json.dumps(message).encode()
    if fds:
        sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, bytes(memoryview(_ints(fds))))])
    else:
        sock.send(data)


def _ints(fds: list[int]) -> bytearray:
    import array

    return bytearray(array.array("i", fds).tobytes())


def receive(sock: socket.socket) -> tuple[dict[str, object] | None, list[int]]:
    """One message and the descriptors that came with it; (None, []) at the end of the stream."""
    import array

    fds = array.array("i")
    data, ancdata, _, _ = sock.recvmsg(MAX_PACKET, socket.CMSG_SPACE(16 * fds.itemsize), socket.MSG_CMSG_CLOEXEC)
    for level, kind, payload in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - (len(payload) % fds.itemsize)])
    if not data:
        for fd in fds:
            os.close(fd)
        return None, []
    return json.loads(data), list(fds)


# ----------------------------------------------------------------------------------------- helper


def _own_namespaces() -> None:
    """A user namespace (mapping this uid and gid to themselves) and a PID namespace for the next child."""
    libc = ctypes.CDLL(None, use_errno=True)
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWPID) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWUSER | CLONE_NEWPID)")
    with open("/proc/self/setgroups", "w") as f:
        f.write("deny")
    with open("/proc/self/uid_map", "w") as f:
        f.write(f"{uid} {uid} 1")
    with open("/proc/self/gid_map", "w") as f:
        f.write(f"{gid} {gid} 1")


def _find(name: str, path: str) -> str:
    if "/" in name:
        return name
    for folder in path.split(os.pathsep):
        candidate = os.path.join(folder or ".", name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return name


def helper(sock: socket.socket) -> None:
    """Make the namespaces, and fork the process 1 of the new PID namespace (`init`), ahead of the call;
    then wait for it. The helper itself stays outside the namespace."""
    try:
        _own_namespaces()
    except OSError as error:
        send(sock, {"op": "broken", "message": f"{error.strerror or error} ({error.filename or 'unshare'})"})
        return
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            init(sock)
        except BaseException:
            code = 1
        os._exit(code)
    sock.close()
    os.waitpid(pid, 0)


def init(sock: socket.socket) -> None:
    """Process 1 of the call's namespace: start its bash, reap what is orphaned, report bash's pid and exit
    status, and end the namespace on request. When it returns, the kernel kills whatever is left in it."""
    send(sock, {"op": "warm"})
    request, fds = receive(sock)
    if request is None:
        return
    call = request["id"]
    try:
        os.chdir(str(request["cwd"]))
        argv = [str(a) for a in request["argv"]]  # type: ignore[attr-defined]
        env = {str(k): str(v) for k, v in request["env"].items()}  # type: ignore[attr-defined]
        actions = [
            (os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
            (os.POSIX_SPAWN_DUP2, fds[0], 1),
            (os.POSIX_SPAWN_DUP2, fds[0], 2),
        ]
        pid = os.posix_spawn(
            str(request.get("program") or _find(argv[0], env.get("PATH", os.defpath))),
            argv,
            env,
            file_actions=actions,
            setsid=True,
            setsigdef=(signal.SIGPIPE, signal.SIGXFSZ),
        )
    except OSError as error:
        send(sock, {"op": "error", "id": call, "message": f"{error.strerror or error}: {error.filename or ''}"})
        return
    finally:
        for fd in fds:
            os.close(fd)
    send(sock, {"op": "started", "id": call, "pid": pid})
    pidfd = os.pidfd_open(pid)
    deadline: float | None = None
    with selectors.DefaultSelector() as selector:
        selector.register(pidfd, selectors.EVENT_READ, "exit")
        selector.register(sock, selectors.EVENT_READ, "sock")
        while True:
            wait = 1.0 if deadline is None else max(min(deadline - time.monotonic(), 1.0), 0)
            events = selector.select(wait)
            _reap_orphans(pid)
            if deadline is not None and time.monotonic() >= deadline:
                with contextlib.suppress(OSError):
                    os.kill(-1, signal.SIGKILL)  # every process of the namespace but this one
                deadline = None
            for key, _ in events:
                if key.data == "exit":
                    _, status = os.waitpid(pid, 0)
                    _end_all()  # nothing of the call is left running when it is reported done
                    send(sock, {"op": "exited", "id": call, "status": os.waitstatus_to_exitcode(status)})
                    return
                message, extra = receive(sock)
                for fd in extra:
                    os.close(fd)
                if message is None:  # the supervisor is gone: so is the call
                    return
                grace = float(message.get("grace") or 0)  # type: ignore[arg-type]
                with contextlib.suppress(OSError):
                    os.kill(-1, signal.SIGTERM if grace > 0 else signal.SIGKILL)
                deadline = time.monotonic() + grace if grace > 0 else None


def _end_all() -> None:
    """SIGKILL every other process of the namespace and collect them all: each dead one's children come to
    this process 1, so waiting until there is no child left means none is left."""
    with contextlib.suppress(OSError):
        os.kill(-1, signal.SIGKILL)
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return
        except InterruptedError:
            continue


def _reap_orphans(bash: int) -> None:
    """Collect the processes orphaned in the namespace (they become this one's children), but not bash,
    whose status is read when its pidfd says it exited."""
    while True:
        try:
            found = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return
        if found is None or found.si_pid == bash:
            return
        with contextlib.suppress(ChildProcessError):
            os.waitpid(found.si_pid, 0)


def _fork_helper(keep: set[int]) -> tuple[int, socket.socket]:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            ours.close()
            for fd in keep:
                with contextlib.suppress(OSError):
                    os.close(fd)
            helper(theirs)
        except BaseException:
            code = 1
        os._exit(code)
    theirs.close()
    return pid, ours


# ------------------------------------------------------------------------------------------ proxy


def _bridge(listener: socket.socket, path: str) -> None:
    """Carry each connection to 127.0.0.1:port in the sandbox to sagent's proxy over its unix socket."""
    while True:
        client, _ = listener.accept()
        try:
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            upstream.connect(path)
        except OSError:
            client.close()
            continue
        for a, b in ((client, upstream), (upstream, client)):
            threading.Thread(target=_pipe, args=(a, b), daemon=True).start()


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(1 << 16):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)
        with contextlib.suppress(OSError):
            source.shutdown(socket.SHUT_RD)


# ----------------------------------------------------------------------------------------- supervisor


def main(argv: list[str]) -> int:
    control = socket.socket(fileno=int(argv[1]))
    ready: dict[str, object] = {"op": "ready"}
    if len(argv) > 2:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        ready["port"] = listener.getsockname()[1]
        threading.Thread(target=_bridge, args=(listener, argv[2]), daemon=True).start()
    keep = {control.fileno()}
    calls: dict[object, tuple[int, socket.socket]] = {}
    first_helper = _fork_helper(keep)
    warm: tuple[int, socket.socket] | None = first_helper
    first, _ = receive(first_helper[1])
    if first is None or first.get("op") != "warm":
        send(control, first or {"op": "broken", "message": "the sandbox's first helper died"})
        return 1
    send(control, ready)
    with selectors.DefaultSelector() as selector:
        selector.register(control, selectors.EVENT_READ, None)
        while True:
            for key, _ in selector.select():
                if key.data is None:
                    message, fds = receive(control)
                    if message is None:
                        for pid, _sock in [*([warm] if warm else []), *calls.values()]:
                            with contextlib.suppress(ProcessLookupError):
                                os.kill(pid, signal.SIGKILL)
                        return 0
                    call = message.get("id")
                    if message.get("op") == "run":
                        if warm is None:  # calls side by side: this one makes its namespace now
                            warm = _fork_helper(keep)
                        pid, sock = warm
                        send(sock, message, fds)
                        for fd in fds:
                            os.close(fd)
                        calls[call] = (pid, sock)
                        selector.register(sock, selectors.EVENT_READ, call)
                        keep.add(sock.fileno())
                        warm = None
                    elif message.get("op") == "end" and call in calls:
                        with contextlib.suppress(OSError):
                            send(calls[call][1], message)
                    continue
                call = key.data
                pid, sock = calls[call]
                message, fds = receive(sock)
                for fd in fds:
                    os.close(fd)
                if message is not None and message.get("op") == "warm":
                    continue
                if message is not None:
                    message["id"] = call
                    send(control, message)
                if message is None or message.get("op") in ("exited", "error", "broken"):
                    if message is None:
                        send(control, {"op": "error", "id": call, "message": "the sandbox's helper died"})
                    selector.unregister(sock)
                    keep.discard(sock.fileno())
                    sock.close()
                    os.waitpid(pid, 0)
                    del calls[call]
                    if warm is None:  # the next call's namespace, made while sagent and the model go on
                        warm = _fork_helper(keep)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
