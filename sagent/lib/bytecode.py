"""The modules the `sagent` command runs, compiled once and kept in the user's cache where Python keeps no
bytecode.

With PYTHONDONTWRITEBYTECODE set (as many containers and this project's own environment set it), Python
reads a module's `.pyc` from `__pycache__` but never writes one. Unless the installer compiled them
(`pip` does; `uv` only with `--compile-bytecode`), every `sagent` process compiled the SDKs from source
(the first request took 1.3 s instead of 0.5 s), and nothing compiles a checkout installed in editable
mode, so its own 250 modules were compiled every time too: measured in docs/architecture.md ("Start-up").

So while the `sagent` command starts (`install`, from `sagent.lib.startup.pause`, and only when
`sys.dont_write_bytecode` is set), the modules it imports from source files load through a loader that
looks for their bytecode where Python would (`__pycache__`), then in `$XDG_CACHE_HOME/sagent/bytecode/`,
and compiles the source only when neither is current (the source's modification time and size, as a `.pyc`
records them). The first run pays what every run paid before; the next ones do not.
What a run compiled is written there as the process exits (`atexit`, which the command's quick exit runs
too), so no write competes with a request, and not at all by a run that leaves no file behind
(`--ephemeral`: `codecache.save_nothing`). The user's wish
holds where it matters to them: nothing is written next to the sources.

The files are read only when they belong to the user running sagent and nobody else may write to them
(they hold code); each is written whole to a temporary file renamed over it. Nothing here is required: an
unreadable, stale or foreign file is compiled from source as before.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.machinery
import importlib.util
import marshal
import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import CodeType, ModuleType

from sagent.lib import codecache
from sagent.lib.xdg import cache_home

_lock = threading.Lock()
_compiled: dict[str, tuple[os.stat_result, CodeType]] = {}  # source path -> compiled during the start-up
_finder: _Finder | None = None


def folder() -> Path:
    """Where the bytecode is kept, for this interpreter (its bytecode is specific to its version)."""
    return cache_home() / "sagent" / "bytecode" / (sys.implementation.cache_tag or "python")


def install() -> None:
    """Load `sagent`'s modules through the cache from now on, when Python writes no bytecode itself."""
    global _finder
    with _lock:
        if _finder is not None or not sys.dont_write_bytecode or sys.implementation.cache_tag is None:
            return
        _finder = _Finder()
        sys.meta_path.insert(0, _finder)
    atexit.register(_flush)


def _flush() -> None:
    """Write what this run compiled (at exit: nothing competes with a request), unless it may not."""
    with _lock:
        compiled = dict(_compiled)
        _compiled.clear()
    if not codecache.saving():  # a run that leaves no file behind (`--ephemeral`)
        return
    for source, (stat, code) in compiled.items():
        with contextlib.suppress(OSError, ValueError):
            _write(_path(source), stat, code)


def _path(source: str) -> Path:
    return folder().joinpath(*Path(os.path.abspath(source)).parts[1:]).with_suffix(".pyc")


def _header(stat: os.stat_result) -> bytes:
    """A `.pyc` header as Python writes one: magic, no flags, the source's modification time and size."""
    mtime, size = int(stat.st_mtime) & 0xFFFFFFFF, stat.st_size & 0xFFFFFFFF
    return importlib.util.MAGIC_NUMBER + bytes(4) + mtime.to_bytes(4, "little") + size.to_bytes(4, "little")


def _read(path: str | Path, stat: os.stat_result, trusted_only: bool) -> CodeType | None:
    try:
        with open(path, "rb") as file:
            if trusted_only:
                info = os.fstat(file.fileno())
                if info.st_uid != os.getuid() or info.st_mode & 0o022:
                    return None
            data = file.read()
    except OSError:
        return None
    if data[:16] != _header(stat):
        return None
    try:
        code = marshal.loads(data[16:])
    except (EOFError, ValueError, TypeError):
        return None
    return code if isinstance(code, CodeType) else None


def _write(path: Path, stat: os.stat_result, code: CodeType) -> None:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as file:
            file.write(_header(stat) + marshal.dumps(code))
        os.replace(temporary, path)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


class _Loader(importlib.machinery.SourceFileLoader):
    """A module's source loader that also reads (and, through `save`, keeps) its bytecode in the cache."""

    def get_code(self, fullname: str) -> CodeType:
        source = self.get_filename(fullname)
        try:
            stat = os.stat(source)
        except OSError:
            return super().get_code(fullname)  # type: ignore[return-value]  # the loader reports it
        code = _read(importlib.util.cache_from_source(source), stat, trusted_only=False)
        if code is None and hasattr(os, "getuid"):
            code = _read(_path(source), stat, trusted_only=True)
        if code is None:
            code = self.source_to_code(self.get_data(source), source)
            with _lock:
                _compiled[source] = (stat, code)
        return code


class _Finder:
    """Finds modules as the path finder does, and gives those loaded from source files `_Loader`."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is not None and type(spec.loader) is importlib.machinery.SourceFileLoader and spec.origin:
            spec.loader = _Loader(fullname, spec.origin)
        return spec
