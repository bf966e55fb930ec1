"""A headless run joins a fleet (`sagent -p ... --fleet NAME --nats URL --label L`): its agent messages a
served agent by label and is reached by its answer during the run; a wrong setup is one clear line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response
from tests.fakes.nats_server import NatsServer, free_port
from tests.fleet_nats.helpers import MODEL, WAIT, Served, echo, environment, fleet, sent_texts


def headless(nats_url: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "sagent.cli.main", "--model", MODEL, "--nats", nats_url, *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=WAIT, stdin=subprocess.DEVNULL)


def test_a_headless_client_in_the_fleet_asks_a_served_agent_and_hears_its_answer_by_label(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    client_script = [
        # Asks b, then works on something long: b's answer preempts it.
        tool_use_response([("AgentSend", {"to": "b", "message": "which port?"}), ("Bash", {"command": "sleep 60"})]),
        echo,
        echo,
    ]
    b_script = [tool_use_response([("AgentSend", {"to": "client", "message": "port 8080"})]), text_response("told")]
    with FakeAnthropic(client_script) as fake_client, FakeAnthropic(b_script) as fake_b:
        b = Served(nats_server, "team", "b", fake_b, tmp_path / "b")
        try:
            env = environment(fake_client, tmp_path / "client")
            run = headless(
                nats_server.url,
                env,
                *("-p", "ask b for the port", "--fleet", "team", "--label", "client", "--allowedTools", "Bash"),
                *("--cwd", str(tmp_path)),
            )
            assert run.returncode == 0, run.stderr
            assert "echo: [message from b]\nport 8080" in run.stdout  # read while `sleep 60` still ran
            assert "which port?" in " ".join(t for r in fake_b.requests for t in sent_texts(r))
            # The client's label keeps its place (it was named): the fleet knows it after the run.
            sent = fleet(nats_server, "team", b.env, "send", "client", "later")
            assert sent.returncode == 0 and "queued for client" in sent.stdout
        finally:
            b.stop()


def test_a_headless_client_with_a_bad_fleet_setup_says_what_is_wrong_in_one_line(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    env = environment(FakeAnthropic([]), tmp_path)
    without_fleet = headless(nats_server.url, env, "-p", "hi")
    assert without_fleet.returncode == 2
    assert "--nats and --label place the agent in a fleet: give --fleet NAME too" in without_fleet.stderr
    bad_name = headless(nats_server.url, env, "-p", "hi", "--fleet", "no.dots")
    assert bad_name.returncode == 2 and "a fleet name is letters" in bad_name.stderr
    dead = headless(f"nats://127.0.0.1:{free_port()}", env, "-p", "hi", "--fleet", "f1")
    assert dead.returncode == 1 and "cannot reach the NATS server" in dead.stderr
    for run in (without_fleet, bad_name, dead):
        assert "Traceback" not in run.stderr and len(run.stderr.strip().splitlines()) == 1, run.stderr


def test_a_sub_agent_on_a_worker_shows_its_progress_in_the_parents_stream_json(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    client_script = [
        tool_use_response([("AgentSpawn", {"prompt": "count the files", "label": "counter", "on": "any"})]),
        text_response("the worker counted"),
    ]
    worker_script = [tool_use_response([("Glob", {"pattern": "*"})], text="Listing."), text_response("42 files")]
    with FakeAnthropic(client_script) as fake_client, FakeAnthropic(worker_script) as fake_worker:
        worker = Served(nats_server, "f1", "worker1", fake_worker, tmp_path / "w", "--worker")
        try:
            env = environment(fake_client, tmp_path / "client")
            run = headless(
                nats_server.url,
                env,
                *("-p", "count them", "--fleet", "f1", "--output-format", "stream-json", "--cwd", str(tmp_path)),
            )
            assert run.returncode == 0, run.stderr
        finally:
            worker.stop()
    records = [json.loads(line) for line in run.stdout.splitlines()]
    [spawn] = [
        block
        for r in records
        if r["type"] == "assistant" and r["parent_tool_use_id"] is None
        for block in r["message"]["content"]
        if block["type"] == "tool_use"
    ]
    child = [r for r in records if r.get("parent_tool_use_id") == spawn["id"]]
    kinds = [(r["type"], r["message"]["content"][0]["type"]) for r in child]
    # The worker's child: its response with a Glob call, the Glob's result, its answer; in that order.
    assert kinds == [("assistant", "text"), ("user", "tool_result"), ("assistant", "text")], kinds
    assert child[-1]["message"]["content"][0]["text"] == "42 files"
    # ... before the parent's tool result, which carries the same answer.
    [answer] = [i for i, r in enumerate(records) if r["type"] == "user" and r["parent_tool_use_id"] is None]
    assert records.index(child[-1]) < answer
    assert "42 files" in json.dumps(records[answer])
