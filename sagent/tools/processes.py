"""Every process a Bash call starts, found and ended however it tried to leave.

A call's processes are tagged three ways, so that each escape is covered by another:

- a process group (`start_new_session`): what the command starts without `setsid` stays in it;
- an environment variable unique to the call (`SAGENT_CALL_<token>=1`), inherited across `setsid`,
  `nohup`, double forks and nested shells, and read back from `/proc/<pid>/environ` (Linux);
- sagent becomes a child subreaper (Linux `prctl`), so orphans of the call are reparented to it rather
  than to init, and the ones it kills are reaped here instead of lingering as zombies.

A record of each running call (its token and command) is kept in the session folder while it runs, so
that after sagent itself was killed (`kill -9`), the resumed session finds what the dead run left and
ends it (`end_leftovers`).

Not covered: a process that clears or rewrites its environment (`env -i`) *and* leaves the process group;
processes of another user (a setuid program); without `/proc` (macOS, the BSDs) only the process group
is ended and there is no subreaper, so `setsid`, `nohup … &` with a new session, and daemons survive.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import sys
import threading
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

TAG_PREFIX = "SAGENT_CALL_"
PROC = Path("/proc")
_PR_SET_CHILD_SUBREAPER = 36

_subreaper: bool | None = None
_live: dict[str, int] = {}  # token -> process group of the calls running now, for the exit safety net
_live_lock = threading.Lock()


def new_token() -> str:
    """A token unique to one call."""
    return uuid.uuid4().hex


def tagged_environment(token: str) -> dict[str, str]:
    """sagent's environment plus the call's tag. Tags of an enclosing call (sagent run by a Bash call of
    another sagent) are kept, so the outer call ends the inner one's processes too."""
    return {**os.environ, f"{TAG_PREFIX}{token}": "1"}


def become_subreaper() -> bool:
    """Make this process the child subreaper of its descendants (Linux), once; False where unsupported.

    Orphans then reparent to sagent instead of init: a daemon of a Bash call stays findable as ours and is
    reaped by us once killed."""
    global _subreaper
    if _subreaper is None:
        _subreaper = False
        if sys.platform.startswith("linux"):
            import ctypes

            with contextlib.suppress(OSError, AttributeError):
                libc = ctypes.CDLL(None, use_errno=True)
                _subreaper = libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    return _subreaper


def register(token: str, pgid: int) -> None:
    """Note a running call, so that its processes are ended even if sagent exits without finishing it."""
    with _live_lock:
        _live[token] = pgid


def unregister(token: str) -> None:
    with _live_lock:
        _live.pop(token, None)


@atexit.register
def _end_all_at_exit() -> None:
    # A safety net: normally every call ends its processes itself (on completion, timeout or cancel).
    with _live_lock:
        live = list(_live.items())
    for token, pgid in live:
        end_processes(token, pgid, grace=0)


# ----------------------------------------------------------------------------------------- finding


def _environ_has(pid: str, needle: bytes) -> bool:
    try:
        with open(PROC / pid / "environ", "rb") as f:
            environ = f.read()
    except OSError:  # gone, or not ours to read
        return False
    return environ.startswith(needle) or b"\0" + needle in environ


def _stat(pid: str) -> tuple[str, int, int, int] | None:
    """(state, parent pid, process group, start time in clock ticks after boot) of a process, or None when
    it is gone."""
    try:
        raw = (PROC / pid / "stat").read_bytes()
    except OSError:
        return None
    fields = raw[raw.rfind(b")") + 2 :].split()  # the command name may hold spaces and parentheses
    return fields[0].decode(), int(fields[1]), int(fields[2]), int(fields[19])


def start_time(pid: int) -> int | None:
    """When the process started (clock ticks after boot), to tell it from a later one with the same pid."""
    stat = _stat(str(pid))
    return stat[3] if stat else None


def find_processes(token: str, pgid: int | None = None, since: int | None = None) -> list[int]:
    """The live (not zombie) processes carrying the call's tag or in its process group; [] without /proc.
    `since` (the start time of the call's bash) skips older processes, which cannot be the call's, without
    reading their environment."""
    if not PROC.is_dir():
        return []
    needle = f"{TAG_PREFIX}{token}=".encode()
    me = os.getpid()
    found: list[int] = []
    entries: list[str] = []
    with contextlib.suppress(OSError):
        entries = [name for name in os.listdir(PROC) if name.isdigit()]
    for name in entries:
        stat = _stat(name)
        if stat is None or stat[0] in ("Z", "X") or int(name) == me:
            continue
        in_group = pgid is not None and stat[2] == pgid
        if in_group or ((since is None or stat[3] >= since) and _environ_has(name, needle)):
            found.append(int(name))
    return found


def _group_alive(pgid: int | None) -> bool:
    if pgid is None:
        return False
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _signal(pids: list[int], pgid: int | None, sig: signal.Signals) -> None:
    if pgid is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, sig)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


# ------------------------------------------------------------------------------------------ ending


def end_processes(
    token: str, pgid: int | None, *, grace: float = 0.0, owned: int | None = None, since: int | None = None
) -> list[int]:
    """SIGTERM every process of the call, wait up to `grace` seconds, then SIGKILL until none is left, and
    reap the ones reparented to sagent. `owned` is a pid reaped elsewhere (the call's bash, which asyncio
    waits for), so it is left to its owner; `since` as for `find_processes`. Returns the pids found
    (without `owned`). Blocking: run it in a thread from async code."""
    seen: set[int] = set()
    pids = find_processes(token, pgid, since)
    seen.update(pids)
    _signal(pids, pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while grace and time.monotonic() < deadline:
        pids = find_processes(token, pgid, since)
        seen.update(pids)
        if not pids and (PROC.is_dir() or not _group_alive(pgid)):
            break
        time.sleep(0.02)
    # A process may fork between a scan and the kill: scan again until a scan finds nothing.
    for _ in range(200):
        pids = find_processes(token, pgid, since)
        seen.update(pids)
        _signal(pids, pgid, signal.SIGKILL)
        if not pids:
            break
        time.sleep(0.005)
    seen.discard(owned or -1)
    _reap(seen)
    return sorted(seen)


def _reap(pids: set[int], wait: float = 1.0) -> None:
    """Collect the exit status of the killed processes that were reparented to us, so that none stays a
    zombie. Only these pids are waited for: a waitpid(-1) would steal the status of subprocesses other
    code waits for."""
    if not PROC.is_dir():
        return
    pending = set(pids)
    deadline = time.monotonic() + wait
    me = os.getpid()
    while pending and time.monotonic() < deadline:
        for pid in list(pending):
            stat = _stat(str(pid))
            if stat is None:
                pending.discard(pid)
            elif stat[0] in ("Z", "X") and stat[1] == me:
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, os.WNOHANG)
            elif stat[0] in ("Z", "X") and stat[1] not in pids:
                # A zombie of another parent, not one of the call's (those are dying, and their zombies
                # are reparented to us as subreaper): that parent reaps it.
                pending.discard(pid)
        if pending:
            time.sleep(0.01)


# ------------------------------------------------------------------- records for a resumed session


def write_record(folder: Path, token: str, command: str) -> Path | None:
    """Note in the session folder that a call runs (its token and command), until `remove_record`. None
    when the folder cannot be written (the call runs anyway; only its recovery after a crash is lost)."""
    record = {
        "token": token,
        "command": command,
        "owner": os.getpid(),
        "owner_started": start_time(os.getpid()),  # None without /proc
        "started": datetime.now(UTC).isoformat(),
    }
    path = folder / f"{token}.json"
    try:
        from sagent.lib.private import private_dir

        private_dir(folder)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(record, f)
    except OSError:
        return None
    return path


def _owner_alive(record: dict[str, Any]) -> bool:
    pid = record.get("owner")
    if not isinstance(pid, int):
        return False
    started = start_time(pid)  # a pid reused by a later process (even this one) has another start time
    if PROC.is_dir():
        return started is not None and started == record.get("owner_started")
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def end_leftovers(folder: Path, command: str | None) -> tuple[int, list[int]] | None:
    """End what calls of a dead sagent left running, from their records in `folder`. Returns, for the
    records of `command` (the interrupted call), how many were found and the pids ended; None when there
    was no record of it. Records of other calls of the dead run are ended too, and every record of a dead
    owner is removed."""
    if not folder.is_dir():
        return None
    matched = 0
    ended: list[int] = []
    for path in sorted(folder.glob("*.json")):
        try:
            record = json.loads(path.read_text())
            token = record["token"]
        except (OSError, ValueError, KeyError, TypeError):
            path.unlink(missing_ok=True)
            continue
        if _owner_alive(record):
            continue  # a live sagent runs this call; it ends its processes itself
        pids = end_processes(str(token), None)
        path.unlink(missing_ok=True)
        if command is not None and record.get("command") == command:
            matched += 1
            ended += pids
    return (matched, sorted(ended)) if matched else None
