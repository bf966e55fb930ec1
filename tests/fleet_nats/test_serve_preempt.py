"""What a person sends a served agent (`sagent fleet send`, a line typed in `sagent fleet attach`) is read
while the agent waits on a long tool call: the call goes on in the background and reports when it is done,
nothing killed, as a peer's message is (and as the REPL does with what the user types)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.fakes.anthropic_server import FakeAnthropic, Reply, text_response, tool_use_response
from tests.fakes.nats_server import NatsServer
from tests.fleet_nats.helpers import Served, fleet, sent_texts, wait_until


def long_build(folder: Path) -> str:
    """A Bash command that says it started, then runs until the test lets it finish."""
    return f"touch {folder / 'started'}; while [ ! -f {folder / 'go'} ]; do sleep 0.05; done; echo built $((6*7))"


def builder(folder: Path) -> Any:
    def answer(request: dict[str, Any]) -> Reply:
        texts = sent_texts(request)
        if texts and texts[-1] == "start the build":
            return tool_use_response([("Bash", {"command": long_build(folder)})])
        return text_response("noted")

    return answer


def test_a_message_sent_to_a_served_agent_moves_its_long_call_to_the_background(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    gate = tmp_path / "gate"
    gate.mkdir()
    with FakeAnthropic([builder(gate)] * 6) as fake:
        served = Served(nats_server, "f1", "b", fake, tmp_path / "b", "--allowedTools", "Bash")
        try:
            assert fleet(nats_server, "f1", served.env, "send", "b", "start the build").returncode == 0
            wait_until(lambda: (gate / "started").exists(), "the long call to start")
            sent = fleet(nats_server, "f1", served.env, "send", "b", "what is the status?")
            assert sent.returncode == 0, sent.stderr
            assert "it is working" in sent.stdout

            def asked_with_the_message() -> dict[str, Any] | None:
                return next((r for r in fake.requests if "what is the status?" in sent_texts(r)), None)

            # The message reaches the model while the build cannot have finished: it waits for the gate.
            request = wait_until(asked_with_the_message, "the model to be asked with the message")
            assert not (gate / "go").exists()
            assert "moved to the background as job-1" in str(request["body"]["messages"])
            assert "built 42" not in str(request["body"]["messages"])
            # Nothing was killed: let the build finish, and its result arrives as a job's result.
            (gate / "go").touch()
            wait_until(lambda: "built 42" in str(fake.requests[-1]["body"]["messages"]), "the job's result")
        finally:
            assert served.stop() == 0
