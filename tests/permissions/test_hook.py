"""The permission hook in the loop: sub-agents inherit their parent's mode and rules and can never widen
them; their questions reach the same approver, labelled with the child; plan mode's tool and note."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from sagent.agent.agent import Agent
from sagent.agent.hooks import ALLOW, Allow, Ask, Deny
from sagent.permissions.plan import ExitPlanMode
from sagent.permissions.policy import PermissionHook, Permissions, decide
from sagent.providers.scripted import RoutedModel, ScriptedModel, text_turn, tool_turn
from sagent.sandbox import OFF
from sagent.tools import builtin_tools
from sagent.types import ToolCall, ToolResult


def bash(command: str) -> ToolCall:
    return ToolCall(id="c1", name="Bash", arguments={"command": command})


async def test_a_child_inherits_the_policy_and_wider_rules_of_its_own_do_not_widen_it(tmp_path: Path) -> None:
    policy = Permissions.build(allow=["Bash(git status:*)"], deny=["Bash(rm:*)"], cwd=tmp_path)
    # Without the OS sandbox, where a Bash command asks in default mode (in it, it runs unasked: see
    # tests/security/test_sandbox_permissions.py).
    parent = Agent(
        ScriptedModel([text_turn("ok")]), cwd=tmp_path, permissions=policy, hooks=[PermissionHook()], sandbox=OFF
    )
    child = parent.spawn("a task", label="kid")
    assert child.agent.settings.permissions is policy  # inherited as it is
    # Give the child a policy that would allow anything: the parent's still binds it.
    wide = Permissions.build(mode="bypassPermissions", allow=["Bash"], cwd=tmp_path)
    child.agent.settings = dataclasses.replace(child.agent.settings, permissions=wide)
    assert isinstance(decide(child.agent, bash("git status")), Allow)  # allowed by both
    assert isinstance(decide(child.agent, bash("make all")), Ask)  # the parent's default mode asks
    assert isinstance(decide(child.agent, bash("rm -rf /")), Deny)  # the parent's deny rule holds
    # And a narrower child stays narrower than its parent.
    narrow = Permissions.build(mode="plan", cwd=tmp_path)
    child.agent.settings = dataclasses.replace(child.agent.settings, permissions=narrow)
    assert isinstance(decide(child.agent, bash("git status")), Deny)
    # A parent switched to plan mode holds its children to it at once.
    child.agent.settings = dataclasses.replace(child.agent.settings, permissions=policy)
    parent.settings = dataclasses.replace(parent.settings, permissions=policy.with_mode("plan", "test"))
    assert isinstance(decide(child.agent, bash("git status")), Deny)
    await child.wait()
    await parent.aclose()


async def test_a_childs_question_reaches_the_parents_approver_with_the_childs_label(tmp_path: Path) -> None:
    asked: list[tuple[str, str, str]] = []

    async def approver(agent: Agent, call: ToolCall, reason: str) -> Allow | Deny:
        asked.append((agent.label, call.arguments.get("command", ""), reason))
        return Deny("not today") if "touch" in str(call.arguments.get("command")) else ALLOW

    model = RoutedModel(
        {
            "main": [tool_turn(("AgentSpawn", {"prompt": "make files", "label": "worker"})), text_turn("spawned")],
            "worker": [
                tool_turn(("Bash", {"command": "echo hi"}), ("Bash", {"command": "touch x.txt"})),
                text_turn("worker done"),
            ],
        }
    )
    agent = Agent(
        model,
        cwd=tmp_path,
        tools=builtin_tools(),
        permissions=Permissions.build(cwd=tmp_path),
        hooks=[PermissionHook()],
        approver=approver,
        sandbox=OFF,  # without the OS sandbox, so that the commands ask
    )
    await agent.run("go")
    worker = agent.children["worker"]
    await worker.wait()
    assert sorted(asked) == [
        ("worker", "echo hi", "default mode asks before running commands"),
        ("worker", "touch x.txt", "default mode asks before running commands"),
    ]
    results = {r.text.strip() for r in worker.agent.history if isinstance(r, ToolResult)}
    assert results == {"hi", "denied: not today"} and not (tmp_path / "x.txt").exists()
    await agent.aclose()


async def test_plan_mode_offers_exit_plan_mode_and_approval_leaves_it(tmp_path: Path) -> None:
    plan = "1. write a.txt"

    async def approve(agent: Agent, call: ToolCall, reason: str) -> Allow | Deny:
        assert call.name == "ExitPlanMode" and reason == "approve this plan"
        return ALLOW

    model = ScriptedModel(
        [
            tool_turn(("Write", {"path": "a.txt", "content": "x"})),
            tool_turn(("ExitPlanMode", {"plan": plan})),
            tool_turn(("Write", {"path": "a.txt", "content": "x"})),
            text_turn("written"),
        ]
    )
    agent = Agent(
        model,
        cwd=tmp_path,
        tools=[*builtin_tools(), ExitPlanMode()],
        permissions=Permissions.build(mode="plan", allow=["Write"], cwd=tmp_path),
        hooks=[PermissionHook()],
        approver=approve,
    )
    reply = await agent.run("plan it")
    assert reply.text == "written" and (tmp_path / "a.txt").read_text() == "x"
    assert isinstance(agent.settings.permissions, Permissions) and agent.settings.permissions.mode == "default"
    requests = model.requests
    assert "ExitPlanMode" in [t.name for t in requests[0].tools] and "plan mode" in requests[0].system
    assert "ExitPlanMode" not in [t.name for t in requests[-1].tools] and "plan mode" not in requests[-1].system
    await agent.aclose()


async def test_the_context_measure_leaves_out_a_tool_a_rule_denies_outright(tmp_path: Path) -> None:
    """A tool every call of which is refused is not sent, so the agent's estimate of its next request
    (before a response reports the size) does not count it either."""
    from sagent.agent.tokens import estimate_tools

    model = ScriptedModel([text_turn("ok")])
    policy = Permissions.build(deny=["WebFetch", "Bash"], cwd=tmp_path)
    agent = Agent(model, tools=builtin_tools(), cwd=tmp_path, permissions=policy, hooks=[PermissionHook()], sandbox=OFF)
    size = agent.context_size()
    await agent.ask("go")
    await agent.aclose()
    sent = model.requests[0]
    assert not {"WebFetch", "Bash"} & {t.name for t in sent.tools}
    assert size.tools == estimate_tools(sent.tools) < estimate_tools(agent.request().tools)
