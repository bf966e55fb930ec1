"""The orchestration patterns with steps on another process: a real nats-server and one `sagent serve
--worker` process (on the fake Anthropic server) for the whole module, a lead agent in this process."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from sagent import Agent, Fleet, RoutedModel, SessionLog
from sagent.evidence.capsules import sha256_text
from sagent.evidence.verify import verify_tree
from sagent.fleet_nats import NatsBus
from sagent.patterns import Handoff, Parallel, PatternResult, Sequential, Step, StepResult, Triage
from sagent.providers.scripted import text_turn, tool_turn
from sagent.types import Usage
from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response
from tests.fakes.nats_server import NatsServer, nats_binary
from tests.fleet_nats.helpers import Served, sent_texts

T = TypeVar("T")
FLEET = "patterns"
# claude-sonnet-4-6 on the worker: $3 per million input tokens, $15 per million output; 100 in, 20 out a response.
PER_RESPONSE = 100 * 3 / 1e6 + 20 * 15 / 1e6

# What the worker's model answers, by the label of the sub-agent asking (each test its own labels).
WORKER_SCRIPTS = {
    "seq-edit": [text_response("EDITED: short and sharp")],
    "bh-edit": [text_response("EDITED with the earlier handoffs in view")],
    "par-one": [text_response("one says yes")],
    "par-two": [text_response("two says no")],
    "tri-router": [tool_use_response([("Route", {"agent": "tri-billing", "note": "an invoice"})])],
    "hand-expert": [text_response("the expert finished it")],
    "trip-expert": [
        tool_use_response([("Glob", {"pattern": "*.txt"})], text="Looking at the files."),
        tool_use_response([("Handoff", {"agent": "trip-desk", "note": "found it, tell them"})]),
        text_response("back to the desk"),
    ],
}


def by_label(request: dict[str, Any]) -> str:
    system = request["body"].get("system") or ""
    text = system if isinstance(system, str) else " ".join(b.get("text", "") for b in system)
    found = re.search(r'You are the sub-agent "([^"]+)"', text)
    return found.group(1) if found else "?"


@pytest.fixture(scope="module")
def worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[NatsServer, FakeAnthropic]]:
    if nats_binary() is None:
        pytest.skip("nats-server is not installed (apt-get install nats-server); .ci/run installs it")
    home = tmp_path_factory.mktemp("patterns")
    server = NatsServer(home / "jetstream").start()
    try:
        with FakeAnthropic(scripts={k: list(v) for k, v in WORKER_SCRIPTS.items()}, route=by_label) as fake:
            served = Served(server, FLEET, "worker1", fake, home / "worker", "--worker")
            try:
                yield server, fake
            finally:
                served.stop()
    finally:
        server.stop()


def asked(fake: FakeAnthropic, label: str) -> list[dict[str, Any]]:
    return [r for r in fake.requests if by_label(r) == label]


def run_lead(
    server: NatsServer,
    label: str,
    scripts: dict[str, list[Any]],
    body: Callable[[Agent], Awaitable[T]],
    logs: Path | None = None,
    **options: Any,
) -> T:
    async def main() -> T:
        bus = NatsBus(server.url, fleet=FLEET)
        model = RoutedModel({label: [], **scripts}, name="claude-sonnet-4-6")
        log = SessionLog.create(logs, {"provider": "scripted", "model": model.name}, directory=logs) if logs else None
        lead = Agent(model, fleet=Fleet(bus=bus), label=label, session=log, **options)
        try:
            return await body(lead)
        finally:
            await lead.aclose()
            bus.close()

    return asyncio.run(main())


def test_sequential_hands_a_local_answer_to_a_step_on_the_worker(
    worker: tuple[NatsServer, FakeAnthropic], tmp_path: Path
) -> None:
    server, fake = worker

    async def body(lead: Agent) -> tuple[PatternResult, float]:
        steps = [Step("seq-draft"), Step("seq-edit", on="worker1", template="Edit this:\n{input}")]
        result = await Sequential(steps).run(lead, "a tagline")
        return result, lead.cost.total_usd

    result, total = run_lead(server, "lead-seq", {"seq-draft": [text_turn("a draft line")]}, body, tmp_path)
    assert result.ok and result.text == "EDITED: short and sharp"
    draft, edit = result.steps
    assert draft.where == "here" and edit.where.startswith("on ") and edit.session_id is None
    assert "Edit this:\na draft line" in sent_texts(asked(fake, "seq-edit")[0])
    # The worker's response joins the lead's tree, with the local step's.
    assert edit.cost_usd == pytest.approx(PER_RESPONSE)
    assert total == pytest.approx(draft.cost_usd + PER_RESPONSE)
    # Both handoffs are sealed in the lead's log: the local one in both logs, the remote one on its side.
    [log] = tmp_path.glob("*.jsonl")
    report = verify_tree(log)
    assert report.ok and report.paired == 2 and report.capsules == 6
    capsules = [json.loads(line) for line in log.read_text().splitlines() if '"kind":"capsule"' in line]
    far = [(c["role"], c["capsule"]["type"]) for c in capsules if "seq-edit" in json.dumps(c["capsule"])]
    assert far == [("sent", "spawn"), ("received", "result")]
    spawn, answer = (c["capsule"] for c in capsules if "seq-edit" in json.dumps(c["capsule"]))
    assert spawn["prompt_sha256"] == sha256_text("Edit this:\na draft line")
    assert answer["prompt_sha256"] == sha256_text("EDITED: short and sharp")
    assert answer["parents"] == [capsules[-2]["id"]] and answer["budget"]["usd"] == pytest.approx(PER_RESPONSE)


def test_a_step_on_the_worker_carries_the_last_handoffs_when_the_lead_bounds_them(
    worker: tuple[NatsServer, FakeAnthropic], tmp_path: Path
) -> None:
    server, fake = worker

    async def body(lead: Agent) -> PatternResult:
        steps = [Step("bh-draft"), Step("bh-edit", on="worker1", template="Edit this:\n{input}")]
        return await Sequential(steps).run(lead, "a tagline")

    scripts = {"bh-draft": [text_turn("a draft line")]}
    result = run_lead(server, "lead-bh", scripts, body, tmp_path, handoff_capsules=4)
    assert result.ok
    sent = (
        "[Earlier handoffs: the last 2 of 2, oldest first]\n(1) spawn lead-bh → bh-draft: a tagline\n"
        "(2) result bh-draft → lead-bh: a draft line\n[Your task]\nEdit this:\na draft line"
    )
    assert sent in sent_texts(asked(fake, "bh-edit")[0])
    [log] = tmp_path.glob("*.jsonl")
    assert verify_tree(log).ok
    capsules = [json.loads(line)["capsule"] for line in log.read_text().splitlines() if '"kind":"capsule"' in line]
    spawn = next(c for c in capsules if c["type"] == "spawn" and c["receiver"]["label"] == "bh-edit")
    assert spawn["prompt_sha256"] == sha256_text(sent) and spawn["context"]["carried"] == 2


def test_parallel_runs_on_any_worker_and_by_label_and_a_function_combines(
    worker: tuple[NatsServer, FakeAnthropic],
) -> None:
    server, _ = worker

    def verdicts(task: str, results: tuple[StepResult, ...]) -> str:
        return f"{task}: " + " / ".join(r.text for r in results)

    async def body(lead: Agent) -> tuple[PatternResult, float]:
        pattern = Parallel([Step("par-one", on="any"), Step("par-two", on="worker1")], aggregator=verdicts)
        result = await pattern.run(lead, "ship?")
        return result, lead.cost.total_usd

    result, total = run_lead(server, "lead-par", {}, body)
    assert result.ok and result.text == "ship?: one says yes / two says no"
    assert total == pytest.approx(2 * PER_RESPONSE)


def test_a_router_on_the_worker_routes_with_its_tool_to_a_local_agent(worker: tuple[NatsServer, FakeAnthropic]) -> None:
    server, fake = worker
    agents = [Step("tri-support", description="technical problems"), Step("tri-billing", description="invoices")]

    async def body(lead: Agent) -> PatternResult:
        return await Triage(agents, router=Step("tri-router", on="worker1")).run(lead, "charged twice")

    result = run_lead(server, "lead-tri", {"tri-billing": [text_turn("refunded")]}, body)
    assert result.ok and result.text == "refunded"
    router = result.steps[0]
    assert router.text == "tri-billing" and router.picked is not None and router.picked.note == "an invoice"
    [request] = asked(fake, "tri-router")  # its run ends with the Route call
    offered = {t["name"]: t for t in request["body"]["tools"]}
    assert offered["Route"]["input_schema"]["properties"]["agent"]["enum"] == ["tri-support", "tri-billing"]


def test_a_local_agent_hands_the_conversation_to_one_on_the_worker(worker: tuple[NatsServer, FakeAnthropic]) -> None:
    server, fake = worker
    desk = [tool_turn(("Handoff", {"agent": "hand-expert", "note": "needs the expert"})), text_turn("passing it on")]

    async def body(lead: Agent) -> PatternResult:
        pattern = Handoff([Step("hand-desk"), Step("hand-expert", on="worker1", description="the expert")])
        return await pattern.run(lead, "a hard question")

    result = run_lead(server, "lead-hand", {"hand-desk": desk}, body)
    assert result.ok and result.text == "the expert finished it"
    [request] = asked(fake, "hand-expert")
    given = sent_texts(request)[0]
    assert "[user]\na hard question" in given and "[hand-desk]\npassing it on" in given
    assert "hand-desk's note for you: needs the expert" in given
    assert any(t["name"] == "Handoff" for t in request["body"]["tools"])  # it could pass it back


def test_a_spent_budget_stops_before_a_step_on_the_worker(worker: tuple[NatsServer, FakeAnthropic]) -> None:
    server, fake = worker
    costly = text_turn("spent it", usage=Usage(input_tokens=100_000))  # $0.30 on claude-sonnet-4-6

    async def body(lead: Agent) -> PatternResult:
        return await Sequential([Step("bud-local"), Step("bud-far", on="worker1")]).run(lead, "go")

    result = run_lead(server, "lead-bud", {"bud-local": [costly]}, body, max_budget_usd=0.1)
    assert result.subtype == "error_max_budget_usd"
    assert [s.subtype for s in result.steps] == ["success", "error_max_budget_usd"]
    assert "budget" in result.step("bud-far").text
    assert asked(fake, "bud-far") == []


def test_an_agent_on_the_worker_hands_its_part_of_the_conversation_back(
    worker: tuple[NatsServer, FakeAnthropic],
) -> None:
    server, fake = worker
    desk = [
        tool_turn(("Handoff", {"agent": "trip-expert", "note": "find the notes file"})),
        text_turn("asking the expert"),
        text_turn("the notes file is there"),
    ]

    async def body(lead: Agent) -> PatternResult:
        pattern = Handoff([Step("trip-desk"), Step("trip-expert", on="worker1", description="knows the files")])
        return await pattern.run(lead, "is there a notes file?")

    model_scripts = {"trip-desk": desk}
    result = run_lead(server, "lead-trip", model_scripts, body)
    assert result.ok and result.text == "the notes file is there"
    assert [s.label for s in result.steps] == ["trip-desk", "trip-expert", "trip-desk"]
    speakers = [t.speaker for t in result.conversation]
    assert speakers[:3] == ["user", "trip-desk", "trip-expert"] and "Glob result" in speakers
    called = [t.text for t in result.conversation if t.speaker == "trip-expert"]
    assert called == ["Looking at the files.", '[called Glob {"pattern": "*.txt"}]', "back to the desk"]
    assert len(asked(fake, "trip-expert")) == 3
    given = result.steps[2].prompt  # the desk, again: it continues with what the expert did
    assert '[called Glob {"pattern": "*.txt"}]' in given and "[Glob result]" in given
    assert "trip-expert's note for you: found it, tell them" in given
