"""A sub-agent spawned on a fleet worker carries its parent tree's permission policy, and the worker holds it
to the stricter of its own and the parent's: a parent in plan mode, or with Bash and Write denied, cannot
get them run by a worker that would run anything (bypassPermissions). A spawn without the policy is refused.

Real processes: a nats-server, `sagent serve` hosts, each against its own fake Anthropic server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sagent.sandbox.policy import OFF
from tests.fakes.anthropic_server import FakeAnthropic, Reply, text_response, tool_use_response
from tests.fakes.nats_server import NatsServer
from tests.fleet_nats.helpers import Served, fleet, sent_texts, wait_until


def child_script(markers: Path) -> Any:
    """The worker's model: the child tries Bash and Write at once, then reports what it got back."""

    def answer(request: dict[str, Any]) -> Reply:
        last = request["body"]["messages"][-1]["content"]
        if isinstance(last, list) and any(b.get("type") == "tool_result" for b in last):
            return text_response("tried: " + json.dumps(last)[:2000])
        calls = [
            ("Bash", {"command": f"touch {markers / 'bash-ran'}"}),
            ("Write", {"path": str(markers / "write-ran"), "content": "x"}),
        ]
        return tool_use_response(calls)

    return answer


def lead_script(persistent: bool) -> Any:
    def answer(request: dict[str, Any]) -> Reply:
        texts = sent_texts(request)
        if texts[-1:] == ["go"]:
            spawn: dict[str, Any] = {"prompt": "make the files", "label": "maker", "on": "any"}
            if persistent:
                spawn["persistent"] = True
            return tool_use_response([("AgentSpawn", spawn)])
        return text_response("done")

    return answer


# A worker that would run anything, without a sandbox: only its parent's policy can hold its child.
OPEN_WORKER = ("--worker", "--permission-mode", "bypassPermissions", "--sandbox", "danger-full-access")

PARENTS = {
    "plan mode": ("--permission-mode", "plan"),
    "Bash and Write denied": ("--disallowedTools", "Bash,Write"),
    "the rule forms denied": ("--disallowedTools", "Bash(touch:*)", "--disallowedTools", "Write(/**)"),
}


@pytest.mark.parametrize("persistent", [False, True], ids=["one-shot", "persistent"])
@pytest.mark.parametrize("parent", list(PARENTS), ids=list(PARENTS))
def test_a_child_on_a_worker_does_not_run_what_its_parent_may_not(
    nats: NatsServer, tmp_path: Path, parent: str, persistent: bool
) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    with (
        FakeAnthropic([lead_script(persistent)] * 6) as lead_fake,
        FakeAnthropic([child_script(markers)] * 4) as worker_fake,
    ):
        # The worker itself would run anything: it is the parent's policy that must hold its child.
        worker = Served(
            nats, "f1", "worker1", worker_fake, tmp_path / "w", "--worker", "--permission-mode", "bypassPermissions"
        )
        lead = Served(nats, "f1", "lead", lead_fake, tmp_path / "l", *PARENTS[parent])
        try:
            assert fleet(nats, "f1", lead.env, "send", "lead", "go").returncode == 0
            wait_until(lambda: len(worker_fake.requests) >= 2, "the child to try its calls and answer")
            results = json.dumps(worker_fake.requests[1]["body"]["messages"][-1]["content"])
            assert results.count("denied") >= 2, results
            assert not (markers / "bash-ran").exists()
            assert not (markers / "write-ran").exists()
        finally:
            lead.stop()
            worker.stop()
    assert not (markers / "bash-ran").exists() and not (markers / "write-ran").exists()


def test_the_workers_own_deny_still_holds_under_a_permissive_parent(nats: NatsServer, tmp_path: Path) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    with (
        FakeAnthropic([lead_script(False)] * 6) as lead_fake,
        FakeAnthropic([child_script(markers)] * 4) as worker_fake,
    ):
        worker = Served(nats, "f1", "worker1", worker_fake, tmp_path / "w", "--worker", "--disallowedTools", "Bash")
        lead = Served(nats, "f1", "lead", lead_fake, tmp_path / "l", "--permission-mode", "bypassPermissions")
        try:
            assert fleet(nats, "f1", lead.env, "send", "lead", "go").returncode == 0
            wait_until(lambda: len(worker_fake.requests) >= 2, "the child to try its calls and answer")
            assert not (markers / "bash-ran").exists()
            assert (markers / "write-ran").exists()  # both allow Write: the stricter of the two is no stricter
        finally:
            lead.stop()
            worker.stop()


def raw_spawn(nats: NatsServer, fields: dict[str, Any]) -> dict[str, Any]:
    """Send a spawn request to the fleet's workers as any NATS client could, and read the answer."""
    from sagent.fleet_nats.bus import NatsBus

    bus = NatsBus(nats.url, fleet="f1")
    try:
        reply = bus.call(bus.nc.request("sagent.f1.spawn", json.dumps(fields).encode(), timeout=60), 70)
        answer: dict[str, Any] = json.loads(reply.data)
        return answer
    finally:
        bus.close()


BAD_POLICIES: dict[str, Any] = {
    "absent": None,
    "a string": "plan",
    "a list": [],
    "no version": {"permissions": [], "unanswered": "deny"},
    "a future version": {"version": 2, "permissions": [], "unanswered": "deny"},
    "an unknown field": {"version": 1, "permissions": [], "unanswered": "deny", "sandbox2": {}},
    "no unanswered": {"version": 1, "permissions": []},
    "unanswered maybe": {"version": 1, "permissions": [], "unanswered": "maybe"},
    "permissions not a list": {"version": 1, "permissions": {}, "unanswered": "deny"},
    "an unknown mode": {
        "version": 1,
        "permissions": [{"mode": "yolo", "headless": "deny", "allow": [], "ask": [], "deny": []}],
        "unanswered": "deny",
    },
    "a rule that does not parse": {
        "version": 1,
        "permissions": [
            {"mode": "plan", "headless": "deny", "allow": [], "ask": [], "deny": [{"rule": "Bash(", "origin": ""}]}
        ],
        "unanswered": "deny",
    },
    "a rule as a bare string": {
        "version": 1,
        "permissions": [{"mode": "plan", "headless": "deny", "allow": [], "ask": [], "deny": ["Bash"]}],
        "unanswered": "deny",
    },
    "an absolute root": {
        "version": 1,
        "permissions": [{"mode": "default", "headless": "deny", "roots": ["/"], "allow": [], "ask": [], "deny": []}],
        "unanswered": "deny",
    },
}


def test_a_spawn_whose_policy_is_missing_or_unreadable_is_refused_and_runs_nothing(
    nats: NatsServer, tmp_path: Path
) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    with FakeAnthropic([child_script(markers)] * 4) as worker_fake:
        worker = Served(
            nats, "f1", "worker1", worker_fake, tmp_path / "w", "--worker", "--permission-mode", "bypassPermissions"
        )
        try:
            for name, policy in BAD_POLICIES.items():
                fields: dict[str, Any] = {"prompt": "make the files", "label": "maker", "parent": "x"}
                if policy is not None:
                    fields["policy"] = policy
                answer = raw_spawn(nats, fields)
                assert "error" in answer and "refused by worker1" in answer["error"], (name, answer)
            assert worker_fake.requests == []
            assert list(markers.iterdir()) == []
        finally:
            worker.stop()


def test_a_question_of_a_child_on_a_worker_goes_to_its_parents_approver(nats: NatsServer, tmp_path: Path) -> None:
    """A parent with an approver (a person at the REPL, an application) in default mode: the child's Bash
    asks, and the parent's approver answers each call (yes to one, no to the other)."""
    import asyncio

    from sagent import Agent, Fleet
    from sagent.agent.hooks import ALLOW, Allow, Deny
    from sagent.fleet_nats import NatsBus
    from sagent.permissions.policy import PermissionHook, Permissions
    from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
    from sagent.tools import AgentSpawn
    from sagent.types import ToolCall

    markers = tmp_path / "markers"
    markers.mkdir()
    yes, no = markers / "approved", markers / "refused"

    def child(request: dict[str, Any]) -> Reply:
        last = request["body"]["messages"][-1]["content"]
        if isinstance(last, list) and any(b.get("type") == "tool_result" for b in last):
            return text_response("tried: " + json.dumps(last)[:2000])
        return tool_use_response([("Bash", {"command": f"touch {yes}"}), ("Bash", {"command": f"touch {no}"})])

    asked: list[tuple[str, str]] = []

    async def approver(agent: Agent, call: ToolCall, reason: str) -> Allow | Deny:
        command = str(call.arguments.get("command", ""))
        asked.append((command, reason))
        return ALLOW if str(yes) in command else Deny("not that one")

    with FakeAnthropic([child] * 4) as worker_fake:
        # (a sandboxed Bash call would run unasked: no question to send)
        worker = Served(nats, "f1", "worker1", worker_fake, tmp_path / "w", *OPEN_WORKER)
        try:

            async def main() -> str:
                bus = NatsBus(nats.url, fleet="f1")
                spawn = {"prompt": "make the files", "label": "maker", "on": "any"}
                model = ScriptedModel([tool_turn(("AgentSpawn", spawn)), text_turn("done")])
                agent = Agent(
                    model,
                    tools=[AgentSpawn()],
                    fleet=Fleet(bus=bus),
                    label="lead",
                    cwd=tmp_path,
                    permissions=Permissions.build(mode="default", cwd=tmp_path),
                    hooks=[PermissionHook()],
                    approver=approver,
                    sandbox=OFF,
                )
                try:
                    async for _ in agent.run("go"):
                        pass
                    return str(agent.history)
                finally:
                    await agent.aclose()
                    bus.close()

            history = asyncio.run(main())
        finally:
            worker.stop()
    assert yes.exists() and not no.exists()
    assert sorted(c for c, _ in asked) == sorted([f"touch {yes}", f"touch {no}"])
    assert all("maker (a sub-agent in another process) asks: default mode asks" in r for _, r in asked)
    assert "not that one" in history
