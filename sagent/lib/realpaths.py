"""Real paths: the file the kernel will open for a path, and opening exactly that file.

A permission check on the text of a path can be walked around: `//home/u/.ssh/id_rsa`, `/./`, and above all
`link/../x`, where the kernel follows `link` first and only then goes up, while a textual `normpath` drops
`link/..` without looking. `real_path` resolves a path the way the kernel does (component by component,
a symlink replaced by its target before the next `..`), so a rule or an inside-the-project check decides
on the file that will really be opened.

Between a check and the open, a symlink can be swapped in. `open_real` opens a real path one folder at a
time from `/`, each step relative to the folder already open and with `O_NOFOLLOW`: a real path has no
symlink in it, so if one is found on the way the path changed after the check, and the open is refused.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_WALKS = os.open in os.supports_dir_fd and bool(_NOFOLLOW) and bool(_DIRECTORY)
# A folder on the way is opened only to go on from it: Linux's O_PATH needs no read permission on it, only
# the search permission the kernel's own walk needs (a home folder may be 0711). Elsewhere O_RDONLY, and a
# folder that cannot be read is passed by a plain open checked afterwards (`_open_plain`).
_FOLDER = (getattr(os, "O_PATH", 0) or os.O_RDONLY) | _DIRECTORY | _NOFOLLOW | _CLOEXEC


class PathChanged(OSError):
    """A real path that is no longer real when opened: a symlink appeared in it after it was checked."""


def real_path(path: str, cwd: str) -> str:
    """`path` (absolute, relative to `cwd`, or starting with `~`) as the kernel resolves it: absolute, each
    symlink followed where it stands (so `link/..` is the parent of the link's target), `.`, `..` and
    repeated slashes (a leading `//` too) collapsed. Below a part that does not exist the rest is joined as
    written; a symlink loop is left where it loops (opening it fails)."""
    if path.startswith("~"):
        path = os.path.expanduser(path)
    if os.sep != "/":  # Windows: its own rules (drives, both slashes), as the standard library knows them
        return os.path.realpath(os.path.join(cwd, path))
    resolved, missing, links = "/", False, 0
    pending = [p for p in reversed(os.path.join(cwd, path).split("/")) if p]
    while pending:
        part = pending.pop()
        if part == ".":
            continue
        if part == "..":
            resolved = os.path.dirname(resolved)  # `resolved` holds no link: its parent is the real one
            continue
        candidate = f"{resolved.rstrip('/')}/{part}"
        if missing:  # below a part that does not exist, nothing can be a link
            resolved = candidate
            continue
        try:
            is_link = stat.S_ISLNK(os.lstat(candidate).st_mode)
        except OSError:  # not there (or not searchable): the rest is joined as written
            missing, is_link = True, False
        if not is_link:
            resolved = candidate
            continue
        links += 1
        if links > _MAX_LINKS:  # a loop: left where it loops, so opening it fails as the kernel's would
            return "/".join([candidate, *reversed(pending)])
        target = os.readlink(candidate)
        pending.extend(p for p in reversed(target.split("/")) if p)
        if target.startswith("/"):
            resolved = "/"
    return resolved


_MAX_LINKS = 40  # Linux's limit on the links one path may go through (ELOOP past it)


def open_real(real: str, flags: int, mode: int = 0o666, *, make_parents: bool = False) -> int:
    """A file descriptor for the real path `real` (as `real_path` returns it) opened with `flags`, never
    through a symlink: `PathChanged` when a symlink stands anywhere in it now (it was swapped in after the
    check). `make_parents` creates the missing folders on the way (each checked the same way)."""
    if not os.path.isabs(real):
        raise ValueError(f"not an absolute path: {real!r}")
    if not _WALKS:  # no openat: the plain open, then a check that nothing on the way is a link
        return _open_plain(real, flags, mode)
    parts = [p for p in real.split("/") if p]
    if not parts:
        return os.open("/", flags | _CLOEXEC, mode)
    folder = os.open("/", _FOLDER)
    try:
        for name in parts[:-1]:
            try:
                step = _open_folder(name, folder, real, make_parents)
            except PermissionError:
                if not getattr(os, "O_PATH", 0):
                    return _open_plain(real, flags, mode)  # a folder that can be searched, not read
                raise
            os.close(folder)
            folder = step
        try:
            return os.open(parts[-1], flags | _NOFOLLOW | _CLOEXEC, mode, dir_fd=folder)
        except OSError as error:
            if error.errno == errno.ELOOP or (error.errno == errno.ENOTDIR and flags & _DIRECTORY):
                raise PathChanged(errno.ELOOP, "a symlink is in the way", real) from None
            raise
    finally:
        os.close(folder)


def _open_plain(real: str, flags: int, mode: int) -> int:
    """`real` opened as one path, then checked: still real (no link on the way) once open."""
    fd = os.open(real, flags | _NOFOLLOW | _CLOEXEC, mode)
    if os.path.realpath(real) != os.path.normpath(real):
        os.close(fd)
        raise PathChanged(errno.ELOOP, "a symlink is in the way", real)
    return fd


def _open_folder(name: str, folder: int, real: str, make: bool) -> int:
    try:
        return os.open(name, _FOLDER, dir_fd=folder)
    except FileNotFoundError:
        if not make:
            raise FileNotFoundError(errno.ENOENT, "no such file or directory", real) from None
    except OSError as error:
        # ELOOP: the part is a symlink now; ENOTDIR: a symlink to a file, or a file (not a folder at all).
        if error.errno == errno.ELOOP or (error.errno == errno.ENOTDIR and _is_link(name, folder)):
            raise PathChanged(errno.ELOOP, "a symlink is in the way", real) from None
        raise type(error)(error.errno, error.strerror, real) from None
    with contextlib.suppress(FileExistsError):  # made meanwhile: opened (and checked) below all the same
        os.mkdir(name, 0o777, dir_fd=folder)
    return _open_folder(name, folder, real, False)


def _is_link(name: str, folder: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)
    except OSError:
        return False
