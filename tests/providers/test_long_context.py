"""The `+1m` tag: a Claude model on its 1M-token context window, asked for with its beta and priced higher
on long requests."""

from __future__ import annotations

from decimal import Decimal

from sagent.providers.anthropic import AnthropicModel
from sagent.providers.catalog import cost_of, lookup
from sagent.types import Usage
from tests.fakes.anthropic_server import FakeAnthropic, text_response
from tests.providers.test_anthropic import collect


async def test_the_tag_asks_for_the_beta_and_sends_the_plain_model_id() -> None:
    with FakeAnthropic([text_response("long"), text_response("short")]) as fake:
        for name in ("claude-sonnet-4-5+1m", "claude-sonnet-4-5"):
            await collect(AnthropicModel(name, api_key="sk-test", base_url=fake.url))
        tagged, plain = fake.requests
    assert tagged["body"]["model"] == plain["body"]["model"] == "claude-sonnet-4-5"
    assert "context-1m-2025-08-07" in {k.lower(): v for k, v in tagged["headers"].items()}["anthropic-beta"]
    assert "anthropic-beta" not in {k.lower() for k in plain["headers"]}


def test_the_window_and_the_price_of_a_long_request() -> None:
    for name in ("claude-sonnet-4-5+1m", "claude-sonnet-4-5[1m]"):
        info = lookup(name)
        assert info is not None and info.context_window == 1_000_000
    assert lookup("gpt-5.4+1m") is None  # only Claude models have the tag
    short, long = Usage(100_000, 1_000), Usage(150_000, 1_000, cache_read_tokens=60_000)
    base, tagged = cost_of("claude-sonnet-4-5", short), cost_of("claude-sonnet-4-5+1m", short)
    assert tagged.total == base.total  # up to 200K tokens of prompt, the same price
    base, tagged = cost_of("claude-sonnet-4-5", long), cost_of("claude-sonnet-4-5+1m", long)
    assert tagged.input == 2 * base.input and tagged.cache_read == 2 * base.cache_read
    assert tagged.output == base.output * Decimal("1.5")
