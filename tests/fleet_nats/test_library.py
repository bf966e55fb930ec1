"""`Fleet(bus=NatsBus(url, fleet=...))` in a program: an agent of this process and one served by another
process message each other by label, exactly as agents of one process do on LocalBus."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from sagent import Agent, Fleet, FleetError, PeerMessage
from sagent.fleet_nats import NatsBus, QueuedReceipt
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.tools import AgentSend
from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response
from tests.fakes.nats_server import NatsServer
from tests.fleet_nats.helpers import Served, sent_texts, wait_until


def test_an_agent_of_this_process_and_a_served_one_message_each_other(nats_server: NatsServer, tmp_path: Path) -> None:
    script = [tool_use_response([("AgentSend", {"to": "main", "message": "pong"})]), text_response("answered")]
    with FakeAnthropic(script) as fake:
        served = Served(nats_server, "lib", "b", fake, tmp_path)
        try:

            async def main() -> list[str]:
                bus = NatsBus(nats_server.url, fleet="lib")
                model = ScriptedModel(
                    [tool_turn(("AgentSend", {"to": "b", "message": "ping"})), text_turn("sent"), text_turn("heard")]
                )
                agent = Agent(model, tools=[AgentSend()], fleet=Fleet(bus=bus))
                try:
                    assert sorted(bus.labels()) == ["b", "main"]
                    for _ in range(600):  # what AgentSelf status lists, once b's first heartbeat is in
                        peers = agent.context.runtime.peers()
                        if any(p.startswith("b: in another process") and "anthropic/" in p for p in peers):
                            break
                        await asyncio.sleep(0.05)
                    else:
                        raise AssertionError(f"b is not among the peers: {peers}")
                    await agent.ask("ping b")
                    assert await asyncio.wait_for(agent.wait_for_input(), 90)
                    async for _ in agent.run():
                        pass
                    return [m.text for m in agent.history if isinstance(m, PeerMessage)]
                finally:
                    await agent.aclose()
                    bus.close()

            heard = asyncio.run(main())
            assert heard == ["pong"]
            assert "[message from main]\nping" in [t for r in fake.requests for t in sent_texts(r)]
        finally:
            served.stop()


def test_a_label_taken_in_another_process_is_refused_and_a_down_agent_gets_a_queued_receipt(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    with FakeAnthropic([]) as fake:
        served = Served(nats_server, "lib", "b", fake, tmp_path)
        try:

            async def take_b() -> None:
                bus = NatsBus(nats_server.url, fleet="lib")
                try:
                    with pytest.raises(FleetError, match="the label 'b' is taken by a running agent of the fleet"):
                        bus.register("b", lambda envelope: None)  # type: ignore[arg-type, return-value]
                finally:
                    bus.close()

            asyncio.run(take_b())
        finally:
            served.stop()
        bus = NatsBus(nats_server.url, fleet="lib")
        try:
            from sagent.agent.fleet import Envelope

            receipt = bus.deliver(Envelope("main", "b", "later"))
            assert isinstance(receipt, QueuedReceipt) and "queued for b" in receipt.describe()
            wait_until(lambda: not bus.agents(), "b's heartbeat to go")
        finally:
            bus.close()


def test_an_unreachable_server_is_a_clear_error_within_the_connect_timeout() -> None:
    from tests.fakes.nats_server import free_port

    with pytest.raises(FleetError, match=r"cannot reach the NATS server at nats://127\.0\.0\.1"):
        NatsBus(f"nats://127.0.0.1:{free_port()}", fleet="lib", connect_timeout=1)
    with pytest.raises(FleetError, match="a fleet name is letters"):
        NatsBus("nats://127.0.0.1:1", fleet="a.b")


def test_a_message_handled_just_before_the_label_moves_to_a_new_agent_is_not_handed_over_again(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    """The REPL's /clear moves its label to a new agent right after a turn: a message the old agent took
    into its history is acknowledged before its inbox closes, so the new agent does not get it again."""

    async def main() -> tuple[list[str], list[str]]:
        bus = NatsBus(nats_server.url, fleet="moves")
        sender = NatsBus(nats_server.url, fleet="moves")
        fleet = Fleet(bus=bus)
        old = Agent(ScriptedModel([text_turn("heard")]), fleet=fleet, label="me", cwd=str(tmp_path))
        new: Agent | None = None
        try:
            from sagent.agent.fleet import Envelope

            sender.deliver(Envelope("other", "me", "before the move"))
            assert await asyncio.wait_for(old.wait_for_input(), 30)
            async for _ in old.run():
                pass
            fleet.leave(old)  # at once, as /clear does once the turn has ended
            new = Agent(ScriptedModel([text_turn("fresh")] * 3), fleet=fleet, label="me", cwd=str(tmp_path))
            sender.deliver(Envelope("other", "me", "after the move"))
            assert await asyncio.wait_for(new.wait_for_input(), 30)
            async for _ in new.run():
                pass
            texts = [m.text for m in new.history if isinstance(m, PeerMessage)]
            return [m.text for m in old.history if isinstance(m, PeerMessage)], texts
        finally:
            for agent in (old, new):
                if agent is not None:
                    await agent.aclose()
            sender.close()
            bus.close()

    before, after = asyncio.run(main())
    assert before == ["before the move"]
    assert after == ["after the move"]
