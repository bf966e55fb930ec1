"""Each provider gets the effort levels it knows, and the nearest one for the others."""

from __future__ import annotations

import pytest

from sagent.providers.anthropic import AnthropicModel
from sagent.providers.google import GoogleModel
from sagent.providers.openai_responses import OpenAIModel
from sagent.types import ModelRequest, UserMessage


def _request(effort: str) -> ModelRequest:
    return ModelRequest("", (UserMessage.of("hi"),), effort=effort)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("model", "effort", "sent"),
    [
        ("claude-opus-4-7", "xhigh", {"effort": "xhigh"}),
        ("claude-opus-5", "max", {"effort": "max"}),
        ("claude-sonnet-4-6", "minimal", {"effort": "low"}),
        ("claude-haiku-4-5", "high", None),  # a model without the setting would refuse the request
        ("claude-sonnet-4-5-20250929", "medium", None),
    ],
)
def test_anthropic_sends_effort_only_to_the_models_that_take_it(model: str, effort: str, sent: object) -> None:
    params = AnthropicModel(model, api_key="k").build_params(_request(effort))
    assert params.get("output_config") == sent


@pytest.mark.parametrize(("effort", "level"), [("low", "LOW"), ("xhigh", "HIGH"), ("max", "HIGH")])
def test_gemini_tops_out_at_its_highest_thinking_level(effort: str, level: str) -> None:
    body = GoogleModel("gemini-3-pro-preview", api_key="k").build_body(_request(effort))
    assert body["generationConfig"]["thinkingConfig"]["thinkingLevel"] == level


def test_openai_takes_xhigh_and_max_as_they_are() -> None:
    for effort in ("xhigh", "max"):
        assert OpenAIModel("gpt-5.4", api_key="k").build_params(_request(effort))["reasoning"]["effort"] == effort
