"""The REPL joins a fleet (`sagent --fleet NAME --nats URL --label L` on a terminal): its agent messages a
served agent by label and sees the answer; `sagent fleet send L TEXT` reaches it, also after /clear; its
named label keeps its place after it quits; a wrong setup is one clear line before the screen opens.

Real processes throughout: a nats-server, `sagent serve`, the REPL in tmux, `sagent fleet send`."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic, tool_use_response
from tests.fakes.nats_server import NatsServer, free_port
from tests.fleet_nats.helpers import MODEL, WAIT, Served, echo, environment, fleet, sent_texts, wait_until
from tests.repl.tmux import HAVE_TMUX, Tmux


def all_texts(fake: FakeAnthropic) -> list[str]:
    return [t for request in fake.requests for t in sent_texts(request)]


@pytest.mark.skipif(not HAVE_TMUX, reason="tmux is not installed")
def test_the_repl_in_a_fleet_talks_with_a_served_agent_and_is_reached_by_its_label_across_clear(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    # The REPL's model asks b, then echoes whatever reaches it last (b's answer, the user's words).
    repl_script = [tool_use_response([("AgentSend", {"to": "b", "message": "which port?"})]), *[echo] * 8]
    b_script = [tool_use_response([("AgentSend", {"to": "me", "message": "port 8080"})]), echo]
    with FakeAnthropic(repl_script) as fake_repl, FakeAnthropic(b_script) as fake_b:
        b = Served(nats_server, "team", "b", fake_b, tmp_path / "b")
        env = {**environment(fake_repl, tmp_path / "me"), "TERM": "xterm-256color", "EDITOR": "true"}
        args = ["--model", MODEL, "--fleet", "team", "--nats", nats_server.url, "--label", "me"]
        try:
            with Tmux(args, env, tmp_path, width=120) as term:
                screen = term.wait_for("Esc interrupts", timeout=WAIT)
                assert "in the fleet team as me" in screen
                term.wait_for("fleet team as me │", timeout=WAIT)  # the status line names the fleet and label
                term.type("ask b for the port")
                term.press("Enter")
                # b's AgentSend back arrives in the REPL as a peer message, and its model reads it.
                term.wait_for("✉ b: port 8080", timeout=WAIT)
                wait_until(lambda: any("port 8080" in t for t in all_texts(fake_repl)), "b's answer at the model")
                assert "which port?" in " ".join(all_texts(fake_b))
                listed = fleet(nats_server, "team", b.env, "ls")
                assert listed.returncode == 0 and "me " in listed.stdout and "b " in listed.stdout, listed

                # A message to the REPL's label from another terminal shows up and reaches the model.
                sent = fleet(nats_server, "team", b.env, "send", "me", "hello from outside")
                assert sent.returncode == 0, sent.stderr
                term.wait_for("› hello from outside", timeout=WAIT)
                term.wait_for("echo: hello from outside", timeout=WAIT)
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
