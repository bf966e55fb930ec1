"""The run manifest: each model request's generation parameters in the log, before it is sent; logs with
manifests and capsules reopen and continue as before."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from sagent.agent.agent import Agent
from sagent.agent.session import SessionLog, peek_state, verify_chain
from sagent.evidence.manifest import tools_sha256
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.tools.base import tool


@tool
async def shout(text: str) -> str:
    """Repeat the text in capitals."""
    return text.upper()


async def test_each_request_logs_its_generation_parameters(tmp_path: Path) -> None:
    model = ScriptedModel([tool_turn(("shout", {"text": "hi"})), text_turn("HI")], name="m1", provider="scripted")
    log = SessionLog.create(tmp_path, {"provider": "scripted", "model": "m1"}, directory=tmp_path / "s")
    agent = Agent(
        model, tools=[shout], session=log, system="Be brief.", max_tokens=1000, effort="high", thinking_budget=2048
    )
    async for _ in agent.run("shout hi"):
        pass
    await agent.aclose()
    assert log.path is not None
    records = [json.loads(line) for line in log.path.read_bytes().splitlines()]
    manifests = [r["manifest"] for r in records if r["kind"] == "manifest"]
    assert len(manifests) == len(model.requests) == 2
    first = manifests[0]
    sent = model.requests[0]
    # The prompt hashes are checked in test_prompt_hash.py.
    hashes = {k: first.pop(k) for k in ("prompt_sha256", "prompt_unnumbered_sha256")}
    assert all(len(h) == 64 for h in hashes.values())
    assert first == {
        "provider": "scripted",
        "model": "m1",
        "max_tokens": 1000,
        "effort": "high",
        "thinking_budget": 2048,
        "temperature": None,
        "system_sha256": hashlib.sha256(sent.system.encode()).hexdigest(),
        "tools_sha256": tools_sha256(sent.tools),
        "tools": ["shout"],
        "messages": 1,
        "purpose": "turn",
    }
    assert manifests[1]["messages"] == 3 and manifests[1]["tools_sha256"] == first["tools_sha256"]
    # Each manifest comes before the response it asked for.
    order = [r.get("kind") if r["kind"] != "event" else r["event"]["type"] for r in records]
    assert order.index("manifest") < order.index("turn_finished")

    # The log checks out, rebuilds the same history, and continues.
    assert verify_chain(log.path)
    assert len(peek_state(log.path).history) == 4
    again = Agent.resume(log.path, ScriptedModel([text_turn("again")]))
    async for _ in again.run("once more"):
        pass
    await again.aclose()
    assert verify_chain(log.path)


def test_a_log_from_before_manifests_still_opens(tmp_path: Path) -> None:
    log = SessionLog.create(tmp_path, {"provider": "scripted", "model": "m1"}, directory=tmp_path)
    from sagent.events import MessageAdded
    from sagent.types import UserMessage

    log.record(MessageAdded(UserMessage.of("hello")))
    log.close()
    assert log.path is not None
    reopened, state = SessionLog.open(log.path)
    reopened.close()
    assert [m.text for m in state.history] == ["hello"]
