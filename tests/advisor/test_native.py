"""Anthropic's server-side advisor: when executor and advisor are both Anthropic's, the consultation runs in
the executor's response (the `advisor_20260301` tool and its beta), its blocks go back unchanged, its tokens
are billed to `advisor/<model>`, the gates still hold, and an endpoint that refuses the tool gets the
client-side loop instead. Against the fake Anthropic server, which checks the tool as the API does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sagent.advisor import Advisor, AdvisorPolicy
from sagent.agent.agent import Agent
from sagent.events import AdvisorConsulted, Event
from sagent.providers.anthropic import AnthropicModel
from sagent.providers.catalog import cost_of
from sagent.providers.google import GoogleModel
from sagent.providers.openai_compat import convert_history as chat_history
from sagent.types import AssistantMessage, ServerToolPart, TextPart, Usage, message_from_dict, to_dict
from tests.cli.test_headless import env_for, records, run_sagent
from tests.fakes.anthropic_server import FakeAnthropic, Reply, advisor_block, text_response, tool_use_response

OFF = {"failures": None, "confidence": None, "stagnation": None, "marker": None}
EXECUTOR, ADVISOR = "claude-haiku-4-5", "claude-opus-4-7"


def models(fake: FakeAnthropic) -> tuple[AnthropicModel, AnthropicModel]:
    return (
        AnthropicModel(EXECUTOR, base_url=fake.url, api_key="test"),
        AnthropicModel(ADVISOR, base_url=fake.url, api_key="test"),
    )


def consulted_reply(advice: str, answer: str, **kwargs: Any) -> Reply:
    asking = {"type": "text", "text": "Let me ask."}
    return Reply([asking, advisor_block(advice, **kwargs), {"type": "text", "text": answer}])


def watch(agent: Agent) -> list[Event]:
    events: list[Event] = []
    agent.add_sink(type("Sink", (), {"on_event": lambda self, a, e: events.append(e)})())
    return events


def advisor_tools(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [t for t in body.get("tools", []) if t.get("type") == "advisor_20260301"]


async def test_both_anthropic_the_advisor_runs_on_the_server_and_is_billed_apart(tmp_path: Path) -> None:
    with FakeAnthropic([consulted_reply("Check the off-by-one in the loop.", "Fixed.")]) as fake:
        executor, strong = models(fake)
        adv = Advisor(strong, AdvisorPolicy(**OFF))  # type: ignore[arg-type]
        agent = Agent(executor, advisor=adv, cwd=tmp_path)
        events = watch(agent)
        reply = await agent.run("fix the loop")
        request = fake.requests[0]
        await agent.aclose()
    assert len(fake.requests) == 1  # one request: Anthropic consulted the advisor within it
    assert {k.lower(): v for k, v in request["headers"].items()}["anthropic-beta"] == "advisor-tool-2026-03-01"
    (tool,) = advisor_tools(request["body"])
    assert tool["model"] == ADVISOR and tool["name"] == "advisor" and tool["max_uses"] == 3
    assert "Advisor" not in [t.get("name") for t in request["body"]["tools"]]  # the client-side tool gives way
    assert reply.text == "Let me ask.Fixed."  # the executor's words only; the advice is not the answer
    (part,) = [p for p in agent.history[-1].content if isinstance(p, ServerToolPart)]  # type: ignore[union-attr]
    assert part.text == "Check the off-by-one in the loop." and part.model == ADVISOR
    assert part.usage == Usage(900, 300)
    by_model = agent.cost.by_model
    assert set(by_model) == {EXECUTOR, "advisor/" + ADVISOR}
    assert by_model["advisor/" + ADVISOR].usage == Usage(900, 300)
    assert by_model["advisor/" + ADVISOR].cost == cost_of(ADVISOR, Usage(900, 300))
    assert by_model[EXECUTOR].usage == Usage(100, 20)  # the top-level usage is the executor's alone
    (consulted,) = [e for e in events if isinstance(e, AdvisorConsulted)]
    assert consulted.native and consulted.trigger == "tool" and consulted.model == ADVISOR
    assert [c.guidance for c in adv.hook.consultations] == ["Check the off-by-one in the loop."]


async def test_the_consultation_goes_back_verbatim_even_when_encrypted(tmp_path: Path) -> None:
    steps = [consulted_reply("secret plan", "Step one done.", redacted=True), text_response("All done.")]
    with FakeAnthropic(steps) as fake:
        executor, strong = models(fake)
        agent = Agent(executor, advisor=Advisor(strong, AdvisorPolicy(**OFF)), cwd=tmp_path)  # type: ignore[arg-type]
        await agent.run("start")
        await agent.run("go on")
        second = fake.requests[1]["body"]
        await agent.aclose()
    assistant = next(m for m in second["messages"] if m["role"] == "assistant")
    kinds = [b["type"] for b in assistant["content"]]
    assert kinds == ["text", "server_tool_use", "advisor_tool_result", "text"]
    result = assistant["content"][2]
    assert result["content"] == {"type": "advisor_redacted_result", "encrypted_content": "ENC:secret plan"}
    assert result["tool_use_id"] == assistant["content"][1]["id"]


async def test_the_gates_hold_for_native_consultations(tmp_path: Path) -> None:
    steps = [consulted_reply("one", "first"), text_response("second")]
    with FakeAnthropic(steps) as fake:
        executor, strong = models(fake)
        adv = Advisor(strong, AdvisorPolicy(**OFF, max_consultations=1))  # type: ignore[arg-type]
        agent = Agent(executor, advisor=adv, cwd=tmp_path)
        await agent.run("a")
        await agent.run("b")
        first, second = (r["body"] for r in fake.requests)
        await agent.aclose()
    assert advisor_tools(first)[0]["max_uses"] == 1
    assert advisor_tools(second) == []  # the limit is reached: no advisor at all, on either side
    assert "Advisor" in [t["name"] for t in second["tools"]]
    # Without the tool, the earlier consultation goes back as a marked note, which the API accepts.
    texts = [b.get("text", "") for m in second["messages"] if m["role"] == "assistant" for b in m["content"]]
    assert "[advisor note]\none" in texts


async def test_an_endpoint_that_refuses_the_tool_gets_the_client_side_loop(tmp_path: Path) -> None:
    steps = [
        tool_use_response([("Advisor", {"question": "where is the bug?"})]),
        text_response("Look at the loop bound.", input_tokens=2000, output_tokens=100),
        text_response("Fixed it."),
    ]
    with FakeAnthropic(steps, advisor_pairs=set()) as fake:
        executor, strong = models(fake)
        adv = Advisor(strong, AdvisorPolicy(**OFF))  # type: ignore[arg-type]
        agent = Agent(executor, advisor=adv, cwd=tmp_path)
        events = watch(agent)
        reply = await agent.run("fix it")
        bodies = [r["body"] for r in fake.requests]
        await agent.aclose()
    assert reply.text == "Fixed it."
    assert advisor_tools(bodies[0]) and not advisor_tools(bodies[1])  # refused once, then sent without it
    assert "Advisor" in [t["name"] for t in bodies[1]["tools"]]
    assert executor.advisor_refused is not None and "does not support" in executor.advisor_refused
    assert [b["model"] for b in bodies[2:]] == [ADVISOR, EXECUTOR] and not advisor_tools(bodies[3])
    (consulted,) = [e for e in events if isinstance(e, AdvisorConsulted)]
    assert not consulted.native and consulted.usage == Usage(2000, 100)


async def test_native_is_only_for_anthropic_pairs_and_can_be_turned_off(tmp_path: Path) -> None:
    with FakeAnthropic([text_response("plain")]) as fake:
        executor, strong = models(fake)
        off = Advisor(strong, AdvisorPolicy(**OFF, native=False))  # type: ignore[arg-type]
        agent = Agent(executor, advisor=off, cwd=tmp_path)
        await agent.run("x")
        body = fake.requests[0]["body"]
        await agent.aclose()
    assert not advisor_tools(body) and "Advisor" in [t["name"] for t in body["tools"]]
    gemini = GoogleModel("gemini-3-pro-preview", api_key="test")
    hook = Advisor(gemini, AdvisorPolicy(**OFF)).hook
    assert hook.native(Agent(AnthropicModel(EXECUTOR, api_key="test"), cwd=tmp_path)) is None


def test_a_consultation_survives_the_session_log_and_reaches_other_providers_as_text() -> None:
    blocks = json.dumps([{"type": "server_tool_use", "id": "srvtoolu_1", "name": "advisor", "input": {}}])
    part = ServerToolPart("advisor", "anthropic", blocks, "Use a set.", ADVISOR, Usage(10, 5))
    message = AssistantMessage((part, TextPart("Done.")), "anthropic", EXECUTOR)
    assert message_from_dict(json.loads(json.dumps(to_dict(message)))) == message
    assert chat_history((message,))[0]["content"] == "[advisor note]\nUse a set.\n\nDone."


def test_the_cli_records_a_native_consultation_in_stream_json(tmp_path: Path) -> None:
    with FakeAnthropic([consulted_reply("Read main.py first.", "Start with main.py.")]) as fake:
        args = ["-p", "fix it", "--model", EXECUTOR, "--advisor", ADVISOR, "--no-memory", "--ephemeral"]
        out = run_sagent([*args, "--output-format", "stream-json", "--cwd", str(tmp_path)], env_for(fake, tmp_path))
    assert out.returncode == 0, out.stderr
    lines = records(out.stdout)
    consulted = next(r for r in lines if r.get("subtype") == "advisor_consulted")
    assert consulted["native"] is True and consulted["trigger"] == "tool" and consulted["model"] == ADVISOR
    assert consulted["usage"]["input_tokens"] == 900 and consulted["cost_usd"] > 0
    assistant = next(r for r in lines if r.get("type") == "assistant")
    assert "advisor_tool_result" in [b["type"] for b in assistant["message"]["content"]]
    usage = lines[-1]["modelUsage"]
    assert set(usage) == {EXECUTOR, "advisor/" + ADVISOR}
    assert lines[-1]["total_cost_usd"] == pytest.approx(sum(m["costUSD"] for m in usage.values()))
