"""One session, four providers: each completes a tool round on the history the others left, and the
session log remembers where it ended."""

from __future__ import annotations

import json
import re
from pathlib import Path

from sagent.agent.agent import Agent
from sagent.agent.session import SessionLog, peek_state, verify_chain
from sagent.events import ToolFinished
from sagent.tools import builtin_tools
from tests.fakes import anthropic_server as anth
from tests.fakes import gemini_server as gem
from tests.fakes import openai_chat_server as chat
from tests.fakes import openai_responses_server as resp
from tests.providers.dialects import ANTHROPIC, GOOGLE, OPENAI, OPENAI_COMPAT

CHAT_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


async def _tool_round(agent: Agent, prompt: str) -> list[ToolFinished]:
    events = [e async for e in agent.run(prompt)]
    return [e for e in events if isinstance(e, ToolFinished)]


async def test_a_session_moves_across_four_providers_with_its_history(tmp_path: Path) -> None:
    for name in ("a", "b", "c", "d"):
        (tmp_path / f"{name}.txt").write_text(f"file {name} says {name * 3}\n")
    anthropic_turn = anth.Reply(
        [
            {"type": "thinking", "thinking": "Start with a.", "signature": "sig-anthropic"},
            {"type": "tool_use", "id": "toolu_01A", "name": "Read", "input": {"path": "a.txt"}},
        ],
        "tool_use",
    )
    openai_turn = resp.ResponsesReply(
        [
            {"type": "reasoning", "summary": "Now b.", "encrypted_content": "enc-openai"},
            {"type": "function_call", "call_id": "call_B", "name": "Read", "arguments": '{"path": "b.txt"}'},
        ]
    )
    google_turn = gem.gemini_tools([("Read", {"path": "c.txt"})], signature="c2lnLWdvb2dsZQ==")
    compat_turn = chat.tool_chunks([("Read", '{"path": "d.txt"}')])

    log = SessionLog.create(tmp_path, {"provider": "anthropic", "model": ANTHROPIC.model_id})
    with (
        anth.FakeAnthropic([anthropic_turn, anth.text_response("a has aaa")]) as fa,
        resp.FakeResponses([openai_turn, resp.responses_text("b has bbb")]) as fo,
        gem.FakeGemini([google_turn, gem.gemini_text("c has ccc")]) as fg,
        chat.FakeChat([compat_turn, chat.text_chunks("d has ddd")]) as fc,
    ):
        agent = Agent(ANTHROPIC.model(fa.url), tools=builtin_tools(), cwd=tmp_path, session=log)
        for dialect, fake, name in (
            (ANTHROPIC, fa, "a"),
            (OPENAI, fo, "b"),
            (GOOGLE, fg, "c"),
            (OPENAI_COMPAT, fc, "d"),
        ):
            if dialect is not ANTHROPIC:
                agent.switch_model(dialect.model(fake.url))
            finished = await _tool_round(agent, f"What does {name}.txt say?")
            assert [f.result.is_error for f in finished] == [False]
            assert agent.history[-1].text == f"{name} has {name * 3}"
        await agent.aclose()
        openai_first, google_first, compat_first = fo.bodies()[0], fg.bodies()[0], fc.bodies()[0]

    # OpenAI sees Anthropic's call and result under one valid id, and its thinking only as text.
    openai_text = json.dumps(openai_first)
    assert OPENAI.call_ids_sent(openai_first) == OPENAI.result_ids_sent(openai_first) != []
    assert "file a says aaa" in openai_text and "<thinking>Start with a.</thinking>" in openai_text
    assert "sig-anthropic" not in openai_text and not any(i.get("type") == "reasoning" for i in openai_first["input"])

    # Gemini sees both earlier rounds, OpenAI's reasoning as text, and no foreign signature.
    google_text = json.dumps(google_first)
    assert len(GOOGLE.call_ids_sent(google_first)) == 2
    assert GOOGLE.result_ids_sent(google_first) == GOOGLE.call_ids_sent(google_first)
    assert "file b says bbb" in google_text and "<thinking>Now b.</thinking>" in google_text
    assert "enc-openai" not in google_text and "thoughtSignature" not in google_text

    # The Chat Completions endpoint gets every call with an id its format accepts, each one answered.
    calls, results = OPENAI_COMPAT.call_ids_sent(compat_first), OPENAI_COMPAT.result_ids_sent(compat_first)
    assert len(calls) == 3 and calls == results and all(CHAT_ID.match(c) for c in calls)
    assert all(f"file {n} says" in json.dumps(compat_first) for n in "abc")

    # The log recorded each switch and rebuilds the whole history, ending on the last provider.
    assert log.path is not None and verify_chain(log.path)
    state = peek_state(log.path)
    assert (state.provider, state.model) == ("moonshot", OPENAI_COMPAT.model_id)
    assert len(state.history) == len(agent.history) == 4 * 4  # per round: question, call, result, answer
    assert set(state.usage_by_model) == {d.model_id for d in (ANTHROPIC, OPENAI, GOOGLE, OPENAI_COMPAT)}
    logged = [json.loads(line) for line in log.path.read_text().splitlines()[1:]]
    switches = [r["event"] for r in logged if r["kind"] == "event"]
    assert [e["provider"] for e in switches if e["type"] == "model_switched"] == ["openai", "google", "moonshot"]


async def test_back_on_anthropic_its_own_signed_thinking_is_sent_back(tmp_path: Path) -> None:
    first = anth.thinking_response("Think first.", "sig-1", "Answer one.")
    with (
        anth.FakeAnthropic([first, anth.text_response("Answer three.")]) as fa,
        resp.FakeResponses([resp.responses_text("Answer two.")]) as fo,
    ):
        agent = Agent(ANTHROPIC.model(fa.url), cwd=tmp_path)
        await agent.ask("one")
        agent.switch_model(OPENAI.model(fo.url))
        await agent.ask("two")
        agent.switch_model(ANTHROPIC.model(fa.url))
        await agent.ask("three")
        await agent.aclose()
        last = fa.bodies()[1]
    assert ANTHROPIC.signature_sent(last) == "sig-1"
    assert [m["role"] for m in last["messages"]] == ["user", "assistant", "user", "assistant", "user"]
