"""The REPL joins a fleet (`sagent --fleet NAME --nats URL --label L` on a terminal): its agent messages a
served agent by label and sees the answer; `sagent fleet send L TEXT` reaches it, also after /clear; its
named label keeps its place after it quits; a wrong setup is one clear line before the screen opens.

Real processes throughout: a nats-server, `sagent serve`, the REPL in tmux, `sagent fleet send`."""

from __future__ import annotations

import asyncio
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response
from tests.fakes.nats_server import NatsServer, free_port
from tests.fleet_nats.helpers import MODEL, WAIT, Served, echo, environment, fleet, sent_texts, wait_until
from tests.repl.tmux import HAVE_TMUX, Tmux


def all_texts(fake: FakeAnthropic) -> list[str]:
    return [t for request in fake.requests for t in sent_texts(request)]


def turn_ended(term: Tmux, text: str) -> None:
    """Wait until `text` is on the screen and the turn that showed it has ended (its footer is below it)."""

    def ended() -> bool:
        screen = term.screen()
        at = screen.rfind(text)
        return at >= 0 and "─ this turn" in screen[at:]

    wait_until(ended, f"the end of the turn that showed {text!r}")


def repl_model(request: dict[str, Any]) -> Any:
    """The REPL's model: asks b for the port, or runs a sub-agent on b's process, when the user says so;
    says what a tool answered; echoes whatever else reaches it last (b's message, the user's words)."""
    last = request["body"]["messages"][-1]["content"]
    blocks = last if isinstance(last, list) else []
    results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
    if results:
        return text_response("the tool said: " + " ".join(map(str, (r.get("content") for r in results))))
    texts = sent_texts(request)
    if texts and texts[-1] == "ask b for the port":
        return tool_use_response([("AgentSend", {"to": "b", "message": "which port?"})])
    if texts and texts[-1] == "count on b":
        return tool_use_response([("AgentSpawn", {"prompt": "count the files", "on": "b"})])
    return echo(request)


@pytest.mark.skipif(not HAVE_TMUX, reason="tmux is not installed")
def test_the_repl_in_a_fleet_talks_with_a_served_agent_and_is_reached_by_its_label_across_clear(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    b_script = [tool_use_response([("AgentSend", {"to": "me", "message": "port 8080"})]), *[echo] * 4]
    with FakeAnthropic([repl_model] * 12) as fake_repl, FakeAnthropic(b_script) as fake_b:
        b = Served(nats_server, "team", "b", fake_b, tmp_path / "b")
        env = {**environment(fake_repl, tmp_path / "me"), "TERM": "xterm-256color", "EDITOR": "true"}
        args = ["--model", MODEL, "--fleet", "team", "--nats", nats_server.url, "--label", "me"]
        try:
            with Tmux(args, env, tmp_path, width=120) as term:
                term.wait_for("in the fleet team as me", timeout=WAIT)  # the banner
                term.wait_for("fleet team as me │", timeout=WAIT)  # the status line names the fleet and label
                term.type("ask b for the port")
                term.press("Enter")
                # b's AgentSend back arrives in the REPL as a peer message, and its model reads it.
                term.wait_for("✉ b: port 8080", timeout=WAIT)
                wait_until(lambda: any("port 8080" in t for t in all_texts(fake_repl)), "b's answer at the model")
                assert "which port?" in " ".join(all_texts(fake_b))
                listed = fleet(nats_server, "team", b.env, "ls")
                assert listed.returncode == 0 and "me " in listed.stdout and "b " in listed.stdout, listed

                # A one-shot sub-agent on b's process: its answer comes back as AgentSpawn's result.
                term.type("count on b")
                term.press("Enter")
                term.wait_for("echo: count the files", timeout=WAIT)  # b's model answered the child's task
                assert "count the files" in " ".join(all_texts(fake_b))  # the child's task, at b's model

                # A message to the REPL's label from another terminal shows up and reaches the model.
                sent = fleet(nats_server, "team", b.env, "send", "me", "hello from outside")
                assert sent.returncode == 0, sent.stderr
                term.wait_for("› hello from outside", timeout=WAIT)
                turn_ended(term, "echo: hello from outside")  # /clear waits for an idle agent
                assert "hello from outside" in all_texts(fake_repl)

                # /clear: a new session under the same label; what is sent next still arrives.
                term.type("/clear")
                term.press("Enter")
                term.wait_for("─ new session", timeout=WAIT)
                sent = fleet(nats_server, "team", b.env, "send", "me", "after clear")
                assert sent.returncode == 0, sent.stderr
                term.wait_for("echo: after clear", timeout=WAIT)
                [request] = [r for r in fake_repl.requests if "after clear" in sent_texts(r)]
                assert "hello from outside" not in sent_texts(request)  # the new session's own history

                term.type("/agents")
                term.press("Enter")
                term.wait_for("in the fleet team, in other processes:", timeout=WAIT)

                term.type("/quit")
                term.press("Enter")
                term.wait_for("[sagent exited 0]", timeout=WAIT)
            # A named label keeps its place after the REPL quits: a message waits for its next run.
            later = fleet(nats_server, "team", b.env, "send", "me", "later")
            assert later.returncode == 0 and "queued for me" in later.stdout, later
        finally:
            b.stop()


@pytest.mark.skipif(not HAVE_TMUX, reason="tmux is not installed")
def test_the_repl_without_a_label_is_cli_pid_in_the_fleet_and_leaves_it_when_it_quits(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    with FakeAnthropic([echo] * 4) as fake:
        env = {**environment(fake, tmp_path / "me"), "TERM": "xterm-256color", "EDITOR": "true"}
        with Tmux(["--model", MODEL, "--fleet", "solo", "--nats", nats_server.url], env, tmp_path, width=120) as term:
            screen = term.wait_for("Esc interrupts", timeout=WAIT)
            [label] = {word.rstrip(":") for word in screen.split() if word.startswith("cli-")}  # banner, status
            sent = fleet(nats_server, "solo", env, "send", label, "are you there?")
            assert sent.returncode == 0 and f"delivered to {label}" in sent.stdout, sent
            term.wait_for("echo: are you there?", timeout=WAIT)
            term.type("/quit")
            term.press("Enter")
            term.wait_for("[sagent exited 0]", timeout=WAIT)
        gone = fleet(nats_server, "solo", env, "send", label, "still there?")
        assert gone.returncode == 2 and f"no agent is called {label!r}" in gone.stderr, gone


def repl_on_a_terminal(env: dict[str, str], cwd: Path, *args: str) -> tuple[int, str]:
    """Start the REPL with a pseudo-terminal for its input and output (stderr kept apart); its exit code
    and stderr. Only runs that end before the screen opens are run this way."""
    leader, follower = pty.openpty()
    try:
        command = [sys.executable, "-m", "sagent.cli.main", "--model", MODEL, *args]
        process = subprocess.Popen(
            command, stdin=follower, stdout=follower, stderr=subprocess.PIPE, env=env, cwd=cwd, text=True
        )
        os.close(follower)
        try:
            _, stderr = process.communicate(timeout=WAIT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise AssertionError("the REPL opened instead of refusing the setup") from None
        return process.returncode, stderr
    finally:
        os.close(leader)


def test_the_repl_with_a_bad_fleet_setup_says_what_is_wrong_in_one_line_before_the_screen_opens(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    with FakeAnthropic([]) as fake_repl, FakeAnthropic([]) as fake_b:
        env = {**environment(fake_repl, tmp_path / "me"), "TERM": "xterm-256color"}
        bad_name = repl_on_a_terminal(env, tmp_path, "--fleet", "no.dots", "--nats", nats_server.url)
        assert bad_name[0] == 2 and "a fleet name is letters" in bad_name[1], bad_name
        bad_label = repl_on_a_terminal(env, tmp_path, "--fleet", "f1", "--nats", nats_server.url, "--label", "a b")
        assert bad_label[0] == 2 and "an agent's label on a NATS fleet is" in bad_label[1], bad_label
        dead = repl_on_a_terminal(env, tmp_path, "--fleet", "f1", "--nats", f"nats://127.0.0.1:{free_port()}")
        assert dead[0] == 1 and "cannot reach the NATS server" in dead[1], dead
        b = Served(nats_server, "f1", "b", fake_b, tmp_path / "b")
        try:
            taken = repl_on_a_terminal(env, tmp_path, "--fleet", "f1", "--nats", nats_server.url, "--label", "b")
        finally:
            b.stop()
        assert taken[0] == 2 and "the label 'b' is taken" in taken[1], taken
    for _, stderr in (bad_name, bad_label, dead, taken):
        assert "Traceback" not in stderr and len(stderr.strip().splitlines()) == 1, stderr
    assert fake_repl.requests == []


def test_a_rebuilt_agent_takes_the_label_over_and_gets_what_was_sent_while_it_had_none(
    nats_server: NatsServer,
) -> None:
    """What /clear, /resume and /fork do in the REPL (`FleetSeat.rebuild`), in one process: a message sent
    after the old agent gave its label up and before the new one took it waits, and reaches the new one;
    when the new one cannot be built, the old one keeps the label."""
    from sagent import Agent, Fleet, UserMessage
    from sagent.agent.fleet import Envelope, FleetError
    from sagent.cli.fleet_client import FleetSeat
    from sagent.fleet_nats import NatsBus, QueuedReceipt
    from sagent.providers.scripted import ScriptedModel, text_turn

    async def main() -> None:
        bus = NatsBus(nats_server.url, fleet="seat")
        other = NatsBus(nats_server.url, fleet="seat")  # another terminal's `sagent fleet send`
        seat = FleetSeat(bus, "me")

        def build() -> Agent:
            return Agent(ScriptedModel([text_turn("read it")]), label="me", fleet=Fleet(bus=bus))

        old = build()
        receipts = []

        def build_after_a_message() -> Agent:
            receipts.append(other.deliver(Envelope("user", "me", "in between")))
            return build()

        try:
            new = seat.rebuild(old, build_after_a_message)
            assert isinstance(receipts[0], QueuedReceipt)  # nobody held the label when it was sent
            await old.aclose()
            assert await asyncio.wait_for(new.wait_for_input(), WAIT)
            async for _ in new.run():
                pass
            assert [m for m in new.history if isinstance(m, UserMessage)] == [UserMessage.of("in between")]

            def fail() -> Agent:
                raise FleetError("cannot build it")

            with pytest.raises(FleetError, match="cannot build it"):
                seat.rebuild(new, fail)
            receipt = await asyncio.to_thread(other.deliver, Envelope("user", "me", "still here"))
            assert not isinstance(receipt, QueuedReceipt) and receipt.to == "me"  # new kept its label
            assert await asyncio.wait_for(new.wait_for_input(), WAIT)
            await new.aclose()
        finally:
            other.close()
            bus.close()

    asyncio.run(main())
