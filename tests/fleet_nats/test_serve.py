"""`sagent serve` processes on a real nats-server, driven by `sagent fleet` from other processes: messages
by label with receipts, discovery, durable inboxes across restarts and kills, and clear errors."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response
from tests.fakes.nats_server import NatsServer
from tests.fleet_nats.helpers import Served, echo, environment, fleet, sent_texts, wait_until


def texts_received(fake: FakeAnthropic) -> list[str]:
    return [t for r in fake.requests for t in sent_texts(r)]


def test_a_message_sent_from_another_process_reaches_the_served_agent_with_a_receipt(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    with FakeAnthropic([echo] * 4) as fake:
        served = Served(nats_server, "f1", "b", fake, tmp_path)
        try:
            sent = fleet(nats_server, "f1", served.env, "send", "b", "hello b")
            assert sent.returncode == 0, sent.stderr
            assert "delivered to b; it was idle" in sent.stdout
            wait_until(lambda: "hello b" in texts_received(fake), "the model to be asked")
            listed = wait_until(
                lambda: (r := fleet(nats_server, "f1", served.env, "ls")).stdout.count("\n") >= 2 and r, "ls"
            )
            row = listed.stdout.splitlines()[1].split()
            assert row[0] == "b" and row[2] == "anthropic/claude-sonnet-4-6" and row[3] in ("idle", "working")
        finally:
            assert served.stop() == 0
        assert "messages to it wait for its restart" in served.stderr


def test_an_unknown_label_is_a_clear_error_naming_the_fleets_agents(nats_server: NatsServer, tmp_path: Path) -> None:
    with FakeAnthropic([echo]) as fake:
        served = Served(nats_server, "f1", "b", fake, tmp_path)
        try:
            wrong = fleet(nats_server, "f1", served.env, "send", "nobody", "hi")
            assert wrong.returncode == 2
            assert "no agent is called 'nobody' in the fleet 'f1'; its agents are: b" in wrong.stderr
            other_fleet = fleet(nats_server, "f2", served.env, "send", "b", "hi")
            assert other_fleet.returncode == 2
            assert "no agent is called 'b' in the fleet 'f2'; its agents are: none" in other_fleet.stderr
            bad_name = fleet(nats_server, "no.dots", served.env, "ls")
            assert bad_name.returncode == 1 and "a fleet name is letters" in bad_name.stderr
            assert "Traceback" not in wrong.stderr + other_fleet.stderr + bad_name.stderr
        finally:
            served.stop()


def test_a_dead_server_is_a_clear_error_after_a_bounded_wait(tmp_path: Path) -> None:
    from tests.fakes.nats_server import free_port

    env = environment(FakeAnthropic([]), tmp_path)
    dead = NatsServer.__new__(NatsServer)
    dead.port = free_port()
    result = fleet(dead, "f1", env, "ls", "--connect-timeout", "1")
    assert result.returncode == 1
    assert f"cannot reach the NATS server at nats://127.0.0.1:{dead.port}" in result.stderr
    assert "Traceback" not in result.stderr


def test_two_served_agents_message_each_other_by_label(nats_server: NatsServer, tmp_path: Path) -> None:
    a_script = [
        tool_use_response([("AgentSend", {"to": "b", "message": "which port does the server use?"})]),
        text_response("asked b"),
        text_response("b says 8080"),
    ]
    b_script = [
        tool_use_response([("AgentSend", {"to": "a", "message": "port 8080"})]),
        text_response("told a"),
    ]
    with FakeAnthropic(a_script) as fake_a, FakeAnthropic(b_script) as fake_b:
        a = Served(nats_server, "team", "a", fake_a, tmp_path / "a")
        b = Served(nats_server, "team", "b", fake_b, tmp_path / "b")
        try:
            assert fleet(nats_server, "team", a.env, "send", "a", "find the port").returncode == 0
            wait_until(lambda: "port 8080" in " ".join(texts_received(fake_a)), "b's answer to reach a")
            assert "which port does the server use?" in " ".join(texts_received(fake_b))
            # The tool result a saw is b's receipt.
            results = [str(m) for r in fake_a.requests for m in r["body"]["messages"]]
            assert any("delivered to b" in m for m in results)
        finally:
            a.stop()
            b.stop()


def test_a_message_to_a_stopped_agent_waits_and_arrives_once_after_its_restart(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    with FakeAnthropic([echo] * 6) as fake:
        served = Served(nats_server, "f1", "b", fake, tmp_path)
        assert fleet(nats_server, "f1", served.env, "send", "b", "first").returncode == 0
        wait_until(lambda: "first" in texts_received(fake), "the first message")
        assert served.stop() == 0
        queued = fleet(nats_server, "f1", served.env, "send", "b", "while you were away")
        assert queued.returncode == 0 and "queued for b: it is not running now" in queued.stdout
        again = Served(nats_server, "f1", "b", fake, tmp_path)
        try:
            assert "continuing its session" in again.stderr
            wait_until(lambda: "while you were away" in texts_received(fake), "the waiting message")
            last = fake.requests[-1]
            assert sent_texts(last).count("while you were away") == 1
            assert "first" in sent_texts(last)  # the same conversation, resumed
        finally:
            again.stop()


def test_a_served_agent_killed_mid_task_gets_its_unread_message_once_after_a_restart(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    slow = replace(text_response("still thinking"), delay=120.0)
    with FakeAnthropic([slow]) as stuck, FakeAnthropic([echo] * 4) as fresh:
        served = Served(nats_server, "f1", "b", stuck, tmp_path)
        assert fleet(nats_server, "f1", served.env, "send", "b", "a long task").returncode == 0
        wait_until(lambda: stuck.requests, "the long task to start")
        busy = fleet(nats_server, "f1", served.env, "send", "b", "the unread message")
        assert "it is working and will read it at its next safe point" in busy.stdout
        served.kill()  # SIGKILL: the message was handed over but never reached the log
        again = Served(nats_server, "f1", "b", fresh, tmp_path)
        try:
            again.env = environment(fresh, tmp_path)
            wait_until(lambda: "the unread message" in texts_received(fresh), "the unread message")
            again_sent = fleet(nats_server, "f1", again.env, "send", "b", "after")
            assert again_sent.returncode == 0
            wait_until(lambda: "after" in texts_received(fresh), "the next message")
            assert sent_texts(fresh.requests[-1]).count("the unread message") == 1
        finally:
            again.stop()


def test_fleet_stop_ends_the_served_agent_and_takes_it_out_of_the_fleet(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    with FakeAnthropic([echo]) as fake:
        served = Served(nats_server, "f1", "b", fake, tmp_path)
        stopped = fleet(nats_server, "f1", served.env, "stop", "b")
        assert stopped.returncode == 0, stopped.stderr
        assert served.process.wait(90) == 0
        assert "was stopped and has left the fleet" in served.stderr
        gone = fleet(nats_server, "f1", served.env, "send", "b", "hi")
        assert gone.returncode == 2 and "no agent is called 'b'" in gone.stderr


def test_nothing_is_lost_when_the_nats_server_restarts(nats_server: NatsServer, tmp_path: Path) -> None:
    with FakeAnthropic([echo] * 20) as fake:  # (a send stored while b reconnects is a turn of its own later)
        served = Served(nats_server, "f1", "b", fake, tmp_path)
        served.stop()
        assert "queued for b" in fleet(nats_server, "f1", served.env, "send", "b", "stored before").stdout
        nats_server.restart()  # same port and store: JetStream keeps what it stored
        again = Served(nats_server, "f1", "b", fake, tmp_path)
        try:
            wait_until(lambda: "stored before" in texts_received(fake), "the stored message")
            nats_server.restart()  # while b runs: its client reconnects by itself
            # Until b's client has reconnected and answers receipts again, a send is stored and says "queued"
            # (under load that can take longer than a receipt's wait); once it answers, one is delivered live.
            sent = wait_until(
                lambda: (
                    (r := fleet(nats_server, "f1", again.env, "send", "b", "after the restart")).returncode == 0
                    and "delivered to b" in r.stdout
                    and r
                ),
                "a send after the restart delivered to b while it runs",
            )
            assert "delivered to b" in sent.stdout
            wait_until(lambda: "after the restart" in texts_received(fake), "the message sent after the restart")
            assert sent_texts(fake.requests[-1]).count("stored before") == 1
        finally:
            again.stop()


def test_an_agent_that_vanishes_drops_out_of_the_listing(nats_server: NatsServer, tmp_path: Path) -> None:
    with FakeAnthropic([echo]) as fake:
        served = Served(nats_server, "f1", "b", fake, tmp_path, "--heartbeat-timeout", "2")
        wait_until(lambda: "anthropic/" in fleet(nats_server, "f1", served.env, "ls").stdout, "b in the listing")
        served.kill()
        wait_until(lambda: "no agent is running" in fleet(nats_server, "f1", served.env, "ls").stdout, "b to drop out")


def test_attach_streams_the_agents_events_sends_what_is_typed_and_detaches_without_stopping_it(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    import subprocess
    import sys

    with FakeAnthropic([echo] * 2) as fake:
        served = Served(nats_server, "f1", "b", fake, tmp_path)
        try:
            command = [sys.executable, "-m", "sagent.cli.main", "fleet", "attach", "b"]
            command += ["--nats", nats_server.url, "--fleet", "f1"]
            pipe = subprocess.PIPE
            attach = subprocess.Popen(command, env=served.env, stdin=pipe, stdout=pipe, stderr=pipe, text=True)
            assert attach.stdin is not None and attach.stdout is not None
            attach.stdin.write("hello from a terminal\n")
            attach.stdin.flush()
            wait_until(lambda: "hello from a terminal" in texts_received(fake), "the typed line to arrive")
            shown = ""
            while "echo: hello from a terminal" not in shown:
                shown += attach.stdout.readline()
            attach.stdin.close()
            assert attach.wait(90) == 0
            assert "detached from b; it keeps running" in attach.stderr.read()
            assert served.process.poll() is None
        finally:
            served.stop()


def test_credentials_are_passed_to_the_server(tmp_path: Path) -> None:
    server = NatsServer(tmp_path / "js", extra=("--auth", "s3cret-token")).start()
    try:
        env = environment(FakeAnthropic([]), tmp_path)
        refused = fleet(server, "f1", env, "ls", "--connect-timeout", "2")
        assert refused.returncode == 1 and "NATS server" in refused.stderr and "Traceback" not in refused.stderr
        allowed = fleet(server, "f1", env, "ls", "--nats-token", "s3cret-token")
        assert allowed.returncode == 0 and "no agent is running in the fleet 'f1'" in allowed.stdout
    finally:
        server.stop()


def test_a_message_to_a_served_agent_waiting_on_a_long_bash_is_read_at_once(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    script = [tool_use_response([("Bash", {"command": "sleep 300"})]), echo, echo, echo]
    with FakeAnthropic(script) as fake:
        served = Served(nats_server, "f1", "b", fake, tmp_path)
        try:
            assert fleet(nats_server, "f1", served.env, "send", "b", "run the long job").returncode == 0
            wait_until(lambda: len(fake.requests) >= 1, "the long job to start")
            from sagent.agent.fleet import Envelope
            from sagent.fleet_nats import NatsBus

            peer = NatsBus(nats_server.url, fleet="f1")  # another agent's message, from this process
            try:
                assert "it is working" in peer.deliver(Envelope("peer", "b", "urgent question")).describe()
            finally:
                peer.close()
            # Read while `sleep 300` still runs: the call went on in the background.
            wait_until(lambda: "urgent question" in " ".join(texts_received(fake)), "the urgent message to be read")
            assert any("background" in str(r["body"]["messages"]) for r in fake.requests[1:])
        finally:
            served.stop()


def test_a_served_agents_sub_agent_is_in_the_fleet_while_it_runs_and_leaves_it_after(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    from tests.cli.test_fleet_cli import label_of

    scripts = {
        "main": [],
        "b": [
            tool_use_response([("AgentSpawn", {"prompt": "say hi to the user", "label": "helper"})]),
            text_response("helper is done"),
        ],
        "helper": [text_response("hi")],
    }

    def route(request: dict) -> str:
        found = label_of(request)
        return "b" if found == "main" else found

    with FakeAnthropic(scripts=scripts, route=route) as fake:
        served = Served(nats_server, "f1", "b", fake, tmp_path)
        try:
            assert fleet(nats_server, "f1", served.env, "send", "b", "get help").returncode == 0
            wait_until(lambda: len(fake.requests) >= 3, "b to hear from its helper")
            gone = wait_until(
                lambda: (r := fleet(nats_server, "f1", served.env, "send", "helper", "hi")).returncode == 2 and r,
                "the helper to leave the fleet",
            )
            assert "no agent is called 'helper'" in gone.stderr and "its agents are: b" in gone.stderr
        finally:
            served.stop()
