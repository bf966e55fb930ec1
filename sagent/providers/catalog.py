"""The model catalog: context limits, capabilities and USD prices per million tokens, as data.

Prices come from the providers' public price pages (Anthropic: platform.claude.com/docs pricing, read
2026-11). A model id matches the longest catalog id it starts with, so dated ids
(`claude-sonnet-4-5-20250929`) find their family. A model missing from the table is *unpriced*: its cost is
reported with `priced=False`, never silently billed as $0.
"""

from __future__ import annotations

from dataclasses import dataclass

from sagent.types import Cost, Usage


@dataclass(frozen=True, slots=True)
class ModelInfo:
    id: str
    provider: str
    context_window: int
    max_output: int
    # USD per million tokens.
    input: float
    output: float
    cache_write: float
    cache_read: float
    tools: bool = True
    thinking: bool = False
    images: bool = False
    caching: bool = False


def _claude(id: str, window: int, max_out: int, inp: float, out: float, read_mult: float = 0.1) -> ModelInfo:
    # Anthropic prices 5-minute cache writes at 1.25x input and hits at a fraction of input.
    return ModelInfo(
        id,
        "anthropic",
        window,
        max_out,
        inp,
        out,
        round(inp * 1.25, 6),
        round(inp * read_mult, 6),
        thinking=True,
        images=True,
        caching=True,
    )


CATALOG: tuple[ModelInfo, ...] = (
    _claude("claude-opus-5", 200_000, 64_000, 5.0, 25.0),
    _claude("claude-opus-4-8", 200_000, 64_000, 5.0, 25.0),
    _claude("claude-opus-4-7", 200_000, 64_000, 5.0, 25.0),
    _claude("claude-opus-4-6", 200_000, 128_000, 5.0, 25.0),
    _claude("claude-opus-4-5", 200_000, 64_000, 5.0, 25.0),
    _claude("claude-opus-4-1", 200_000, 32_000, 15.0, 75.0),
    _claude("claude-opus-4", 200_000, 32_000, 15.0, 75.0),
    _claude("claude-sonnet-5-5", 200_000, 64_000, 2.0, 10.0, read_mult=0.05),
    _claude("claude-sonnet-5", 200_000, 64_000, 2.0, 10.0),
    _claude("claude-sonnet-4-6", 200_000, 64_000, 3.0, 15.0),
    _claude("claude-sonnet-4-5", 200_000, 64_000, 3.0, 15.0),
    _claude("claude-sonnet-4", 200_000, 64_000, 3.0, 15.0),
    _claude("claude-3-7-sonnet", 200_000, 64_000, 3.0, 15.0),
    _claude("claude-haiku-4-5", 200_000, 64_000, 1.0, 5.0),
    _claude("claude-3-5-haiku", 200_000, 8_192, 0.8, 4.0),
    # The embedded local model runs on this machine: free, and priced as such on purpose.
    ModelInfo("smollm2", "local", 8_192, 2_048, 0.0, 0.0, 0.0, 0.0),
)

_BY_ID = {m.id: m for m in CATALOG}


def lookup(model_id: str) -> ModelInfo | None:
    """The catalog entry for `model_id`: an exact id, or the longest catalog id it starts with."""
    if model_id in _BY_ID:
        return _BY_ID[model_id]
    best: ModelInfo | None = None
    for info in CATALOG:
        if model_id.startswith(info.id) and (best is None or len(info.id) > len(best.id)):
            best = info
    return best


def cost_of(model_id: str, usage: Usage) -> Cost:
    """The USD cost of `usage` on `model_id`; `priced=False` (and zeros) when the model has no price."""
    info = lookup(model_id)
    if info is None:
        return Cost(priced=False)
    per = 1_000_000
    return Cost(
        input=usage.input_tokens * info.input / per,
        output=usage.output_tokens * info.output / per,
        cache_read=usage.cache_read_tokens * info.cache_read / per,
        cache_write=usage.cache_write_tokens * info.cache_write / per,
    )
