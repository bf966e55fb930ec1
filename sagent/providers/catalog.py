"""The model catalog: context limits, capabilities and USD prices per million tokens, as data.

Prices are the standard (non-batch, short-context tier) rates from the providers' public price pages, read
2026-11: Anthropic (platform.claude.com pricing), OpenAI (openai.com/api/pricing), Google
(ai.google.dev/gemini-api/docs/pricing), Moonshot (platform.moonshot.ai), Alibaba Model Studio
(international), MiniMax. Where a provider charges nothing extra to write its cache, `cache_write` equals
the input price. A model id matches its catalog entry exactly (case-insensitively) or with a date or
version suffix (`claude-sonnet-4-5-20250929`, `gpt-5-2025-08-07`, `-latest`). Any other id is *unpriced*:
its cost is reported with `priced=False`, never silently billed as $0 or at a sibling model's price.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from decimal import Decimal

from sagent.providers.specs import SPECS
from sagent.types import Cost, Usage, usd


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
    long_context: bool = False
    """A Claude model on its 1M-token context (`+1m`): a request whose prompt passes 200K tokens costs more."""


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


def _priced(
    provider: str,
    id: str,
    window: int,
    max_out: int,
    inp: float,
    out: float,
    cached: float | None,
    *,
    thinking: bool = True,
    images: bool = True,
    cache_write: float | None = None,
) -> ModelInfo:
    """An entry for a provider whose cache costs nothing extra to write (unless `cache_write` says so);
    `cached=None` means the model has no cache discount."""
    return ModelInfo(
        id,
        provider,
        window,
        max_out,
        inp,
        out,
        cache_write if cache_write is not None else inp,
        cached if cached is not None else inp,
        thinking=thinking,
        images=images,
        caching=cached is not None,
    )


def _openai(id: str, window: int, max_out: int, inp: float, out: float, cached: float | None, **kw: bool) -> ModelInfo:
    return _priced("openai", id, window, max_out, inp, out, cached, **kw)


def _google(id: str, inp: float, out: float, cached: float) -> ModelInfo:
    return _priced("google", id, 1_048_576, 65_536, inp, out, cached)


_GPT5 = (400_000, 128_000)
_GPT41 = (1_047_576, 32_768)

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
    # gpt-5.5: $5 in, $0.50 cached, $30 out per million below 272K input (developers.openai.com/api/docs/pricing,
    # as quoted 2026-11; a longer prompt is billed at about twice the input rate, which the catalog does not model).
    _openai("gpt-5.5", 1_050_000, 128_000, 5.00, 30.00, 0.50),
    _openai("gpt-5.4", *_GPT5, 2.50, 15.00, 0.25),
    _openai("gpt-5.4-mini", *_GPT5, 0.75, 4.50, 0.075),
    _openai("gpt-5.4-nano", *_GPT5, 0.20, 1.25, 0.02),
    _openai("gpt-5.2", *_GPT5, 1.75, 14.00, 0.175),
    _openai("gpt-5.2-pro", *_GPT5, 21.00, 168.00, None),
    _openai("gpt-5.1", *_GPT5, 1.25, 10.00, 0.125),
    _openai("gpt-5.1-codex", *_GPT5, 1.25, 10.00, 0.125),
    _openai("gpt-5.1-codex-mini", *_GPT5, 0.25, 2.00, 0.025),
    _openai("gpt-5", *_GPT5, 1.25, 10.00, 0.125),
    _openai("gpt-5-codex", *_GPT5, 1.25, 10.00, 0.125),
    _openai("gpt-5-pro", *_GPT5, 15.00, 120.00, None),
    _openai("gpt-5-mini", *_GPT5, 0.25, 2.00, 0.025),
    _openai("gpt-5-nano", *_GPT5, 0.05, 0.40, 0.005),
    _openai("gpt-4.1", *_GPT41, 2.00, 8.00, 0.50, thinking=False),
    _openai("gpt-4.1-mini", *_GPT41, 0.40, 1.60, 0.10, thinking=False),
    _openai("gpt-4.1-nano", *_GPT41, 0.10, 0.40, 0.025, thinking=False),
    _openai("gpt-4o", 128_000, 16_384, 2.50, 10.00, 1.25, thinking=False),
    _openai("gpt-4o-mini", 128_000, 16_384, 0.15, 0.60, 0.075, thinking=False),
    _openai("o3", 200_000, 100_000, 2.00, 8.00, 0.50),
    _openai("o4-mini", 200_000, 100_000, 1.10, 4.40, 0.275),
    _google("gemini-3.1-pro-preview", 2.00, 12.00, 0.20),
    _google("gemini-3-flash-preview", 0.50, 3.00, 0.05),
    _google("gemini-3.1-flash-lite", 0.25, 1.50, 0.025),
    # kimi-k2.6: $0.95 a cache miss, $0.16 a hit, $4.00 out (Moonshot's list price, read 2026-11 as quoted alike
    # by Cloudflare's Workers AI model page and others; platform.moonshot.ai/docs/pricing).
    _priced("moonshot", "kimi-k2.6", 262_144, 32_768, 0.95, 4.00, 0.16),
    _priced("moonshot", "kimi-k2-thinking", 262_144, 32_768, 0.60, 2.50, 0.15, images=False),
    _priced("moonshot", "kimi-k2-0905-preview", 262_144, 32_768, 0.60, 2.50, 0.15, thinking=False, images=False),
    _priced("moonshot", "kimi-k2-turbo-preview", 262_144, 32_768, 1.15, 8.00, 0.15, thinking=False, images=False),
    _priced("dashscope", "qwen3-coder-plus", 1_000_000, 65_536, 1.00, 5.00, 0.20, thinking=False, images=False),
    _priced("dashscope", "qwen3-max", 262_144, 65_536, 1.20, 6.00, 0.24, thinking=False, images=False),
    _priced("dashscope", "qwen-plus", 1_000_000, 32_768, 0.40, 1.20, 0.08, images=False),
    _priced("dashscope", "qwen-flash", 1_000_000, 32_768, 0.05, 0.40, 0.01, images=False),
    _priced("minimax", "minimax-m2", 204_800, 131_072, 0.30, 1.20, 0.03, cache_write=0.375, images=False),
    # MiniMax-M2.7: $0.30 in, $1.20 out, $0.06 a cache read, $0.375 a cache write
    # (platform.minimax.io/docs/guides/pricing-paygo, read 2026-11).
    _priced("minimax", "minimax-m2.7", 204_800, 131_072, 0.30, 1.20, 0.06, cache_write=0.375, images=False),
    _priced("minimax", "minimax-m2.1", 204_800, 131_072, 0.30, 1.20, 0.03, cache_write=0.375, images=False),
    # The embedded local model runs on this machine: free, and priced as such on purpose.
    ModelInfo("smollm2", "local", 8_192, 2_048, 0.0, 0.0, 0.0, 0.0),
)

# The cheap model of each provider that tools use to read large inputs (WebFetch's question about a page),
# from the provider specs.
SMALL_MODELS = {s.name: s.small_model for s in SPECS if s.small_model}

_BY_ID = {m.id: m for m in CATALOG}
# What may follow a catalog id in a model id of the same model: a date, a version number, or an alias.
_SUFFIX = re.compile(r"^(-\d{8}|-\d{4}-\d{2}-\d{2}|-\d{3}|-latest|@\d{8})$")


# The Claude CLI's model aliases (AnthropicCLI's `--model sonnet`, its default): billed through the CLI with an API
# key, they cost what the model they name costs, the newest of each line in this catalog.
ALIASES = {"sonnet": "claude-sonnet-5-5", "opus": "claude-opus-5", "haiku": "claude-haiku-4-5"}

# Prices the user set (the `modelPrices` setting, `set_model_prices`): they win over the catalog's.
_USER: dict[str, ModelInfo] = {}


def set_model_prices(prices: Mapping[str, Mapping[str, float]]) -> None:
    """Price each model of `prices` (model id: {"input", "output", "cacheRead", "cacheWrite"}, USD per million
    tokens; the cache prices default to the input price) for this process, over any catalog price; the model
    keeps the catalog's window and capabilities when it has an entry. ValueError for a price that is missing,
    negative or not a finite number. Each call replaces the prices set before."""
    entries: dict[str, ModelInfo] = {}
    for model_id, price in prices.items():
        amounts = _price_amounts(model_id, price)
        known = _catalog_entry(model_id.lower())
        base = known or ModelInfo(model_id.lower(), "user", 128_000, 8_192, 0.0, 0.0, 0.0, 0.0)
        entries[model_id.lower()] = replace(
            base,
            id=model_id.lower(),
            input=amounts["input"],
            output=amounts["output"],
            cache_read=amounts["cache_read"],
            cache_write=amounts["cache_write"],
        )
    _USER.clear()
    _USER.update(entries)


def _price_amounts(model_id: str, price: object) -> dict[str, float]:
    if not isinstance(price, Mapping):
        raise ValueError(f"the price of {model_id} must be an object with input and output")
    unknown = set(price) - set(PRICE_FIELDS)
    if unknown:
        raise ValueError(f"the price of {model_id} has unknown fields: {', '.join(sorted(unknown))}")
    amounts: dict[str, float] = {}
    for field in ("input", "output", "cacheRead", "cacheWrite"):
        value = price.get(field, price.get("input") if field.startswith("cache") else None)
        if value is None:
            raise ValueError(f"the price of {model_id} needs {field!r} (USD per million tokens)")
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
            raise ValueError(f"the price of {model_id}: {field} must be a number of dollars, 0 or more, not {value!r}")
        amounts[PRICE_FIELDS[field]] = float(value)
    return amounts


PRICE_FIELDS = {"input": "input", "output": "output", "cacheRead": "cache_read", "cacheWrite": "cache_write"}
"""A `modelPrices` entry's fields, and the `ModelInfo` fields they set."""


def lookup(model_id: str) -> ModelInfo | None:
    """The catalog entry for `model_id`: a price the user set, else the same id (any case), one with a date or
    version suffix, or the model a CLI alias names; a Claude id tagged `+1m` is its model with the 1M-token
    window, priced higher on long requests (`cost_of`)."""
    lowered = model_id.lower()
    if lowered in _USER:
        return _USER[lowered]
    base = long_context_base(lowered)
    if base is not None:
        info = _catalog_entry(base)
        if info is None or info.provider != "anthropic":
            return None
        return replace(info, id=lowered, context_window=LONG_CONTEXT_WINDOW, long_context=True)
    return _catalog_entry(lowered)


LONG_CONTEXT_WINDOW = 1_000_000
LONG_REQUEST_TOKENS = 200_000
"""Anthropic prices a request on the 1M-token context higher once its prompt passes this many tokens."""
LONG_REQUEST_INPUT, LONG_REQUEST_OUTPUT = 2, Decimal("1.5")
"""How much dearer such a request is: its prompt (cache reads and writes too) and its answer."""


def long_context_base(model_id: str) -> str | None:
    """The model id without its 1M-context tag (`+1m`, or Claude Code's `[1m]`); None when it has none."""
    lowered = model_id.lower()
    for tag in ("+1m", "[1m]"):
        if lowered.endswith(tag) and len(lowered) > len(tag):
            return model_id[: -len(tag)]
    return None


def _catalog_entry(lowered: str) -> ModelInfo | None:
    lowered = ALIASES.get(lowered, lowered)
    if lowered in _BY_ID:
        return _BY_ID[lowered]
    for info in CATALOG:
        if lowered.startswith(info.id) and _SUFFIX.match(lowered[len(info.id) :]):
            return info
    return None


LOCAL_PROVIDERS = ("local", "selfhosted")
"""Providers whose models run on this machine: free, and shown as local rather than as $0."""


def register_local_model(model_id: str, provider: str, context_window: int | None) -> None:
    """Enter a model that runs on this machine (a SelfHosted HuggingFace model) in the catalog: priced at
    0, so its cost is counted as free rather than unpriced, with its context window when known (else the
    window assumed for an unknown model). Registering an id again updates its window."""
    window = context_window or 128_000
    _BY_ID[model_id.lower()] = ModelInfo(model_id.lower(), provider, window, min(window, 8_192), 0.0, 0.0, 0.0, 0.0)


def runs_locally(model_id: str) -> bool:
    """Whether `model_id` is a model of this machine (the embedded model, a SelfHosted one): its cost is 0."""
    info = lookup(model_id)
    return info is not None and info.provider in LOCAL_PROVIDERS


def _per_token(price_per_million: float) -> Decimal:
    return usd(price_per_million).scaleb(-6)


def cost_of(model_id: str, usage: Usage) -> Cost:
    """The USD cost of `usage` on `model_id`, exact to the token; `priced=False` (and zeros) when the model
    has no price."""
    info = lookup(model_id)
    if info is None:
        return Cost(priced=False)
    prompt = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
    dear = info.long_context and prompt > LONG_REQUEST_TOKENS
    into, out = (LONG_REQUEST_INPUT, LONG_REQUEST_OUTPUT) if dear else (1, 1)
    return Cost(
        input=usage.input_tokens * _per_token(info.input) * into,
        output=usage.output_tokens * _per_token(info.output) * out,
        cache_read=usage.cache_read_tokens * _per_token(info.cache_read) * into,
        cache_write=usage.cache_write_tokens * _per_token(info.cache_write) * into,
    )


def request_cost(model_id: str, prompt_tokens: int, cached_tokens: int = 0, max_output: int = 0) -> Cost:
    """What a request is expected to cost before it is sent: `cached_tokens` of its `prompt_tokens` at the
    cache-read price, the rest at the dearer of the input and cache-write prices (a prompt-caching provider
    writes the new part to its cache), and `max_output` tokens at the output price (0 when the response's
    length is not capped: then only the prompt counts)."""
    info = lookup(model_id)
    if info is None:
        return Cost(priced=False)
    cached = max(0, min(cached_tokens, prompt_tokens))
    fresh = prompt_tokens - cached
    written = info.caching and info.cache_write > info.input
    usage = Usage(
        input_tokens=0 if written else fresh,
        output_tokens=max(0, max_output),
        cache_read_tokens=cached,
        cache_write_tokens=fresh if written else 0,
    )
    return cost_of(model_id, usage)
