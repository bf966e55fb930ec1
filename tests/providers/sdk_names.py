"""Every name of an SDK's modules, after a plain import or name by name through the deferred import.

    python -m tests.providers.sdk_names plain ROOT            # JSON: {module: {name: what it is}}
    python -m tests.providers.sdk_names deferred ROOT < PLAIN # JSON: what differs, before and after finish

A value is described by what identifies it without touching it (a lazy proxy's attributes would load it):
a class or function by its module, qualified name and whether that module's name is this very object; a
module by its name; anything else by its type.
"""

from __future__ import annotations

import importlib
import json
import sys
import types
from typing import Any


def describe(value: Any) -> str:
    kind = type(value)
    if issubclass(kind, (type, types.FunctionType)):
        home = sys.modules.get(value.__module__)
        same = home is not None and getattr(home, value.__qualname__, None) is value
        return f"{value.__module__}:{value.__qualname__}:{same}"
    if issubclass(kind, types.ModuleType):
        return f"module {value.__name__}"
    return f"{kind.__module__}.{kind.__qualname__}"


def namespaces(root: str) -> dict[str, dict[str, str]]:
    skip = {"__loader__", "__spec__", "__builtins__", "__cached__"}
    return {
        name: {key: describe(value) for key, value in list(vars(module).items()) if key not in skip}
        for name, module in list(sys.modules.items())
        if module is not None and (name == root or name.startswith(root + "."))
    }


def main(mode: str, root: str) -> dict[str, Any]:
    if mode == "plain":
        importlib.import_module(root)
        return namespaces(root)
    from sagent.lib import deferred_import

    plain: dict[str, dict[str, str]] = json.load(sys.stdin)
    deferred_import.defer(root)
    importlib.import_module(root)
    loaded = sum(1 for name in sys.modules if name == root or name.startswith(root + "."))
    waiting = deferred_import.pending(root)
    before = []
    for name in sorted(plain):  # an order no import of the SDK follows: each name on its own
        module = importlib.import_module(name)
        for key, seen in plain[name].items():
            value = describe(getattr(module, key))
            if value != seen:
                before.append(f"{name}.{key}: {value} (plainly {seen})")
    deferred_import.finish(root)
    after = namespaces(root)
    differ = [f"{name}: {sorted(set(after.get(name, {})) ^ set(names))[:5]}" for name, names in plain.items()]
    return {
        "loaded": loaded,
        "plain": len(plain),
        "waiting": waiting,
        "before": before[:20],
        "after": [d for d, (name, names) in zip(differ, plain.items(), strict=True) if after.get(name) != names][:20],
        "extra": sorted(set(after) - set(plain))[:20],
        "left": deferred_import.pending(root),
        "plain_modules": [
            type(sys.modules[name]).__name__ for name in after if type(sys.modules[name]) is not types.ModuleType
        ][:5],
    }


if __name__ == "__main__":
    json.dump(main(sys.argv[1], sys.argv[2]), sys.stdout)
