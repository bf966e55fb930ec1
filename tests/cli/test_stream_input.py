"""Streaming input never waits and never drops: a stream-json line written while the agent works reaches the
model at the turn's next safe point, not after the sub-agent, tool or wait it is on; every line is read
(bursts, a last line without a newline, lines as a turn ends); and each message gets a result record.

Nothing here is timed: a sub-agent's (or a tool's) work is held until the model has been sent the new
message, so a message that waited for it would hold the test until `HOLD_LIMIT` and fail it."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.cli.stream_session import (
    PROVIDERS,
    Hold,
    Routes,
    StreamSession,
    carries,
    label_of,
    line,
    wait_until,
)

WAIT_FOR_GO = "for i in $(seq 800); do [ -f go ] && exit 0; sleep 0.05; done; exit 1"


def main_requests(fake) -> list[dict]:
    return [r for r in fake.requests if label_of(r) == "main"]


def heard(fake, marker: str) -> bool:
    return any(carries(r, marker) for r in main_requests(fake))


@pytest.mark.parametrize("name", ["anthropic", "openai-chat", "gemini"])
def test_a_message_reaches_the_model_while_a_sub_agent_works(name: str, tmp_path: Path) -> None:
    provider = PROVIDERS[name]
    fake_box: list = []
    held = Hold(provider.text("the helper looked around"), lambda: heard(fake_box[0], "MSG-TWO"))
    routes = Routes(
        main=[
            provider.tools([("AgentSpawn", {"prompt": "look around", "label": "helper"})]),
            provider.text("noted MSG-TWO while the helper works"),
            provider.text("the helper is done and MSG-TWO is noted"),
        ],
        helper=[held],
    )
    with provider.server(routes.steps()) as fake, StreamSession(provider, fake, tmp_path) as session:
        fake_box.append(fake)
        session.write("start a helper: MSG-ONE")
        assert wait_until(lambda: any(label_of(r) == "helper" for r in fake.requests)), "the helper never asked"
        session.write("and meanwhile: MSG-TWO")
        assert wait_until(lambda: len(session.results()) == 2), session.records
        code, err = session.finish()
        requests = list(fake.requests)
    assert code == 0, err
    assert held.released_by_condition, "the message waited for the sub-agent instead of reaching the model"
    # The helper's answer still came back to the model, in the same turn.
    assert any(carries(r, "the helper looked around") for r in requests if label_of(r) == "main")
    results = session.results()
    assert [r["subtype"] for r in results] == ["success", "success"]
    assert results[-1]["result"] == "the helper is done and MSG-TWO is noted"


@pytest.mark.parametrize("name", ["anthropic", "openai-chat"])
def test_a_message_stops_a_wait_on_a_background_sub_agent(name: str, tmp_path: Path) -> None:
    provider = PROVIDERS[name]
    fake_box: list = []
    held = Hold(provider.text("the helper looked around"), lambda: heard(fake_box[0], "MSG-TWO"))
    routes = Routes(
        main=[
            provider.tools([("AgentSpawn", {"prompt": "look around", "label": "helper", "background": True})]),
            provider.tools([("Jobs", {"action": "wait", "id": "job-1", "timeout": 300})]),
            provider.text("noted MSG-TWO"),
            provider.text("the helper is done"),
        ],
        helper=[held],
    )
    with provider.server(routes.steps()) as fake, StreamSession(provider, fake, tmp_path) as session:
        fake_box.append(fake)
        session.write("start a helper and wait for it: MSG-ONE")
        assert wait_until(lambda: len(main_requests(fake)) >= 2), "the model never waited on the job"
        session.write("and meanwhile: MSG-TWO")
        assert wait_until(lambda: len(session.results()) == 2), session.records
        code, err = session.finish()
        requests = list(fake.requests)
    assert code == 0, err
    assert held.released_by_condition, "the message waited for the Jobs wait instead of reaching the model"
    assert any(carries(r, "the helper looked around") for r in requests if label_of(r) == "main")
    assert session.results()[-1]["result"] == "the helper is done"


@pytest.mark.parametrize("name", ["anthropic", "openai-chat", "gemini"])
def test_a_second_line_written_while_a_tool_runs_is_answered(name: str, tmp_path: Path) -> None:
    provider = PROVIDERS[name]
    routes = Routes(
        main=[
            provider.tools([("Bash", {"command": WAIT_FOR_GO})]),
            provider.text("read MSG-TWO"),
            provider.text("the command finished"),
        ]
    )
    with provider.server(routes.steps()) as fake, StreamSession(provider, fake, tmp_path) as session:
        session.write("run the command: MSG-ONE")
        assert wait_until(lambda: any(r.get("type") == "assistant" for r in session.records)), session.records
        session.write("and also: MSG-TWO")
        reached = wait_until(lambda: heard(fake, "MSG-TWO"), 40)
        (session.cwd / "go").write_text("")  # the command ends only now
        assert wait_until(lambda: len(session.results()) == 2), session.records
        code, err = session.finish()
        requests = main_requests(fake)
    assert code == 0, err
    assert reached, "the second line waited for the running command"
    assert carries(requests[-1], "MSG-TWO") and carries(requests[-1], "MSG-ONE")
    assert [r["result"] for r in session.results()] == ["the command finished"] * 2


@pytest.mark.parametrize("name", ["anthropic", "gemini"])
def test_a_burst_of_lines_and_a_last_line_without_newline_are_all_read(name: str, tmp_path: Path) -> None:
    provider = PROVIDERS[name]
    routes = Routes(
        main=[
            provider.tools([("Bash", {"command": WAIT_FOR_GO})]),
            provider.text("read them all"),
            provider.text("done"),
        ]
    )
    burst = ["BURST-1", "BURST-2", "BURST-3", "BURST-4"]
    with provider.server(routes.steps()) as fake, StreamSession(provider, fake, tmp_path) as session:
        session.write("run the command: MSG-ONE")
        assert wait_until(lambda: any(r.get("type") == "assistant" for r in session.records)), session.records
        session.write_raw("\n".join(line(m) for m in burst[:-1]) + "\n\n" + line(burst[-1]))  # no newline at the end
        session.proc.stdin.close()  # end of input right after: the last line is still read
        reached = wait_until(lambda: all(heard(fake, m) for m in burst), 40)
        (session.cwd / "go").write_text("")
        code, err = session.finish()
    assert code == 0, err
    assert reached, "the burst waited for the running command"
    assert len(session.results()) == 1 + len(burst)  # one result record for each message
    assert all(r["subtype"] == "success" for r in session.results())


@pytest.mark.parametrize("name", ["anthropic", "openai-chat"])
def test_lines_written_as_each_turn_ends_are_each_answered(name: str, tmp_path: Path) -> None:
    provider = PROVIDERS[name]
    count = 4
    routes = Routes(main=[provider.text(f"answer {i}") for i in range(count * 2)])
    with provider.server(routes.steps()) as fake, StreamSession(provider, fake, tmp_path) as session:
        session.write("MSG-0")
        for i in range(1, count):
            # The next line goes out as soon as the turn's answer is seen, before (or as) its result is written.
            assert wait_until(lambda i=i: sum(r.get("type") == "assistant" for r in session.records) >= i)
            session.write(f"MSG-{i}")
        code, err = session.finish()
        requests = main_requests(fake)
    assert code == 0, err
    assert all(heard(fake, f"MSG-{i}") for i in range(count))
    assert len(session.results()) == count
    assert carries(requests[-1], f"MSG-{count - 1}")


@pytest.mark.parametrize("name", ["anthropic", "gemini"])
def test_a_line_written_while_the_model_streams_is_answered(name: str, tmp_path: Path) -> None:
    provider = PROVIDERS[name]
    fake_box: list = []
    routes = Routes(
        main=[
            # The first answer is held until the second line has been written (and read): it arrives mid-turn.
            Hold(provider.text("first answer"), lambda: len(fake_box) > 1),
            provider.text("second answer"),
        ]
    )
    with provider.server(routes.steps()) as fake, StreamSession(provider, fake, tmp_path) as session:
        fake_box.append(fake)
        session.write("MSG-ONE")
        assert wait_until(lambda: len(fake.requests) == 1)
        session.write("MSG-TWO")
        fake_box.append(True)
        assert wait_until(lambda: len(session.results()) == 2), session.records
        code, err = session.finish()
        requests = main_requests(fake)
    assert code == 0, err
    assert len(requests) == 2 and carries(requests[1], "MSG-TWO")
    assert [r["result"] for r in session.results()][-1] == "second answer"
    assert len(session.results()) == 2


@pytest.mark.parametrize("name", ["anthropic", "openai-chat"])
def test_the_messages_before_a_bad_line_are_answered_before_the_run_ends_with_exit_2(name: str, tmp_path: Path) -> None:
    provider = PROVIDERS[name]
    routes = Routes(main=[provider.tools([("Bash", {"command": WAIT_FOR_GO})]), provider.text("answered both")])
    with provider.server(routes.steps()) as fake, StreamSession(provider, fake, tmp_path) as session:
        session.write("run the command: MSG-ONE")
        assert wait_until(lambda: any(r.get("type") == "assistant" for r in session.records)), session.records
        session.write_raw(line("and this: MSG-TWO") + "\nthis is not JSON\n")
        (session.cwd / "go").write_text("")
        code, err = session.finish()
        requests = main_requests(fake)
    assert code == 2 and "bad input" in err
    assert carries(requests[-1], "MSG-TWO")
    assert [r["result"] for r in session.results()] == ["answered both"] * 2


def test_a_signal_still_ends_a_stream_json_session_with_stdin_open(tmp_path: Path) -> None:
    provider = PROVIDERS["anthropic"]
    routes = Routes(main=[provider.tools([("Bash", {"command": WAIT_FOR_GO})]), provider.text("never")])
    with provider.server(routes.steps()) as fake, StreamSession(provider, fake, tmp_path) as session:
        session.write("run the command")
        assert wait_until(lambda: any(r.get("type") == "assistant" for r in session.records)), session.records
        session.proc.send_signal(signal.SIGINT)
        code = session.proc.wait(timeout=60)  # stdin is still open: the signal alone ends the session
        assert len(fake.requests) == 1
    assert code == 130
    assert [r["subtype"] for r in session.results()] == ["interrupted"]
