"""The advisor's structured answer (assessment, next steps, risks): asked for with each provider's own
structured output (Anthropic: a forced tool; OpenAI: a strict `json_schema` format; Gemini: a response
schema) against the fake servers, which refuse a malformed structured request as the APIs do; rendered for
the executor; free text on providers without it, when it is turned off, or when the endpoint refuses it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sagent.advisor import NOTE_HEADER, Advisor, AdvisorPolicy
from sagent.agent.agent import Agent
from sagent.providers.anthropic import AnthropicModel
from sagent.providers.base import Model
from sagent.providers.google import GoogleModel
from sagent.providers.openai_compat import OpenAICompatModel
from sagent.providers.openai_responses import OpenAIModel
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.types import ToolResult
from tests.fakes.anthropic_server import FakeAnthropic, Fault, text_response, tool_use_response
from tests.fakes.gemini_server import FakeGemini, gemini_text
from tests.fakes.openai_chat_server import FakeChat, text_chunks
from tests.fakes.openai_responses_server import FakeResponses, responses_text

ADVICE = {
    "assessment": "The parser drops the last token.",
    "next_steps": ["Read parse() in parser.py", "Add a test for a trailing token"],
    "risks": ["Other callers rely on the bug"],
}
RENDERED = (
    "Assessment: The parser drops the last token.\n"
    "Next steps:\n1. Read parse() in parser.py\n2. Add a test for a trailing token\n"
    "Risks:\n- Other callers rely on the bug"
)
OFF: dict[str, Any] = {"failures": None, "confidence": None, "stagnation": None, "marker": None}


def _anthropic_body(body: dict[str, Any]) -> None:
    assert body["tool_choice"] == {"type": "tool", "name": "advice"}
    schema = next(t for t in body["tools"] if t["name"] == "advice")["input_schema"]
    assert set(schema["required"]) == {"assessment", "next_steps", "risks"}


def _openai_body(body: dict[str, Any]) -> None:
    fmt = body["text"]["format"]
    assert fmt["type"] == "json_schema" and fmt["strict"] is True and fmt["name"] == "advice"
    assert set(fmt["schema"]["properties"]) == {"assessment", "next_steps", "risks"}


def _gemini_body(body: dict[str, Any]) -> None:
    config = body["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert set(config["responseJsonSchema"]["required"]) == {"assessment", "next_steps", "risks"}


PROVIDERS: list[tuple[str, Callable[..., Any], Any, Callable[[str], Model], Callable[[dict[str, Any]], None]]] = [
    (
        "anthropic",
        FakeAnthropic,
        lambda: tool_use_response([("advice", ADVICE)]),
        lambda url: AnthropicModel("claude-opus-4-7", base_url=url, api_key="test"),
        _anthropic_body,
    ),
    (
        "openai",
        FakeResponses,
        lambda: responses_text(json.dumps(ADVICE)),
        lambda url: OpenAIModel("gpt-5.4", base_url=url, api_key="test"),
        _openai_body,
    ),
    (
        "google",
        FakeGemini,
        lambda: gemini_text(json.dumps(ADVICE)),
        lambda url: GoogleModel("gemini-3-flash-preview", base_url=url, api_key="test"),
        _gemini_body,
    ),
]


async def _ask(advisor_model: Model, tmp_path: Path, **policy: Any) -> tuple[Agent, Advisor]:
    executor = ScriptedModel(
        [tool_turn(("Advisor", {"question": "why does it fail?"})), text_turn("fixed")], name="claude-haiku-4-5"
    )
    adv = Advisor(advisor_model, AdvisorPolicy(**{**OFF, "native": False, **policy}))
    agent = Agent(executor, advisor=adv, cwd=tmp_path)
    assert (await agent.run("fix the parser")).text == "fixed"
    await agent.aclose()
    return agent, adv


def _note(agent: Agent) -> str:
    return next(r for r in agent.history if isinstance(r, ToolResult) and r.name == "Advisor").text


@pytest.mark.parametrize(("name", "fake", "reply", "model", "check"), PROVIDERS, ids=[p[0] for p in PROVIDERS])
async def test_structured_answers_where_the_provider_has_structured_output(
    tmp_path: Path, name: str, fake: Any, reply: Any, model: Any, check: Any
) -> None:
    with fake([reply()]) as server:
        agent, adv = await _ask(model(server.url), tmp_path)
        body = server.bodies()[0]
    check(body)
    assert "assessment" in json.dumps(body["contents"] if name == "google" else body).lower()  # asked in words too
    note = _note(agent)
    assert note.startswith(NOTE_HEADER) and RENDERED in note
    done = adv.hook.consultations[0]
    assert done.structured is not None and done.structured.next_steps == tuple(ADVICE["next_steps"])
    assert done.guidance == RENDERED


async def test_free_text_where_there_is_none_or_it_is_off(tmp_path: Path) -> None:
    with FakeChat([text_chunks("Look at the last token.")]) as server:  # an OpenAI-compatible server
        compat = OpenAICompatModel("my-model", base_url=server.url, api_key="none", provider="openai-compat")
        agent, adv = await _ask(compat, tmp_path)
        body = server.bodies()[0]
    assert "response_format" not in body and "Look at the last token." in _note(agent)
    assert adv.hook.consultations[0].structured is None
    with FakeAnthropic([text_response("Plain advice.")]) as server:  # turned off
        agent, adv = await _ask(
            AnthropicModel("claude-opus-4-7", base_url=server.url, api_key="t"), tmp_path / "b", structured=False
        )
        body = server.bodies()[0]
    assert "tool_choice" not in body and "tools" not in body and "Plain advice." in _note(agent)


async def test_a_refused_or_unreadable_structured_answer_falls_back_to_free_text(tmp_path: Path) -> None:
    refused = Fault(400, "invalid_request_error", "tool_choice is not supported here")
    with FakeAnthropic([refused, text_response("Free advice.")]) as server:
        agent, adv = await _ask(AnthropicModel("claude-opus-4-7", base_url=server.url, api_key="t"), tmp_path)
        bodies = server.bodies()
    assert "tool_choice" in bodies[0] and "tool_choice" not in bodies[1]
    assert "Free advice." in _note(agent) and adv.hook.consultations[0].structured is None
    with FakeResponses([responses_text("not json at all")]) as server:
        agent, adv = await _ask(OpenAIModel("gpt-5.4", base_url=server.url, api_key="test"), tmp_path / "b")
    assert "not json at all" in _note(agent) and adv.hook.consultations[0].structured is None


async def test_thinking_is_left_off_a_forced_tool(tmp_path: Path) -> None:
    from sagent.advisor.answer import ADVICE_SCHEMA
    from sagent.types import ModelRequest, UserMessage

    model = AnthropicModel("claude-opus-4-7", api_key="t")
    params = model.build_params(
        ModelRequest("s", (UserMessage.of("q"),), thinking_budget=2048, response_schema=ADVICE_SCHEMA)
    )
    assert "thinking" not in params and params["tool_choice"]["name"] == "advice"
