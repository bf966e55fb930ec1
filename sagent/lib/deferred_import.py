"""Import a package's re-exports when they are first asked for, and the rest while the model thinks.

A provider SDK's `import` was most of the time to a run's first request: `import anthropic` loads some
3,300 modules (0.7 s here with bytecode, 1.3 s compiling from source), because the `__init__` of each of
its packages imports every module the package re-exports (`anthropic.types` alone imports every type of
the API, the Vertex, Bedrock and Foundry clients pull in every beta resource). A first request needs a
small part of it: the client, its HTTP stack, the stream and the error types (about 1,300 modules).

So, for the SDKs a run names (`defer`, from `sagent.providers.prefetch` before it starts the import), a
finder on `sys.meta_path` reads each package `__init__` of the SDK before it runs (its syntax tree: no
code of the SDK runs to decide) and splits it:

- a relative `from .x import A, B` (or `from .x import *` whose names are known without running it: a
  literal `__all__`, or a package of imports only whose submodules are all private) *waits* when no
  statement that runs reads a name it binds, no other statement binds those names, and none is the name of
  one of the package's submodules;
- everything else runs on import, in the file's order, as before. When the code that runs reads the
  module's names dynamically (`locals()`, `globals()`, `vars()`, `__name__`, `__dict__`, `__all__`), every
  name in its literal `__all__` is taken as read (the SDKs set `__module__` on each of them); with no literal
  `__all__` there, or a module-level `__getattr__` or `__dir__`, or a star import whose names are unknown,
  or a syntax tree it cannot read, the package imports as usual.

A package with waiting statements is a module whose class has a `__getattr__`: the first time a name is
asked for that a waiting statement binds, that statement runs (exactly that statement, with its own
imports) and the name is there from then on; `from pkg import submodule` imports the submodule alone, as
Python does for a name the package does not bind; any other name, `dir()`, and a star import without
`__all__` run every waiting statement first. When the last statement has run, the module is a plain
module again, with its own loader. So every name resolves to the same object as after a plain import;
`tests/providers/test_deferred_import.py` compares, for every module of each SDK in uv.lock, every name a
plain import gives with what the deferred import gives, name by name, and then the modules' whole
namespaces after `finish`.

Only what would behave the same is deferred:
- an import that code of the SDK makes inside a `try` (or a `with`), at any depth of the stack, is
  imported as usual: the SDK may act on its failure (an optional dependency such as `aiohttp`), which
  waiting would move elsewhere;
- a waiting statement that fails (a broken install) raises its error each time one of its names is asked
  for, and in `finish`, instead of in the package's import: the SDK's import succeeds where it would have
  failed, and the names that need the broken part fail as its import would have (the background thread
  leaves such a package as it is).
Statements run under Python's import locks (they are imports); two threads asking for the same name run
the same imports, which Python serialises, and bind the same objects.

After the first request has left (`finish_in_background`, from the SDK client's first use), a daemon thread
runs what is still waiting, one statement at a time, and only while the main thread has been waiting on its
event loop's selector for `IDLE` seconds, that is while the model thinks: against a fake server that answers
in a millisecond the rest may never load, and nothing asks for it.

Measured with bytecode (docs/architecture.md, "Start-up", medians): `import anthropic` 700 ms and 3,283
modules, deferred 400 ms and 1,302; `import openai` 330 ms and 838 modules, deferred 160 ms and 403; the
first request of `sagent -p` 718 ms before, 462 ms now (anthropic), 359 and 242 ms (openai). In
google-genai nothing can wait: its `__init__` imports its client, which imports the rest.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import os
import sys
import threading
import time
import types
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from sagent.lib import sdk_threads

if TYPE_CHECKING:
    import ast
    import importlib.abc

IDLE = 0.05  # seconds the main thread must have waited on its event loop before the rest is loaded

_lock = threading.Lock()
_pending: dict[str, types.ModuleType] = {}  # packages with statements still waiting, by name
_roots: list[str] = []
_finder: _Finder | None = None
_finishing = threading.Event()
_DYNAMIC = {"locals", "globals", "vars", "__all__", "__name__", "__dict__", "eval", "exec"}
_PLAN = "__sagent_deferred__"  # the key of a deferred package's plan in its namespace


class _Plan:
    """How a package `__init__` runs: the statements that run on import (one code object), and those that
    wait, each compiled alone with the names it binds."""

    def __init__(self, eager: types.CodeType, waiting: list[tuple[types.CodeType, frozenset[str]]]) -> None:
        self.eager = eager
        self.waiting = waiting  # in the file's order
        self.binder = {name: n for n, (_, names) in enumerate(waiting) for name in names}
        self.done: set[int] = set()


def defer(root: str) -> None:
    """Defer what can wait in the packages of `root` (a package such as "anthropic" or "google.genai")
    imported from now on in this process."""
    global _finder
    with _lock:
        if root not in _roots:
            _roots.append(root)
        if _finder is None:
            _finder = _Finder()
            sys.meta_path.insert(0, _finder)


def pending(root: str) -> list[str]:
    """The packages of `root` with statements still waiting."""
    with _lock:
        return [name for name in _pending if _under(name, [root])]


def finish(root: str) -> None:
    """Run every statement still waiting in the packages of `root`, in this thread."""
    while names := pending(root):
        module = _pending.get(names[0])
        if module is not None:  # unless another thread completed it meanwhile
            _complete(module)


def finish_in_background() -> None:
    """Load what the deferred packages left in a daemon thread (started once per process), one statement at
    a time and only while the main thread has been waiting on its event loop's selector for `IDLE` s."""
    if _finishing.is_set() or not _roots:
        return
    _finishing.set()
    sdk_threads.start(_finish_when_idle, "sagent-finish-imports")  # it stops when the process settles them


# -------------------------------------------------------------------------------------------- the plan


def plan(source: bytes, filename: str, folders: Sequence[str]) -> _Plan | None:
    """The plan for a package's `__init__` (its `source`, from `filename`, its submodules in `folders`),
    or None when nothing in it can wait (the package is then imported as usual)."""
    import ast  # here, in the thread importing the SDK: not on the command's own path

    tree = ast.parse(source, filename)
    body = tree.body
    literal_all = _literal_all(tree)
    binds: list[frozenset[str] | None] = []
    for stmt in body:
        if isinstance(stmt, ast.ImportFrom) and any(a.name == "*" for a in stmt.names):
            binds.append(_star_names(folders, stmt))
        else:
            binds.append(frozenset(_bound(stmt)))
    if any(names is None for names in binds):
        return None  # a star import whose names are unknown could bind any name
    known = [names or frozenset() for names in binds]
    counts: dict[str, int] = {}
    for names in known:
        for name in names:
            counts[name] = counts.get(name, 0) + 1
    submodules = _submodules(folders)
    candidates = {
        n: names
        for n, (stmt, names) in enumerate(zip(body, known, strict=True))
        if isinstance(stmt, ast.ImportFrom)
        and stmt.level > 0
        and names
        and all(counts[name] == 1 and name not in submodules for name in names)
    }
    read: set[str] = set()
    for n, stmt in enumerate(body):
        if n not in candidates:
            read.update(
                node.id for node in ast.walk(stmt) if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store)
            )
            if known[n] & {"__getattr__", "__dir__"}:
                return None
    if read & _DYNAMIC:
        if literal_all is None:
            return None
        read.update(literal_all)
    waiting = sorted(n for n, names in candidates.items() if not names & read)
    if not waiting:
        return None
    eager = ast.Module([stmt for n, stmt in enumerate(body) if n not in waiting], type_ignores=[])
    return _Plan(
        compile(eager, filename, "exec", dont_inherit=True),
        [
            (compile(ast.Module([body[n]], type_ignores=[]), filename, "exec", dont_inherit=True), known[n])
            for n in waiting
        ],
    )


def _bound(stmt: ast.stmt) -> set[str]:
    """The names a statement binds in its module (anywhere in it: under an `if`, a `try`, a loop)."""
    import ast

    names: set[str] = set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            continue
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).partition(".")[0] for a in node.names if a.name != "*")
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
    return names


def _literal_all(tree: ast.Module) -> list[str] | None:
    import ast

    for stmt in tree.body:
        if (
            isinstance(stmt, ast.Assign)
            and [t.id for t in stmt.targets if isinstance(t, ast.Name)] == ["__all__"]
            and isinstance(stmt.value, (ast.List, ast.Tuple))
            and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in stmt.value.elts)
        ):
            return [e.value for e in stmt.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return None


def _submodules(folders: Sequence[str]) -> set[str]:
    names: set[str] = set()
    for folder in folders:
        try:
            entries = os.listdir(folder)
        except OSError:
            continue
        names.update(e.partition(".")[0] for e in entries if e.endswith(".py") or "." not in e)
    return names


def _star_names(folders: Sequence[str], stmt: ast.ImportFrom) -> frozenset[str] | None:
    """The names `from .module import *` binds, when they are known without running it: its literal
    `__all__`, or the public names bound by a module (or a package whose submodules are all private) made
    of imports, assignments and definitions; None otherwise."""
    import ast

    if stmt.level != 1 or not stmt.module or len(folders) != 1:
        return None
    base = os.path.join(folders[0], *stmt.module.split("."))
    is_package = os.path.isfile(os.path.join(base, "__init__.py"))
    try:
        with open(os.path.join(base, "__init__.py") if is_package else base + ".py", "rb") as file:
            tree = ast.parse(file.read())
    except (OSError, SyntaxError, ValueError):
        return None
    listed = _literal_all(tree)
    if listed is not None:
        return frozenset(listed)
    if is_package and any(not name.startswith("_") for name in _submodules([base])):
        return None  # a public submodule imported by then would be bound too
    simple = (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign, ast.FunctionDef, ast.ClassDef)
    names: set[str] = set()
    for n, node in enumerate(tree.body):
        if n == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue
        if not isinstance(node, simple) or (
            isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names)
        ):
            return None
        names.update(name for name in _bound(node) if not name.startswith("_"))
    return frozenset(names)


# -------------------------------------------------------------------------------------------- at run time


class _Deferred(types.ModuleType):
    """A package with statements waiting: the one that binds a name runs when the name is asked for."""

    def __getattr__(self, name: str) -> Any:
        plan: _Plan | None = self.__dict__.get(_PLAN)
        n = plan.binder.get(name) if plan is not None else None
        if plan is not None and n is not None:
            _run(self, plan, n)
        elif name.startswith("__") and name.endswith("__") and name != "__all__":
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        elif importlib.machinery.PathFinder.find_spec(f"{self.__name__}.{name}", self.__path__) is not None:
            return importlib.import_module(f"{self.__name__}.{name}")
        else:
            _complete(self)
        return types.ModuleType.__getattribute__(self, name)

    def __dir__(self) -> list[str]:
        _complete(self)
        return sorted(self.__dict__)


def _run(module: types.ModuleType, plan: _Plan, n: int) -> None:
    if n not in plan.done:
        exec(plan.waiting[n][0], module.__dict__)
        plan.done.add(n)
        if len(plan.done) == len(plan.waiting):
            _complete(module)


def _complete(module: types.ModuleType) -> None:
    """Run every statement still waiting in `module`, then make it a plain module with its own loader."""
    plan: _Plan | None = module.__dict__.get(_PLAN)
    if plan is None:
        return
    for n in range(len(plan.waiting)):
        _run(module, plan, n)
    spec = module.__spec__
    loader: Any = spec.loader if spec is not None else None
    if spec is not None and isinstance(loader, _Loader):
        spec.loader = module.__loader__ = loader.loader
    module.__class__ = types.ModuleType
    module.__dict__.pop(_PLAN, None)
    with _lock:
        _pending.pop(module.__name__, None)


def _finish_when_idle() -> None:
    main = threading.main_thread().ident
    quiet_since: float | None = None
    while not sdk_threads.stopping.is_set():
        frame = sys._current_frames().get(main) if main is not None else None
        if frame is None:
            return  # the main thread is over
        code = frame.f_code
        if code.co_name in ("select", "poll") and code.co_filename.endswith("selectors.py"):
            now = time.monotonic()
            quiet_since = quiet_since or now
            if now - quiet_since >= IDLE:
                if not _step():
                    return
                continue
        else:
            quiet_since = None
        time.sleep(0.01)


def _step() -> bool:
    """Run the next statement still waiting in any deferred package; False when none is left."""
    with _lock:
        modules = list(_pending.values())
    for module in modules:
        plan: _Plan | None = module.__dict__.get(_PLAN)
        left = [n for n in range(len(plan.waiting)) if n not in plan.done] if plan is not None else []
        try:
            if left and plan is not None:
                _run(module, plan, left[0])
            else:
                _complete(module)
        except Exception:
            with _lock:
                _pending.pop(module.__name__, None)
        return True
    return False


class _Loader:
    """The package's own loader, which runs only the statements of its `__init__` that do not wait."""

    def __init__(self, loader: importlib.machinery.SourceFileLoader, plan: _Plan) -> None:
        self.loader = loader
        self.plan = plan

    def __getattr__(self, name: str) -> Any:
        return getattr(self.loader, name)  # resources, source: the package's own loader answers

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        module.__dict__[_PLAN] = self.plan
        module.__class__ = _Deferred
        with _lock:
            _pending[module.__name__] = module
        exec(self.plan.eager, module.__dict__)


class _Finder:
    """Finds a package of a deferred SDK as the other finders do, and gives it `_Loader` when its
    `__init__` has statements that can wait."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not _under(fullname, _roots) or _guarded():
            return None
        spec: importlib.machinery.ModuleSpec | None = None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None) if finder is not self else None
            spec = find(fullname, path, target) if find is not None else None
            if spec is not None:
                break
        loader = spec.loader if spec is not None else None
        if spec is None or spec.origin is None or spec.submodule_search_locations is None:
            return spec
        if not isinstance(loader, importlib.machinery.SourceFileLoader):
            return spec
        try:
            made = plan(loader.get_data(spec.origin), spec.origin, spec.submodule_search_locations)
        except Exception:
            return spec
        if made is not None:
            spec.loader = cast("importlib.abc.Loader", _Loader(loader, made))
        return spec


def _under(name: str, roots: Sequence[str]) -> bool:
    return any(name == root or name.startswith(root + ".") for root in roots)


def _guarded() -> bool:
    """Whether code of a deferred SDK on the stack is importing inside a `try` (or a `with`)."""
    import dis

    parse = getattr(dis, "_parse_exception_table", None)
    frame: types.FrameType | None = sys._getframe(2)
    while frame is not None:
        name = frame.f_globals.get("__name__")
        if isinstance(name, str) and _under(name, _roots):
            if parse is None:
                return True  # an interpreter whose handlers this cannot read: defer nothing there
            offset = frame.f_lasti
            if any(entry.start <= offset < entry.end for entry in parse(frame.f_code)):
                return True
        frame = frame.f_back
    return False
