"""The parent tree's policy on the wire: what travels, how the worker reads it (strictly), and how the child's
calls are decided under it (the strictest of the worker's policy and every policy above wins)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from sagent.agent.agent import Agent
from sagent.agent.hooks import ALLOW, Allow, Ask, Deny
from sagent.agent.settings import AgentSettings
from sagent.fleet_nats.policy import child_settings, parse_tree_policy, tree_policy_wire
from sagent.permissions.policy import Permissions, decide
from sagent.permissions.transfer import PolicyWireError, policy_from_wire, policy_to_wire
from sagent.providers.scripted import ScriptedModel
from sagent.types import ToolCall


async def always(agent: Agent, call: ToolCall, reason: str) -> Allow | Deny:
    return ALLOW


def parent_agent(policy: Permissions, cwd: Path, *, approver: bool = False) -> Agent:
    return Agent(ScriptedModel([]), permissions=policy, cwd=cwd, approver=always if approver else None)


def worker_child(tree: dict[str, object], worker_policy: Permissions | None, cwd: Path) -> Agent:
    """The child as the worker builds it: the worker's settings bound by the tree's policy (as JSON went)."""
    parsed = parse_tree_policy(json.loads(json.dumps(tree)), str(cwd))
    settings = child_settings(AgentSettings(permissions=worker_policy, cwd=cwd), parsed)
    return Agent(ScriptedModel([]), settings)


def verdict(agent: Agent, tool: str, **arguments: object) -> type:
    return type(decide(agent, ToolCall("c1", tool, dict(arguments))))


def test_a_plan_mode_parent_binds_its_child_on_a_permissive_worker(tmp_path: Path) -> None:
    parent = parent_agent(Permissions.build(mode="plan", cwd=tmp_path), tmp_path)
    child = worker_child(tree_policy_wire(parent), Permissions.build(mode="bypassPermissions", cwd=tmp_path), tmp_path)
    assert verdict(child, "Bash", command="touch x") is Deny
    assert verdict(child, "Write", path=str(tmp_path / "x"), content="") is Deny
    assert verdict(child, "Edit", path="x", old="a", new="b") is Deny
    assert verdict(child, "Read", path="x") is Allow


def test_deny_rules_of_every_ancestor_travel_with_their_origins(tmp_path: Path) -> None:
    grand = Permissions.build(deny=["Bash(rm:*)"], cwd=tmp_path, origin="/home/u/.config/sagent/settings.json")
    root = parent_agent(grand, tmp_path)
    mid = Agent(
        ScriptedModel([]),
        AgentSettings(
            permissions=Permissions.build(mode="bypassPermissions", deny=["Write"], cwd=tmp_path), label="mid"
        ),
        parent=root,
        fleet=root.fleet,
    )
    wire = tree_policy_wire(mid)
    assert len(wire["permissions"]) == 2
    texts = [(r["rule"], r["origin"]) for p in wire["permissions"] for r in p["deny"]]
    assert ("Bash(rm:*)", "/home/u/.config/sagent/settings.json") in texts
    child = worker_child(wire, None, tmp_path)  # a worker without a policy of its own
    assert verdict(child, "Bash", command="rm -rf x") is Deny
    assert verdict(child, "Write", path="y", content="") is Deny
    assert "parent's deny  Bash(rm:*)" in "\n".join(child.settings.permissions.describe())  # type: ignore[union-attr]


def test_an_ask_on_the_worker_is_refused_unless_a_headless_parent_would_run_it(tmp_path: Path) -> None:
    policy = Permissions.build(mode="default", cwd=tmp_path)
    asked = tree_policy_wire(parent_agent(policy, tmp_path, approver=True))
    headless = tree_policy_wire(parent_agent(policy, tmp_path))
    strict = tree_policy_wire(parent_agent(Permissions.build(headless="deny", cwd=tmp_path), tmp_path))
    assert (asked["unanswered"], headless["unanswered"], strict["unanswered"]) == ("parent", "allow", "deny")
    worker = Permissions.build(mode="bypassPermissions", cwd=tmp_path)
    # (`asked` without the parent's approver reachable: the worker gives it none here)
    for wire, expected in ((asked, Deny), (headless, Allow), (strict, Deny)):
        child = worker_child(wire, worker, tmp_path)
        write = {"path": str(tmp_path / "x.txt"), "content": "x"}  # (a sandboxed Bash call would not ask)
        assert verdict(child, "Write", **write) is Ask  # the parent's default mode asks ...
        hook = child.settings.hooks[-1]
        answer = asyncio.run(hook.before_tool(child, ToolCall("c1", "Write", write)))
        assert isinstance(answer, Deny if expected is Deny else Ask)  # ... and nobody answers but the default


def test_rules_are_anchored_at_the_workers_project_and_absolute_ones_inside_the_project_are_twinned(
    tmp_path: Path,
) -> None:
    here, there = tmp_path / "here", tmp_path / "there"
    (here / "shared").mkdir(parents=True)
    there.mkdir()
    policy = Permissions.build(
        deny=["Edit(src/**)", f"Read({here}/secrets/**)", "Read(~/.ssh/**)"],
        add_dirs=[str(here / "shared"), "/opt/elsewhere"],
        cwd=here,
    )
    data = policy_to_wire(policy, str(here))
    assert data["roots"] == ["shared"]  # the root outside the project names a folder on this machine only
    assert {r["rule"] for r in data["deny"]} >= {"Read(secrets/**)", f"Read({here}/secrets/**)"}
    again = policy_from_wire(json.loads(json.dumps(data)), str(there))
    assert again.roots == (str((there / "shared").resolve()),)
    subject_cwd = str(there)
    assert isinstance(again.decide("Edit", {"path": "src/a.py"}, subject_cwd), Deny)
    assert isinstance(again.decide("Read", {"path": "secrets/key"}, subject_cwd), Deny)
    assert isinstance(again.decide("Read", {"path": "~/.ssh/id_rsa"}, subject_cwd), Deny)


@pytest.mark.parametrize(
    "data",
    [
        None,
        [],
        {"mode": "plan"},
        {"mode": "plan", "headless": "yes"},
        {"mode": "plan", "headless": "deny", "allow": "Bash"},
        {"mode": "plan", "headless": "deny", "deny": [{"rule": 3}]},
        {"mode": "plan", "headless": "deny", "deny": [{"rule": "Bash", "origin": "x", "extra": 1}]},
        {"mode": "plan", "headless": "deny", "roots": ["/etc"]},
        {"mode": "plan", "headless": "deny", "inherited": []},
        {"mode": "plan", "headless": "deny", "mode_origin": 5},
        {"mode": 7, "headless": "deny"},
    ],
)
def test_a_policy_that_is_not_exactly_one_is_refused(data: object, tmp_path: Path) -> None:
    with pytest.raises(PolicyWireError):
        policy_from_wire(data, str(tmp_path))
