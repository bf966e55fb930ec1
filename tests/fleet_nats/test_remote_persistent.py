"""A persistent sub-agent on another process: AgentSpawn with `on` and `persistent` starts it on a worker,
where it stays in the fleet after its first answer; it reports to its parent each time it goes idle, takes
AgentSend messages, its spend joins the parent's tree, and its parent's `stop` ends it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.fakes.anthropic_server import FakeAnthropic, Reply, text_response, tool_use_response
from tests.fakes.nats_server import NatsServer
from tests.fleet_nats.helpers import Served, fleet, sent_texts, wait_until

# claude-sonnet-4-6: $3 per million input tokens, $15 per million output; each fake response is 100 in, 20 out.
PER_RESPONSE = 100 * 3 / 1e6 + 20 * 15 / 1e6


def last_text(request: dict[str, Any]) -> str:
    """The text of the newest user turn, when it has text (a message); "" for tool results alone."""
    content = request["body"]["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return " ".join(b.get("text", "") for b in content if b.get("type") == "text")


def lead(request: dict[str, Any]) -> Reply:
    """The lead: spawns the helper, asks it a question once it is ready, stops it once it has answered."""
    text = last_text(request)
    if "set up a helper" in text:
        spawn = {"prompt": "wait for questions", "label": "helper", "on": "any", "persistent": True}
        return tool_use_response([("AgentSpawn", spawn)])
    if "[idle] ready" in text:
        return tool_use_response([("AgentSend", {"to": "helper", "message": "what is 2+2?"})])
    if "[idle] 4" in text:
        return tool_use_response([("AgentSend", {"to": "helper", "message": "", "control": "stop"})])
    return text_response("ok")


def test_a_persistent_sub_agent_on_a_worker_reports_takes_messages_spends_for_its_parent_and_stops(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    helper_script = [text_response("ready"), text_response("4")]
    with FakeAnthropic([lead] * 12) as lead_fake, FakeAnthropic(helper_script) as worker_fake:
        worker = Served(nats_server, "f1", "worker1", worker_fake, tmp_path / "w", "--worker")
        boss = Served(nats_server, "f1", "lead", lead_fake, tmp_path / "l")
        try:
            assert fleet(nats_server, "f1", boss.env, "send", "lead", "set up a helper").returncode == 0

            def lead_heard(text: str) -> bool:
                return any(text in t for r in lead_fake.requests for t in sent_texts(r))

            wait_until(lambda: lead_heard("[idle] ready"), "the helper's first report")
            started = str([r["body"]["messages"] for r in lead_fake.requests])
            assert "started helper (on " in started
            # It stays in the fleet after its answer: the lead's message reaches it, and it answers.
            wait_until(lambda: lead_heard("[idle] 4"), "the helper's answer to the lead's question")
            assert "what is 2+2?" in " ".join(t for r in worker_fake.requests for t in sent_texts(r))
            # The lead's stop ends it: it reports so, and leaves the fleet.
            wait_until(lambda: lead_heard("[stopped] 4"), "the helper to stop")
            gone = wait_until(
                lambda: (r := fleet(nats_server, "f1", boss.env, "send", "helper", "hi")).returncode == 2 and r,
                "the helper to leave the fleet",
            )
            assert "no agent is called 'helper'" in gone.stderr

            # Its two responses joined the lead's tree.
            def lead_cost_includes_helpers() -> bool:
                expected = f"${(len(lead_fake.requests) + 2) * PER_RESPONSE:.4f}"
                rows = fleet(nats_server, "f1", boss.env, "ls").stdout.splitlines()
                return any(row.startswith("lead ") and row.endswith(expected) for row in rows)

            wait_until(lead_cost_includes_helpers, "the lead's cost to include the helper's")
        finally:
            boss.stop()
            worker.stop()


def test_a_persistent_sub_agent_elsewhere_ends_when_its_parent_ends(nats_server: NatsServer, tmp_path: Path) -> None:
    with FakeAnthropic([lead] * 6) as lead_fake, FakeAnthropic([text_response("ready")]) as worker_fake:
        worker = Served(nats_server, "f1", "worker1", worker_fake, tmp_path / "w", "--worker")
        boss = Served(nats_server, "f1", "lead", lead_fake, tmp_path / "l")
        try:
            assert fleet(nats_server, "f1", boss.env, "send", "lead", "set up a helper").returncode == 0
            wait_until(
                lambda: any("[idle] ready" in t for r in lead_fake.requests for t in sent_texts(r)), "the report"
            )
            assert boss.stop() == 0  # SIGTERM: the lead shuts down, and its helper with it
            gone = wait_until(
                lambda: (r := fleet(nats_server, "f1", worker.env, "send", "helper", "hi")).returncode == 2 and r,
                "the helper to leave the fleet",
            )
            assert "no agent is called 'helper'" in gone.stderr
            assert worker.process.poll() is None  # the worker goes on
        finally:
            boss.stop()
            worker.stop()
