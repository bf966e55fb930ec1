"""The fleet's errors said right, without tracebacks: `sagent serve` shut down by SIGTERM after its NATS
server went away, `sagent fleet stop` of a running agent, and credentials the server refuses (told apart
from a server that cannot be reached)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic, text_response
from tests.fakes.nats_server import NatsServer, free_port, nats_binary
from tests.fleet_nats.helpers import WAIT, Served, environment, fleet

TOKEN = "the-right-token-0123456789"


@pytest.fixture
def guarded(tmp_path: Path) -> Iterator[NatsServer]:
    """A server that asks for a token."""
    if nats_binary() is None:
        pytest.skip("nats-server is not installed (apt-get install nats-server); .ci/run installs it")
    server = NatsServer(tmp_path / "jetstream-guarded", extra=("--auth", TOKEN)).start()
    try:
        yield server
    finally:
        server.stop()


def test_serve_shut_down_after_its_server_went_away_says_so_in_one_line(nats: NatsServer, tmp_path: Path) -> None:
    with FakeAnthropic([text_response("hi")]) as fake:
        served = Served(nats, "f1", "lead", fake, tmp_path / "l")
        try:
            nats.stop()
            code = served.stop()  # SIGTERM
        finally:
            served.stop()
    after = served.stderr.split("is serving", 1)[1].splitlines()[1:]
    assert "Traceback" not in served.stderr, served.stderr
    assert len(after) == 1, served.stderr
    assert "lead shut down" in after[0] and "cannot be reached" in after[0] and nats.url in after[0]
    assert code == 1


def test_serve_shut_down_with_its_server_there_exits_cleanly(nats: NatsServer, tmp_path: Path) -> None:
    with FakeAnthropic([text_response("hi")]) as fake:
        served = Served(nats, "f1", "lead", fake, tmp_path / "l")
        code = served.stop()
    assert code == 0 and "Traceback" not in served.stderr
    assert "lead shut down; messages to it wait for its restart" in served.stderr


def test_fleet_stop_of_a_running_agent_says_it_is_stopping_not_that_it_is_away(
    nats: NatsServer, tmp_path: Path
) -> None:
    with FakeAnthropic([text_response("hi")]) as fake:
        served = Served(nats, "f1", "lead", fake, tmp_path / "l")
        try:
            stopped = fleet(nats, "f1", served.env, "stop", "lead")
            assert served.process.wait(WAIT) == 0
        finally:
            served.stop()
    assert stopped.returncode == 0, stopped.stderr
    assert "not running" not in stopped.stdout
    assert stopped.stdout.splitlines() == ["stopping lead", "lead has stopped and left the fleet"]
    assert "lead was stopped and has left the fleet" in served.stderr
    gone = fleet(nats, "f1", served.env, "stop", "lead")
    assert gone.returncode == 2 and "no agent is called 'lead'" in gone.stderr


def test_fleet_stop_of_an_agent_that_is_down_says_the_stop_waits(nats: NatsServer, tmp_path: Path) -> None:
    with FakeAnthropic([text_response("hi")]) as fake:
        served = Served(nats, "f1", "lead", fake, tmp_path / "l")
        assert served.stop() == 0  # its place in the fleet stays
        stopped = fleet(nats, "f1", served.env, "stop", "lead")
        assert stopped.returncode == 0
        assert "lead is not running now; the stop waits in its inbox" in stopped.stdout
        again = Served(nats, "f1", "lead", fake, tmp_path / "l", ends=True)  # it comes back, reads the stop, goes
        assert again.process.wait(WAIT) == 0  # it ends by itself
        again.stop()  # and the last of its stderr is read
    assert "lead was stopped and has left the fleet" in again.stderr


def run_fleet(server: NatsServer, home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    with FakeAnthropic([]) as fake:
        variables = environment(fake, home)
    variables.pop("SAGENT_NATS_TOKEN", None)
    variables.update(env)
    command = [sys.executable, "-m", "sagent.cli.main", "fleet", "ls", "--nats", server.url, "--fleet", "f1", *args]
    return subprocess.run(command, env=variables, capture_output=True, text=True, timeout=WAIT)


CREDENTIALS = {
    "a wrong token flag": (("--nats-token", "wrong-token"), {}, "the token is wrong: check --nats-token"),
    "a wrong token variable": ((), {"SAGENT_NATS_TOKEN": "wrong-token"}, "SAGENT_NATS_TOKEN"),
    "a token missing": ((), {}, "the server asks for credentials: give its token with --nats-token"),
    "a user the server does not know": (("--nats-user", "me", "--nats-password", "pw"), {}, "--nats-user"),
}


@pytest.mark.parametrize("case", list(CREDENTIALS), ids=list(CREDENTIALS))
def test_credentials_the_server_refuses_are_an_authorization_error(
    guarded: NatsServer, tmp_path: Path, case: str
) -> None:
    flags, env, hint = CREDENTIALS[case]
    done = run_fleet(guarded, tmp_path, *flags, **env)
    assert done.returncode == 1
    assert "refused the credentials" in done.stderr and "Authorization Violation" in done.stderr, done.stderr
    assert hint in done.stderr
    assert "cannot reach" not in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_the_right_token_connects_and_a_missing_server_is_still_unreachable(
    guarded: NatsServer, tmp_path: Path
) -> None:
    assert run_fleet(guarded, tmp_path, "--nats-token", TOKEN).returncode == 0
    nowhere = NatsServer(tmp_path / "unused", port=free_port())  # never started
    done = run_fleet(nowhere, tmp_path, "--connect-timeout", "1")
    assert done.returncode == 1 and "cannot reach the NATS server" in done.stderr


def test_serve_with_a_wrong_token_is_an_authorization_error(guarded: NatsServer, tmp_path: Path) -> None:
    with FakeAnthropic([]) as fake:
        env = {**environment(fake, tmp_path), "SAGENT_NATS_TOKEN": "wrong-token"}
        command = [sys.executable, "-m", "sagent.cli.main", "serve", "--nats", guarded.url, "--label", "lead"]
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=WAIT)
    assert done.returncode == 1 and "refused the credentials" in done.stderr and "SAGENT_NATS_TOKEN" in done.stderr
