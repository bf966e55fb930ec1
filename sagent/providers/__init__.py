"""The model protocol, one adapter module per provider, and the providers as library classes.

`from sagent.providers import Anthropic` (or `OpenAI`, `Google`, `Moonshot`, `DashScope`, `MiniMax`,
`LlamaCpp`, `SelfHosted`, `OpenAICompatible`, `Provider`, `ProviderSpec`) resolves lazily, and building a model imports
that provider's SDK then: `import sagent.providers` alone loads no SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sagent.lib.lazy import lazy_exports

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
        SelfHosted,
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
    "SelfHosted",
]


_load = lazy_exports(
    __name__,
    {name: "sagent.providers.specs" if name == "ProviderSpec" else "sagent.providers.classes" for name in __all__},
)


def __getattr__(name: str) -> Any:
    return _load(name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
