"""The methods `dataclasses` generates, compiled once and kept between runs.

Python 3.11 writes the source of every generated method of a dataclass (`__init__`, `__repr__`, `__eq__`,
`__hash__`, a frozen class's `__setattr__` and `__delattr__`) and compiles each one apart: five or six calls
of the compiler per class, about 0.4 ms a class here. sagent's start-up creates some eighty dataclasses (its
content parts, events, settings and snapshots), and those compilations were a third of its own start-up.

The source of a method depends only on the class's fields and options, so its code object is the same in
every run: while the `sagent` command starts (`install`, from `sagent.lib.startup.pause`), `dataclasses`
compiles through a cache keyed by that exact source, and the code objects compiled for new sources are
written back (`remove`, when the start-up is over) to `$XDG_CACHE_HOME/sagent/`, one file per Python
version, as `.pyc` files are kept for modules. A source that is not in the cache is compiled as before,
so a missing, stale or unreadable file costs only the compilations it would have saved.

The file is read only when it belongs to the user running sagent and nobody else may write to it (it
holds code, as a `.pyc` does). It is rewritten whole (to a temporary file renamed over it), never in place,
so two runs saving at once leave one of their versions. It keeps what the runs used, and is trimmed to
what the last run used when it grows past `LIMIT` entries (after upgrades).

Only the command does this; a library user's process keeps `dataclasses` as it is. A run that leaves no
file behind (`--ephemeral`) uses the file but writes none (`save_nothing`).
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import marshal
import os
import sys
import threading
from pathlib import Path
from types import CodeType
from typing import Any

from sagent.lib.xdg import cache_home

LIMIT = 4000  # entries: about three times what a run of any mode uses

_lock = threading.Lock()
_codes: dict[str, CodeType] = {}  # what the file held, then what was compiled
_used: set[str] = set()
_new = False
_installed = False
_saving = True


def path() -> Path:
    """The cache file for this Python (its code objects are specific to the interpreter's version)."""
    version = "-".join(str(n) for n in sys.version_info[:3])
    return cache_home() / "sagent" / f"dataclass-methods-{sys.implementation.name}-{version}.marshal"


def install() -> None:
    """Load the cache file (when it can be trusted) and make `dataclasses` compile through the cache."""
    global _installed
    with _lock:
        if _installed:
            return
        _codes.clear()
        _codes.update(_load(path()))
        _installed = True
    dataclasses.exec = _exec  # type: ignore[attr-defined]  # module global that shadows the builtin


def save_nothing() -> None:
    """Write no cache file from this process (a run that leaves no file behind, `--ephemeral`); what was
    read is still used."""
    global _saving
    _saving = False


def saving() -> bool:
    """Whether this process may leave cache files behind (not after `save_nothing`)."""
    return _saving


def remove() -> None:
    """Give `dataclasses` the builtin `exec` back, and save the cache when this run compiled new methods."""
    global _installed, _new
    with _lock:
        if not _installed:
            return
        _installed = False
        vars(dataclasses).pop("exec", None)
        save = _new and _saving
        _new = False
        keep = _codes if len(_codes) <= LIMIT else {source: _codes[source] for source in _used}
        contents = dict(keep) if save else {}
        _codes.clear()  # the run keeps none of it: the classes hold the functions they were given
        _used.clear()
    if contents:
        with contextlib.suppress(OSError, ValueError):
            _save(path(), contents)


def _exec(source: Any, globals: Any = None, locals: Any = None) -> None:
    """`exec` as `dataclasses` calls it, with the compiled code of a source taken from the cache."""
    global _new
    if not isinstance(source, str):
        builtins.exec(source, globals, locals)
        return
    code = _codes.get(source)
    if code is None:
        # No future flags of this module leak in: the code is what `exec(source)` compiles in `dataclasses`.
        code = compile(source, "<string>", "exec", dont_inherit=True)
        with _lock:
            _codes[source] = code
            _new = True
    _used.add(source)
    builtins.exec(code, globals, locals)


def _load(file: Path) -> dict[str, CodeType]:
    try:
        with open(file, "rb") as stream:
            info = os.fstat(stream.fileno())
            owner = os.getuid() if hasattr(os, "getuid") else info.st_uid
            if info.st_uid != owner or info.st_mode & 0o022:
                return {}
            loaded = marshal.loads(stream.read())
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not isinstance(loaded, dict):
        return {}
    return {k: v for k, v in loaded.items() if isinstance(k, str) and isinstance(v, CodeType)}


def _save(file: Path, codes: dict[str, CodeType]) -> None:
    file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    temporary = file.with_name(f"{file.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(marshal.dumps(codes))
        os.replace(temporary, file)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
