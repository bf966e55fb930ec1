"""Names a package exports without importing their modules until first use (module `__getattr__`)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package`: the name `N` is imported from the module `exports[N]` the
    first time it is asked for and kept in the package (later reads cost nothing); any other name is an
    AttributeError as usual."""

    def load(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    return load
