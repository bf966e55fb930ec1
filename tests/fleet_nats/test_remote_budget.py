"""When the tree's budget is spent, its sub-agents on other processes end as `error_max_budget_usd` with the
budget's reason, as the agents in the parent's own process do: a one-shot one waiting on a long call, and
a persistent one at work (which reports so to its parent). An ordinary stop still ends them interrupted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.fakes.anthropic_server import FakeAnthropic, Reply, text_response, tool_use_response
from tests.fakes.nats_server import NatsServer
from tests.fleet_nats.helpers import EventTap, Served, fleet, sent_texts, wait_until

BUDGET = "0.10"  # claude-sonnet-4-6: the spender's big answer (10,000 tokens out) alone costs $0.15


def waits_for(gate: Path, name: str) -> str:
    """A Bash command that says it started, then runs until the file `name` appears."""
    return f"touch {gate / (name + '-started')}; while [ ! -f {gate / name} ]; do sleep 0.05; done; echo {name} over"


def lead_script(on: str) -> Any:
    def answer(request: dict[str, Any]) -> Reply:
        last = str(request["body"]["messages"][-1]["content"])
        if "started prober" in last:  # the persistent ones run: now a one-shot one, waited for
            return tool_use_response([("AgentSpawn", {"prompt": "task-builder", "label": "builder", "on": on})])
        if sent_texts(request)[-1:] == ["start the team"]:
            persistent = {"on": on, "persistent": True}
            return tool_use_response(
                [
                    ("AgentSpawn", {"prompt": "task-prober", "label": "prober", **persistent}),
                    ("AgentSpawn", {"prompt": "task-spender", "label": "spender", **persistent}),
                ]
            )
        return text_response("ok")

    return answer


def worker_script(gate: Path) -> Any:
    def answer(request: dict[str, Any]) -> Reply:
        task = sent_texts(request)[0]
        answered = "tool_result" in str(request["body"]["messages"][-1]["content"])
        if "task-spender" in task:
            if answered:
                return text_response("spent a lot", output_tokens=10_000)
            return tool_use_response([("Bash", {"command": waits_for(gate, "spend")})])
        if answered:
            return text_response("done")
        name = "probe" if "task-prober" in task else "build"
        return tool_use_response([("Bash", {"command": waits_for(gate, name)})])

    return answer


@pytest.mark.parametrize("on", ["worker1", "lead"])  # another serve process, or the parent's own
def test_sub_agents_elsewhere_end_on_the_trees_budget_with_its_reason(
    nats_server: NatsServer, tmp_path: Path, on: str
) -> None:
    gate = tmp_path / "gate"
    gate.mkdir()
    tap = EventTap(nats_server, "f1")
    leads, workers = lead_script(on), worker_script(gate)

    def lead_and_children(request: dict[str, Any]) -> Reply:
        return workers(request) if sent_texts(request)[0].startswith("task-") else leads(request)

    # On the lead's own process, one fake answers the lead and its sub-agents.
    lead_steps = [leads] * 8 if on == "worker1" else [lead_and_children] * 16
    with FakeAnthropic(lead_steps) as lead_fake, FakeAnthropic([workers] * 8) as worker_fake:
        tools = ("--allowedTools", "Bash")
        worker = Served(nats_server, "f1", "worker1", worker_fake, tmp_path / "w", *tools) if on == "worker1" else None
        lead = Served(nats_server, "f1", "lead", lead_fake, tmp_path / "l", "--max-budget-usd", BUDGET, *tools)
        try:
            assert fleet(nats_server, "f1", lead.env, "send", "lead", "start the team").returncode == 0
            # The prober (persistent) and the builder (one-shot, its parent waiting) are at work.
            wait_until(lambda: (gate / "probe-started").exists() and (gate / "build-started").exists(), "work")
            (gate / "spend").touch()  # the spender's answer spends the tree's budget
            prober = wait_until(lambda: tap.results("prober"), "the prober's end")[-1]
            builder = wait_until(lambda: tap.results("builder"), "the builder's end")[-1]
            for ended in (prober, builder):
                assert ended["subtype"] == "error_max_budget_usd", ended
                assert "which reaches the budget of $0.1000 (max_budget_usd)" in ended["text"]
            assert not (gate / "probe").exists() and not (gate / "build").exists()  # stopped at work
            # The prober tells its parent why it stopped; the parent's run ends on the budget too.
            logs = tmp_path / "l" / "data"

            def lead_log() -> str:
                text = " ".join(p.read_text() for p in logs.rglob("*.jsonl"))
                return text if '"sender":"prober"' in text.replace(" ", "") else ""

            logged = wait_until(lead_log, "the prober's report")
            report = next(line for line in logged.splitlines() if '"sender":"prober"' in line.replace(" ", ""))
            assert "[stopped (error_max_budget_usd)] stopped: $" in report
            assert "which reaches the budget of $0.1000 (max_budget_usd)" in report
            assert '"subtype":"error_max_budget_usd"' in logged.replace(" ", "")
            # Its wait for the builder ended on the budget too (what its stream-json shows as the call's result).
            assert "stopped: the budget (max_budget_usd) was reached before this tool call finished" in logged
            assert "interrupted by the user" not in logged
        finally:
            for name in ("probe", "build", "spend"):
                (gate / name).touch()  # whatever still runs ends
            lead.stop()
            if worker is not None:
                worker.stop()
            tap.close()


def test_an_idle_persistent_sub_agent_elsewhere_stopped_on_the_budget_reports_why(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    def lead(request: dict[str, Any]) -> Reply:
        texts = sent_texts(request)
        if texts[-1:] == ["start an idler"]:
            spawn = {"prompt": "task-idler", "label": "idler", "on": "worker1", "persistent": True}
            return tool_use_response([("AgentSpawn", spawn)])
        if any("[idle] ready" in text for text in texts[-1:]):
            return text_response("noted at length", output_tokens=10_000)  # this answer spends the budget
        return text_response("ok")

    with FakeAnthropic([lead] * 6) as lead_fake, FakeAnthropic([text_response("ready")]) as worker_fake:
        worker = Served(nats_server, "f1", "worker1", worker_fake, tmp_path / "w")
        boss = Served(nats_server, "f1", "lead", lead_fake, tmp_path / "l", "--max-budget-usd", BUDGET)
        try:
            assert fleet(nats_server, "f1", boss.env, "send", "lead", "start an idler").returncode == 0
            logs = tmp_path / "l" / "data"

            def stopped_report() -> str:
                lines = [line for p in logs.rglob("*.jsonl") for line in p.read_text().splitlines()]
                return next((line for line in lines if "[stopped" in line and '"sender":"idler"' in line), "")

            report = wait_until(stopped_report, "the idler's last report")
            assert "[stopped (error_max_budget_usd)] stopped: $" in report
            assert "which reaches the budget of $0.1000 (max_budget_usd)" in report
        finally:
            boss.stop()
            worker.stop()
