"""The control channel on its own: sagent's requests and the program's answers matched by id, errors,
timeouts, cancellation and a closed input; the program's requests each answered, an error for the
unknown."""

from __future__ import annotations

import asyncio
import io
import json
from typing import Any

import pytest

from sagent.cli.control.channel import ControlChannel
from sagent.cli.control.requester import ControlError, Requester


def lines(out: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.getvalue().splitlines()]


async def test_requests_get_unique_ids_and_their_own_answers() -> None:
    out = io.StringIO()
    channel: Requester = ControlChannel(out)
    first = asyncio.create_task(channel.request({"subtype": "can_use_tool", "tool_name": "Write"}))
    second = asyncio.create_task(channel.request({"subtype": "hook_callback", "callback_id": "hook_0"}))
    await asyncio.sleep(0)
    sent = lines(out)
    assert [s["type"] for s in sent] == ["control_request"] * 2
    ids = [s["request_id"] for s in sent]
    assert len(set(ids)) == 2 and sent[0]["request"]["tool_name"] == "Write"
    assert isinstance(channel, ControlChannel)
    channel.take(
        {
            "type": "control_response",
            "response": {"subtype": "success", "request_id": ids[1], "response": {"continue": True}},
        }
    )
    channel.take({"type": "control_response", "response": {"subtype": "success", "request_id": ids[0]}})
    assert await second == {"continue": True} and await first == {}


async def test_an_error_answer_a_timeout_and_a_closed_input_raise_control_error() -> None:
    out = io.StringIO()
    channel = ControlChannel(out)
    asked = asyncio.create_task(channel.request({"subtype": "mcp_message"}))
    await asyncio.sleep(0)
    request_id = lines(out)[0]["request_id"]
    channel.take(
        {
            "type": "control_response",
            "response": {"subtype": "error", "request_id": request_id, "error": "no such server"},
        }
    )
    with pytest.raises(ControlError, match="no such server"):
        await asked
    with pytest.raises(ControlError, match="no answer to hook_callback"):
        await channel.request({"subtype": "hook_callback"}, timeout=0.01)
    assert lines(out)[-1]["type"] == "control_cancel_request"
    waiting = asyncio.create_task(channel.request({"subtype": "can_use_tool"}))
    await asyncio.sleep(0)
    channel.close()
    with pytest.raises(ControlError, match="closed"):
        await waiting
    with pytest.raises(ControlError, match="closed"):
        await channel.request({"subtype": "can_use_tool"})


async def test_a_request_whose_asker_is_cancelled_is_withdrawn() -> None:
    out = io.StringIO()
    channel = ControlChannel(out)
    asked = asyncio.create_task(channel.request({"subtype": "can_use_tool"}))
    await asyncio.sleep(0)
    asked.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asked
    sent = lines(out)
    assert sent[-1] == {"type": "control_cancel_request", "request_id": sent[0]["request_id"]}


def test_lines_that_are_not_the_channels_go_on_to_the_agent() -> None:
    channel = ControlChannel(io.StringIO())
    assert not channel.take_line(b'{"type": "user", "message": {"role": "user", "content": "hi"}}\n')
    assert not channel.take_line(b"not json\n")
    assert channel.take_line(b'{"type": "keep_alive"}\n')
    assert channel.take_line('{"type": "control_response", "response": {"request_id": "nobody", "subtype": "success"}}')


async def test_every_request_of_the_program_is_answered_an_unknown_one_with_an_error() -> None:
    from sagent.agent.agent import Agent
    from sagent.cli.control.answers import Answers
    from sagent.providers.scripted import ScriptedModel

    out = io.StringIO()
    channel = ControlChannel(out)
    agent = Agent(ScriptedModel([]))
    channel.attach(agent, Answers(agent, channel))
    for n, subtype in enumerate(["say", "answer", "__init__", "set_model_x", "interrupt"]):
        channel.take({"type": "control_request", "request_id": f"r{n}", "request": {"subtype": subtype}})
    for _ in range(5):
        await asyncio.sleep(0)
    answers = {a["response"]["request_id"]: a["response"] for a in lines(out)}
    assert [answers[f"r{n}"]["subtype"] for n in range(5)] == ["error"] * 4 + ["success"]
    assert "does not support the control request 'say'" in answers["r0"]["error"]
    await agent.aclose()
