"""Folder trust: which project folders may configure sagent, kept in the user's own config.

A project's files (`.sagent/settings.json`, `.sagent/settings.local.json`, `.mcp.json`,
`.sagent/commands/`) can run commands (hooks, MCP servers), loosen permissions, redirect the model's
endpoint and name the variable whose key is sent there. So they apply only in a folder the user trusted:

    $XDG_CONFIG_HOME/sagent/trusted-folders.json    {"folders": ["/home/me/src/app", ...]}

Folders are stored by real path (symlinks resolved) and a folder inside a trusted one is trusted too. The
file is written whole to a temporary name and renamed (mode 0600), under a lock so two `sagent trust`
calls cannot lose each other's folder; it is read only when it is a regular file the user owns that
nobody else may write, so another account cannot trust folders on the user's behalf. Nothing a project
holds can make it trusted: no environment variable or settings key is consulted beyond XDG_CONFIG_HOME,
and a relative XDG_CONFIG_HOME is ignored (as the XDG spec says), so it cannot point into the project.

Only the standard library is imported: every run reads this file before anything else.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path

TRUST_FILE = "trusted-folders.json"
MAX_BYTES = 1 << 20


class TrustError(Exception):
    """The trust file cannot be read or written; one line naming it and why."""


def config_dir() -> Path:
    """The user's sagent config folder: $XDG_CONFIG_HOME/sagent when that is an absolute path, else
    ~/.config/sagent."""
    base = os.environ.get("XDG_CONFIG_HOME", "")
    if not os.path.isabs(base):
        base = str(Path.home() / ".config")
    return Path(base) / "sagent"


def trust_file() -> Path:
    """Where the trusted folders are kept."""
    return config_dir() / TRUST_FILE


def real(folder: Path | str) -> Path:
    """`folder` as the kernel sees it: absolute, symlinks resolved (as far as they exist)."""
    return Path(os.path.realpath(os.path.abspath(os.path.expanduser(str(folder)))))


def trusted_folders(problems: list[str] | None = None) -> list[Path]:
    """The folders the user trusted, in the order they were added. A trust file that is not safe to
    believe (another owner, writable by others, not a regular file, not the expected JSON) trusts
    nothing; the reason is added to `problems` when given."""
    path = trust_file()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as error:
        if error.errno == errno.ELOOP:
            _note(problems, f"{path}: a symbolic link (only a regular file is believed); no folder is trusted")
        else:
            _note(problems, f"{path}: cannot read it ({error.strerror or error}); no folder is trusted")
        return []
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            _note(problems, f"{path}: not a regular file; no folder is trusted")
            return []
        if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
            _note(problems, f"{path}: owned by another user; no folder is trusted")
            return []
        if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            _note(problems, f"{path}: writable by others (chmod 600 it); no folder is trusted")
            return []
        raw = os.read(fd, MAX_BYTES + 1)
    except OSError as error:
        _note(problems, f"{path}: cannot read it ({error.strerror or error}); no folder is trusted")
        return []
    finally:
        os.close(fd)
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        _note(problems, f"{path}: not valid JSON; no folder is trusted")
        return []
    folders = data.get("folders") if isinstance(data, dict) else None
    if not isinstance(folders, list):
        _note(problems, f'{path}: must hold {{"folders": [...]}}; no folder is trusted')
        return []
    return [Path(f) for f in folders if isinstance(f, str) and os.path.isabs(f)]


def _note(problems: list[str] | None, line: str) -> None:
    if problems is not None:
        problems.append(line)


def trusted_by(folder: Path | str, folders: list[Path] | None = None) -> Path | None:
    """The trusted folder that covers `folder` (itself or a folder above it), or None."""
    target = real(folder)
    for trusted in trusted_folders() if folders is None else folders:
        if target == trusted or trusted in target.parents:
            return trusted
    return None


def is_trusted(folder: Path | str) -> bool:
    """Whether `folder` (by its real path) is a trusted folder or inside one."""
    return trusted_by(folder) is not None


def trust(folder: Path | str) -> tuple[Path, bool]:
    """Trust `folder` (stored by real path); the path and whether it was added (False: already there)."""
    target = real(folder)
    if not target.is_dir():
        raise TrustError(f"{folder}: not a folder")
    with _Locked():
        folders = _folders_to_change()
        if target in folders:
            return target, False
        _write([*folders, target])
    return target, True


def revoke(folder: Path | str) -> bool:
    """Stop trusting `folder` (as given, or its real path); False when it was not in the list."""
    given = Path(os.path.abspath(os.path.expanduser(str(folder))))
    target = real(folder)
    with _Locked():
        folders = _folders_to_change()
        kept = [f for f in folders if f not in (target, given)]
        if len(kept) == len(folders):
            return False
        _write(kept)
    return True


def _folders_to_change() -> list[Path]:
    """The list to edit; TrustError rather than overwrite a file that could not be believed."""
    problems: list[str] = []
    folders = trusted_folders(problems)
    if problems:
        raise TrustError(problems[0].replace("; no folder is trusted", ""))
    return folders


def _write(folders: list[Path]) -> None:
    path = trust_file()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    text = json.dumps({"folders": [str(f) for f in folders]}, indent=2, ensure_ascii=False) + "\n"
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            os.fchmod(fd, 0o600)
            os.write(fd, text.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise TrustError(f"{path}: cannot write it ({error.strerror or error})") from None


class _Locked:
    """An exclusive lock on the config folder's trust lock file while the list is read and rewritten."""

    def __enter__(self) -> None:
        folder = config_dir()
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            self.fd = os.open(folder / f".{TRUST_FILE}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as error:
            raise TrustError(f"{folder}: cannot write there ({error.strerror or error})") from None
        try:
            import fcntl

            fcntl.flock(self.fd, fcntl.LOCK_EX)
        except ImportError:  # no flock (Windows): one writer at a time is the user's care
            pass

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)
