"""What a person sends a served agent (`sagent fleet send`, a line typed in `sagent fleet attach`) is read
while the agent waits on a long tool call: the call goes on in the background and reports when it is done,
nothing killed, as a peer's message is (and as the REPL does with what the user types). A served agent
restarted on its session does the same."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.fakes.anthropic_server import FakeAnthropic, Reply, text_response, tool_use_response
from tests.fakes.nats_server import NatsServer
from tests.fleet_nats.helpers import Served, fleet, sent_texts, wait_until


def long_build(folder: Path) -> str:
    """A Bash command that says it started, then runs until the test lets it finish."""
    return f"touch {folder / 'started'}; while [ ! -f {folder / 'go'} ]; do sleep 0.05; done; echo built $((6*7))"


def builder(gates: Path) -> Any:
    """Builds in the folder the task names ("build in NAME"); answers anything else with a short text."""

    def answer(request: dict[str, Any]) -> Reply:
        texts = sent_texts(request)
        if texts and texts[-1].startswith("build in "):
            return tool_use_response([("Bash", {"command": long_build(gates / texts[-1].split()[-1])})])
        return text_response("noted")

    return answer


def message_preempts_the_build(nats: NatsServer, served: Served, gate: Path, question: str) -> None:
    fake = served.fake
    gate.mkdir()
    assert fleet(nats, "f1", served.env, "send", "b", f"build in {gate.name}").returncode == 0
    wait_until(lambda: (gate / "started").exists(), "the long call to start")
    sent = fleet(nats, "f1", served.env, "send", "b", question)
    assert sent.returncode == 0, sent.stderr
    assert "it is working" in sent.stdout

    def asked_with_the_message() -> dict[str, Any] | None:
        return next((r for r in fake.requests if question in sent_texts(r)), None)

    # The message reaches the model while the build cannot have finished: it waits for the gate.
    request = wait_until(asked_with_the_message, "the model to be asked with the message")
    assert not (gate / "go").exists()
    assert "moved to the background as job-" in str(request["body"]["messages"][-1])
    assert "built 42" not in str(request["body"]["messages"][-1])
    # Nothing was killed: let the build finish, and its result arrives as a job's result.
    (gate / "go").touch()
    wait_until(lambda: "built 42" in str(fake.requests[-1]["body"]["messages"][-1]), "the job's result")


def test_a_message_sent_to_a_served_agent_moves_its_long_call_to_the_background(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    with FakeAnthropic([builder(tmp_path)] * 12) as fake:
        served = Served(nats_server, "f1", "b", fake, tmp_path / "b", "--allowedTools", "Bash")
        try:
            message_preempts_the_build(nats_server, served, tmp_path / "first", "what is the status?")
        finally:
            assert served.stop() == 0
        again = Served(nats_server, "f1", "b", fake, tmp_path / "b", "--allowedTools", "Bash")
        try:
            assert any("continuing its session" in line for line in again.lines)
            message_preempts_the_build(nats_server, again, tmp_path / "second", "and now?")
        finally:
            assert again.stop() == 0
