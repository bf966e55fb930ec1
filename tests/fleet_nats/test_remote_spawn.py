"""AgentSpawn with `on`: a one-shot sub-agent runs on another `sagent serve` process (any worker of the
queue group, or one by label), and its answer and its cost come back to the parent's tree."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response
from tests.fakes.nats_server import NatsServer
from tests.fleet_nats.helpers import EventTap, Served, fleet, sent_texts, wait_until

# claude-sonnet-4-6: $3 per million input tokens, $15 per million output; each fake response is 100 in, 20 out.
PER_RESPONSE = 100 * 3 / 1e6 + 20 * 15 / 1e6


def all_sent(fake: FakeAnthropic) -> str:
    return " ".join(t for r in fake.requests for t in sent_texts(r))


def test_a_sub_agent_spawned_on_any_worker_answers_and_its_cost_joins_the_parents(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    lead_script = [
        tool_use_response([("AgentSpawn", {"prompt": "count the files", "label": "counter", "on": "any"})]),
        text_response("the worker counted"),
    ]
    with FakeAnthropic(lead_script) as lead_fake, FakeAnthropic([text_response("42 files")]) as worker_fake:
        worker = Served(nats_server, "f1", "worker1", worker_fake, tmp_path / "w", "--worker")
        lead = Served(nats_server, "f1", "lead", lead_fake, tmp_path / "l")  # not a worker: never its own child
        try:
            assert fleet(nats_server, "f1", lead.env, "send", "lead", "count them").returncode == 0
            wait_until(lambda: "42 files" in str([r["body"]["messages"] for r in lead_fake.requests]), "the answer")
            assert "count the files" in all_sent(worker_fake)
            answer = str(lead_fake.requests[-1]["body"]["messages"])
            assert "counter (on " in answer and "answered" in answer
            # The lead's tree spent its two responses and the counter's one.
            expected = f"${3 * PER_RESPONSE:.4f}"
            wait_until(
                lambda: any(
                    line.startswith("lead ") and line.endswith(expected)
                    for line in fleet(nats_server, "f1", lead.env, "ls").stdout.splitlines()
                ),
                "the lead's cost to include the counter's",
            )
        finally:
            lead.stop()
            worker.stop()


def test_a_spawn_on_a_process_that_is_not_there_says_why(nats_server: NatsServer, tmp_path: Path) -> None:
    lead_script = [
        tool_use_response([("AgentSpawn", {"prompt": "count", "on": "nobody"})]),
        text_response("it was refused"),
    ]
    with FakeAnthropic(lead_script) as lead_fake:
        lead = Served(nats_server, "f1", "lead", lead_fake, tmp_path)
        try:
            assert fleet(nats_server, "f1", lead.env, "send", "lead", "count them").returncode == 0
            wait_until(lambda: len(lead_fake.requests) >= 2, "the refusal")
            answer = str(lead_fake.requests[-1]["body"]["messages"])
            assert "cannot spawn: no serve process 'nobody' takes sub-agents now" in answer
        finally:
            lead.stop()


def test_the_trees_budget_holds_across_processes(nats_server: NatsServer, tmp_path: Path) -> None:
    # The task is long: the counter's first request would cost more than what the lead's first response
    # left of the budget (about $0.014 a request of sagent's system prompt, $0.015 more for the task).
    task = "count the files. " + "Be thorough. " * 1500
    lead_script = [
        tool_use_response([("AgentSpawn", {"prompt": task, "label": "counter", "on": "worker1"})]),
        text_response("the counter could not start"),
    ]
    budget = "0.02"
    with FakeAnthropic(lead_script) as lead_fake, FakeAnthropic([text_response("42 files")]) as worker_fake:
        worker = Served(nats_server, "f1", "worker1", worker_fake, tmp_path / "w")
        lead = Served(nats_server, "f1", "lead", lead_fake, tmp_path / "l", "--max-budget-usd", budget)
        try:
            assert fleet(nats_server, "f1", lead.env, "send", "lead", "count them").returncode == 0
            logs = tmp_path / "l" / "data"

            def tool_result() -> str:
                text = " ".join(p.read_text() for p in logs.rglob("*.jsonl"))
                return text if "counter (on " in text and '"type":"result"' in text else ""

            logged = wait_until(tool_result, "the counter's refusal and the lead's end")
            assert "did not finish (error_max_budget_usd)" in logged
            assert "spent of the budget of $0.0194" in logged  # the counter had what the lead had left
            assert worker_fake.requests == []  # its request would have crossed the tree's budget: not sent
        finally:
            lead.stop()
            worker.stop()


def test_a_sub_agent_elsewhere_is_stopped_when_its_parent_stops_waiting_for_it(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    lead_script = [tool_use_response([("AgentSpawn", {"prompt": "build", "label": "builder", "on": "any"})])]
    worker_script = [tool_use_response([("Bash", {"command": "sleep 300"})]), text_response("built")]
    tap = EventTap(nats_server, "f1")
    with FakeAnthropic(lead_script) as lead_fake, FakeAnthropic(worker_script) as worker_fake:
        worker = Served(nats_server, "f1", "worker1", worker_fake, tmp_path / "w", "--worker", "--allowedTools", "Bash")
        lead = Served(nats_server, "f1", "lead", lead_fake, tmp_path / "l")
        try:
            assert fleet(nats_server, "f1", lead.env, "send", "lead", "build it").returncode == 0
            wait_until(lambda: len(worker_fake.requests) >= 1, "the builder to start its long call")
            assert lead.stop() == 0  # the lead's wait is cut short: its child elsewhere must not run on unseen
            [ended] = wait_until(lambda: tap.results("builder"), "the builder's end")
            assert (ended["subtype"], ended["text"]) == ("interrupted", "stopped by lead")  # not the budget
            gone = wait_until(
                lambda: (r := fleet(nats_server, "f1", worker.env, "send", "builder", "hi")).returncode == 2 and r,
                "the builder to stop and leave the fleet",
            )
            assert "no agent is called 'builder'" in gone.stderr
            assert worker.process.poll() is None
        finally:
            lead.stop()
            worker.stop()
            tap.close()
