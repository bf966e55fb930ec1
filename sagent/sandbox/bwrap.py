"""Bubblewrap on Linux: whether it can start here (probed once per process), and the command line that
builds a policy's sandbox.

`SAGENT_BWRAP` names the bwrap binary to use (default: `bwrap` on PATH); pointing it at a missing file is
how tests, and users who want to see it, get the "cannot start" path.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

from sagent.sandbox.policy import PROTECTED_NAMES, SandboxPolicy, expand

_probed: dict[str, str | None] = {}  # bwrap path -> None when it works, else why not
_lock = threading.Lock()
_probe_lock = threading.Lock()
# Sockets of programs outside the sandbox that would run what they are told (a terminal multiplexer, an
# X server, ssh-agent, a desktop bus): hidden where they are when the sandbox starts.
HIDDEN_IN_TMP = (".X11-unix", ".ICE-unix", "tmux-", "ssh-", "vscode-", ".font-unix", "screen")
HIDDEN_VARIABLES = (
    "SSH_AUTH_SOCK",
    "DBUS_SESSION_BUS_ADDRESS",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "TMUX",
    "TMUX_PANE",
    "STY",
    "XDG_RUNTIME_DIR",
    "VSCODE_IPC_HOOK_CLI",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
)


def bwrap_path() -> str | None:
    """The bubblewrap program: `SAGENT_BWRAP` when set, else `bwrap` on PATH (looked up once per PATH, as
    every Bash call asks)."""
    chosen = os.environ.get("SAGENT_BWRAP")
    if chosen is not None:
        return chosen if os.path.isfile(chosen) and os.access(chosen, os.X_OK) else None
    return which_on("bwrap", os.environ.get("PATH"))


@functools.lru_cache(maxsize=32)
def which_on(name: str, path: str | None) -> str | None:
    """Where the program `name` is on `path` (`shutil.which`), looked up once for each: every Bash call asks
    for bwrap, and for the program it runs in the sandbox."""
    return shutil.which(name, path=path)


def unavailable() -> str | None:
    """Why the sandbox cannot start on this machine, or None when it can. Probed once per process (one
    bwrap run, a few milliseconds), then cached; `mark_unavailable` records a later failure."""
    if not sys.platform.startswith("linux"):
        return f"no sandbox for {sys.platform} yet (Linux uses bubblewrap; macOS Seatbelt is not built)"
    path = bwrap_path()
    key = _cache_key(path)
    with _probe_lock:  # one probe at a time: a second caller waits for the first one's answer
        with _lock:
            if key in _probed:
                return _probed[key]
        if path is None:
            found = os.environ.get("SAGENT_BWRAP")
            reason: str | None = f"{found} is not an executable" if found else "bubblewrap (bwrap) is not installed"
        else:
            reason = _probe(path)
        with _lock:
            _probed.setdefault(key, reason)
            return _probed[key]


def probe_soon() -> None:
    """Start the probe in a thread now, so that its few milliseconds overlap the rest of a run's start."""
    if sys.platform.startswith("linux"):
        threading.Thread(target=unavailable, name="sagent-sandbox-probe", daemon=True).start()


def mark_unavailable(reason: str) -> None:
    with _lock:
        _probed[_cache_key(bwrap_path())] = reason


def _cache_key(path: str | None) -> str:
    """What a probe's answer is kept under: the binary found, else what was asked for (a `SAGENT_BWRAP` that
    names no program, or none on PATH), so each answer names what it was about."""
    if path is not None:
        return path
    chosen = os.environ.get("SAGENT_BWRAP")
    return f"missing:{chosen}" if chosen is not None else "missing"


def _probe(path: str) -> str | None:
    args = [path, "--unshare-all", "--die-with-parent", "--new-session", "--ro-bind", "/", "/"]
    args += ["--dev", "/dev", "--proc", "/proc", "--", "/bin/sh", "-c", "exit 0"]
    try:
        done = subprocess.run(args, stdin=subprocess.DEVNULL, capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError) as error:
        return f"bwrap cannot run ({error})"
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        return "bwrap cannot create its namespaces" + (f" ({said[-1]})" if said else "")
    return None


def bwrap_args(policy: SandboxPolicy, roots: tuple[Path, ...], control: Path) -> list[str]:
    """bwrap's arguments (without the command) for `policy`, with `roots` (the workspace) writable in
    workspace-write and `control` (sagent's folder for the sandbox's files) writable in every mode."""
    args = ["--unshare-all", "--die-with-parent", "--new-session"]
    if policy.full_network:
        args.append("--share-net")
    args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/run"]
    if policy.full_network:  # the resolver's file often lives under /run
        resolv = Path("/etc/resolv.conf").resolve()
        if resolv.is_relative_to("/run") and resolv.exists():
            args += ["--ro-bind", str(resolv), str(resolv)]
    writable: list[Path] = []
    tmp = Path("/tmp")
    if policy.mode == "workspace-write":
        writable += [tmp]
        if os.environ.get("TMPDIR") and Path(os.environ["TMPDIR"]).is_dir():
            writable.append(Path(os.environ["TMPDIR"]).resolve())
        writable += [r.resolve() for r in roots if r.is_dir()]  # a folder removed since is no root
        writable += [expand(r).resolve() for r in policy.writable_roots if expand(r).is_dir()]
    for root in dict.fromkeys(writable):
        args += ["--bind", str(root), str(root)]
    if tmp in writable:
        for entry in _sockets_in(tmp):
            args += ["--tmpfs", str(entry)] if entry.is_dir() else ["--ro-bind", "/dev/null", str(entry)]
    for root in dict.fromkeys(writable):
        for name in PROTECTED_NAMES:
            target = root / name
            if target.exists() and not target.is_symlink():
                args += ["--ro-bind", str(target), str(target)]
    for name in (".bashrc", ".profile", ".bash_profile", ".zshrc", ".gitconfig"):
        target = Path.home() / name
        if target.exists() and any(target.is_relative_to(r) for r in writable):
            args += ["--ro-bind", str(target), str(target)]
    args += ["--bind", str(control), str(control)]
    # Last, so that no writable folder mounted above them shows them again. A folder is covered by an empty
    # read-only one, a file by /dev/null. (A denied folder that holds a writable root is left alone: hiding
    # it would hide the root.)
    empty = control / "empty"
    empty.mkdir(mode=0o555, exist_ok=True)
    for path in _denied(policy):
        if any(r.is_relative_to(path) for r in (*writable, control)):
            continue
        args += ["--ro-bind", str(empty), str(path)] if path.is_dir() else ["--ro-bind", "/dev/null", str(path)]
    return args


def _denied(policy: SandboxPolicy) -> list[Path]:
    """The deny-read paths that exist, each once, by real path."""
    found: dict[Path, None] = {}
    for text in policy.deny_read:
        path = expand(text).resolve()
        if path.exists() and path != Path("/"):
            found[path] = None
    return list(found)


def _sockets_in(tmp: Path) -> list[Path]:
    out = []
    try:
        for entry in tmp.iterdir():
            if entry.name.startswith(HIDDEN_IN_TMP) and not entry.is_symlink():
                out.append(entry)
    except OSError:
        pass
    return out
