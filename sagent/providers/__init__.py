"""The model protocol, one adapter module per provider, and the providers as library classes.

`from sagent.providers import Anthropic` (or `OpenAI`, `Google`, `Moonshot`, `DashScope`, `MiniMax`,
`LlamaCpp`, `OpenAICompatible`, `Provider`, `ProviderSpec`) resolves lazily, and building a model imports
that provider's SDK then: `import sagent.providers` alone loads no SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sagent.providers.classes import (
        Anthropic,
        DashScope,
        Google,
        LlamaCpp,
        MiniMax,
        Moonshot,
        OpenAI,
        OpenAICompatible,
        Provider,
    )
    from sagent.providers.specs import ProviderSpec


__all__ = [
    "Anthropic",
    "DashScope",
    "Google",
    "LlamaCpp",
    "MiniMax",
    "Moonshot",
    "OpenAI",
    "OpenAICompatible",
    "Provider",
    "ProviderSpec",
]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'sagent.providers' has no attribute {name!r}")
    import importlib

    module = "sagent.providers.specs" if name == "ProviderSpec" else "sagent.providers.classes"
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
