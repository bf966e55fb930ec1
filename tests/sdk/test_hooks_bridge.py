"""The Claude Agent SDK's hook callbacks, registered in `initialize`, run at sagent's hook points: each one a
`hook_callback` control request with Claude Code's hook input, its answer applied as a command hook's JSON."""

from __future__ import annotations

from typing import Any

import pytest

from sagent.agent.agent import Agent
from sagent.agent.hooks import ALLOW, Allow, Ask, Deny, Hook, ToolDecision
from sagent.cli.control.hooks import install_hook_callbacks
from sagent.events import Result
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.types import ToolCall, ToolResult
from sagent.userhooks import CommandHooks
from tests.sdk.fake_requester import FakeRequester
from tests.userhooks.scripts import bash_tool, notices, run


def callbacks(**answers: Any) -> FakeRequester:
    """A requester whose hook callbacks `hook_0`, `hook_1`, ... answer as given (a dict, or a function of
    the hook's input; an exception it raises is the SDK's error response)."""

    def answer(request: dict[str, Any]) -> dict[str, Any]:
        assert request["subtype"] == "hook_callback"
        reply = answers[request["callback_id"]]
        return reply(request["input"]) if callable(reply) else reply

    return FakeRequester(answer)


def matcher(*ids: str, matcher: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"matcher": matcher, "hookCallbackIds": list(ids), **extra}


def bash_then_done(command: str = "make clean") -> ScriptedModel:
    return ScriptedModel([tool_turn(("Bash", {"command": command})), text_turn("done")])


def tool_result_sent(model: ScriptedModel, request: int = 1) -> ToolResult:
    message = model.requests[request].messages[-1]
    assert isinstance(message, ToolResult)
    return message


def agent_with(model: ScriptedModel, ran: list[str], config: dict[str, Any], requester: FakeRequester) -> Agent:
    agent = Agent(model, tools=[bash_tool(ran)])
    assert install_hook_callbacks(agent, config, requester) == []
    return agent


async def test_a_pre_tool_use_callback_denies_a_command_with_its_reason() -> None:
    ran: list[str] = []
    model = bash_then_done("rm -rf /")
    deny = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                   "permissionDecisionReason": "rm -rf is not allowed"}}  # fmt: skip
    requester = callbacks(hook_0=deny)
    agent = agent_with(model, ran, {"PreToolUse": [matcher("hook_0", matcher="Bash")]}, requester)
    events = await run(agent, "clean up")
    assert ran == []
    result = tool_result_sent(model)
    assert result.is_error and result.text == "denied: rm -rf is not allowed"
    assert isinstance(events[-1], Result) and events[-1].subtype == "success"
    [request] = requester.requests
    call = model.requests[0]  # the call the model made is the one the hook heard of
    assert request["callback_id"] == "hook_0" and request["tool_use_id"] == result.call_id
    seen = request["input"]
    assert seen["hook_event_name"] == "PreToolUse" and seen["tool_name"] == "Bash"
    assert seen["tool_input"] == {"command": "rm -rf /"} and seen["tool_use_id"] == result.call_id
    assert seen["session_id"] == agent.session.id and seen["cwd"] == str(agent.context.cwd)
    assert "transcript_path" in seen and call is not None


async def test_the_matcher_selects_tools_as_claude_code_reads_it() -> None:
    ran: list[str] = []
    requester = callbacks(hook_0={}, hook_1={}, hook_2={}, hook_3={})
    config = {
        "PreToolUse": [
            matcher("hook_0", matcher="Write|Edit"),
            matcher("hook_1", matcher="Ba.*"),
            matcher("hook_2"),  # None: every tool
            matcher("hook_3", matcher="*"),
        ]
    }
    agent = agent_with(bash_then_done(), ran, config, requester)
    await run(agent, "go")
    assert ran == ["make clean"]
    assert sorted(r["callback_id"] for r in requester.requests) == ["hook_1", "hook_2", "hook_3"]


async def test_a_post_tool_use_callback_sees_the_result_and_its_context_reaches_the_model() -> None:
    ran: list[str] = []
    model = bash_then_done()
    seen: list[dict[str, Any]] = []

    def post(hook_input: dict[str, Any]) -> dict[str, Any]:
        seen.append(hook_input)
        return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "remember to commit"}}

    agent = agent_with(model, ran, {"PostToolUse": [matcher("hook_0", matcher="Bash")]}, callbacks(hook_0=post))
    await run(agent, "clean up")
    [hook_input] = seen
    assert hook_input["hook_event_name"] == "PostToolUse" and hook_input["tool_name"] == "Bash"
    assert hook_input["tool_response"] == {"output": "ran make clean", "is_error": False}
    result = tool_result_sent(model)
    assert "ran make clean" in result.text and "remember to commit" in result.text


async def test_decision_block_after_a_call_feeds_its_reason_to_the_model() -> None:
    model = bash_then_done()
    answer = {"decision": "block", "reason": "the build is now broken"}
    agent = agent_with(model, [], {"PostToolUse": [matcher("hook_0")]}, callbacks(hook_0=answer))
    await run(agent, "clean up")
    assert "the build is now broken" in tool_result_sent(model).text


async def test_updated_input_rewrites_the_call() -> None:
    ran: list[str] = []
    answer = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
                                     "updatedInput": {"command": "make tidy"}}}  # fmt: skip
    agent = agent_with(bash_then_done(), ran, {"PreToolUse": [matcher("hook_0")]}, callbacks(hook_0=answer))
    await run(agent, "clean up")
    assert ran == ["make tidy"]


async def test_ask_goes_to_the_approver_with_the_reason() -> None:
    ran: list[str] = []
    asked: list[tuple[str, str]] = []

    async def approver(agent: Agent, call: ToolCall, reason: str) -> Allow | Deny:
        asked.append((call.name, reason))
        return Deny("the user said no")

    answer = {"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "is this wise?"}}
    model = bash_then_done()
    agent = Agent(model, tools=[bash_tool(ran)], approver=approver)
    install_hook_callbacks(agent, {"PreToolUse": [matcher("hook_0")]}, callbacks(hook_0=answer))
    await run(agent, "clean up")
    assert asked == [("Bash", "is this wise?")] and ran == []
    assert tool_result_sent(model).text == "denied: the user said no"


async def test_user_prompt_submit_can_block_the_prompt_or_add_context() -> None:
    model = ScriptedModel([text_turn("hi")])
    seen: list[dict[str, Any]] = []

    def screen(hook_input: dict[str, Any]) -> dict[str, Any]:
        seen.append(hook_input)
        if "secret" in hook_input["prompt"]:
            return {"decision": "block", "reason": "no secrets in prompts"}
        return {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "it is Friday"}}

    agent = Agent(model)
    install_hook_callbacks(agent, {"UserPromptSubmit": [matcher("hook_0")]}, callbacks(hook_0=screen))
    events = await run(agent, "my secret is 42")
    assert model.requests == []
    assert any("no secrets in prompts" in n.message for n in notices(events))
    await run(agent, "what day is it")
    assert seen[-1]["prompt"] == "what day is it" and seen[-1]["hook_event_name"] == "UserPromptSubmit"
    assert "it is Friday" in str(model.requests[0].messages)


async def test_a_stop_callback_keeps_the_run_going_once() -> None:
    model = ScriptedModel([text_turn("done"), text_turn("tests pass now")])
    inputs: list[dict[str, Any]] = []

    def stop(hook_input: dict[str, Any]) -> dict[str, Any]:
        inputs.append(hook_input)
        return {} if hook_input["stop_hook_active"] else {"decision": "block", "reason": "run the tests first"}

    agent = Agent(model)
    install_hook_callbacks(agent, {"Stop": [matcher("hook_0")]}, callbacks(hook_0=stop))
    events = await run(agent, "fix it")
    assert [i["stop_hook_active"] for i in inputs] == [False, True]
    assert inputs[0]["last_assistant_message"] == "done"
    assert len(model.requests) == 2 and "run the tests first" in str(model.requests[1].messages)
    assert isinstance(events[-1], Result) and events[-1].subtype == "success"


async def test_continue_false_stops_the_agent_with_its_reason() -> None:
    ran: list[str] = []
    answer = {"continue": False, "stopReason": "budget meeting"}
    agent = agent_with(bash_then_done(), ran, {"PreToolUse": [matcher("hook_0")]}, callbacks(hook_0=answer))
    events = await run(agent, "clean up")
    assert ran == []
    assert any("budget meeting" in n.message for n in notices(events))


async def test_system_message_reaches_the_user() -> None:
    answer = {"systemMessage": "hooks are watching"}
    agent = agent_with(bash_then_done(), [], {"PreToolUse": [matcher("hook_0")]}, callbacks(hook_0=answer))
    events = await run(agent, "clean up")
    assert [(n.message, n.level) for n in notices(events)] == [("hooks are watching", "info")]


async def test_the_matchers_timeout_goes_with_the_request() -> None:
    requester = callbacks(hook_0={}, hook_1={})
    config = {"PreToolUse": [matcher("hook_0", timeout=7), matcher("hook_1")]}
    agent = agent_with(bash_then_done(), [], config, requester)
    await run(agent, "go")
    by_id = {r["callback_id"]: t for r, t in zip(requester.requests, requester.timeouts, strict=True)}
    assert by_id == {"hook_0": 7.0, "hook_1": 60.0}


def failing(hook_input: dict[str, Any]) -> dict[str, Any]:
    raise RuntimeError("the callback crashed")


async def test_a_failing_callback_is_no_decision_unless_on_failure_blocks() -> None:
    ran: list[str] = []
    agent = agent_with(bash_then_done(), ran, {"PreToolUse": [matcher("hook_0")]}, callbacks(hook_0=failing))
    events = await run(agent, "clean up")
    assert ran == ["make clean"]
    assert any("the callback crashed" in n.message and n.level == "error" for n in notices(events))

    ran.clear()
    model = bash_then_done()
    config = {"PreToolUse": [matcher("hook_0", onFailure="block")]}
    agent = agent_with(model, ran, config, callbacks(hook_0=failing))
    await run(agent, "clean up")
    assert ran == []
    assert "the callback crashed" in tool_result_sent(model).text


async def test_an_answer_sagent_cannot_read_counts_as_a_failure() -> None:
    ran: list[str] = []
    answer = {"hookSpecificOutput": {"permissionDecision": "Deny"}}  # wrong case: not a decision
    config = {"PreToolUse": [matcher("hook_0", onFailure="block")]}
    agent = agent_with(bash_then_done(), ran, config, callbacks(hook_0=answer))
    await run(agent, "clean up")
    assert ran == []


async def test_on_failure_block_does_not_hold_a_stop() -> None:
    model = ScriptedModel([text_turn("done")])
    agent = Agent(model)
    install_hook_callbacks(agent, {"Stop": [matcher("hook_0", onFailure="block")]}, callbacks(hook_0=failing))
    events = await run(agent, "go")
    assert isinstance(events[-1], Result) and events[-1].subtype == "success" and len(model.requests) == 1


async def test_sdk_hooks_join_the_hooks_the_agent_already_has() -> None:
    class Watch(Hook):
        seen = 0

        async def before_tool(self, agent: Agent, call: ToolCall) -> Any:
            Watch.seen += 1
            return ALLOW

    ran: list[str] = []
    agent = Agent(bash_then_done(), tools=[bash_tool(ran)], hooks=[Watch()])
    install_hook_callbacks(agent, {"PreToolUse": [matcher("hook_0")]}, callbacks(hook_0={}))
    await run(agent, "go")
    assert Watch.seen == 1 and ran == ["make clean"] and len(agent.settings.hooks) == 2


def test_events_sagent_does_not_run_are_named_and_nothing_is_installed_for_none() -> None:
    agent = Agent(ScriptedModel([]))
    before = agent.settings.hooks
    assert install_hook_callbacks(agent, None, callbacks()) == []
    assert install_hook_callbacks(agent, {}, callbacks()) == []
    assert agent.settings.hooks == before
    warnings = install_hook_callbacks(agent, {"SessionEnd": [matcher("hook_0")]}, callbacks())
    assert len(warnings) == 1 and "SessionEnd" in warnings[0]
    assert agent.settings.hooks == before
    warnings = install_hook_callbacks(agent, {"SomeEventOfNextYear": [matcher("hook_0")]}, callbacks())
    assert len(warnings) == 1 and "SomeEventOfNextYear" in warnings[0]


@pytest.mark.parametrize(
    ("config", "named"),
    [
        ([], "hooks"),
        ({"PreToolUse": {}}, "hooks.PreToolUse"),
        ({"PreToolUse": [{"matcher": 3, "hookCallbackIds": ["a"]}]}, "hooks.PreToolUse[0].matcher"),
        ({"PreToolUse": [{"matcher": None, "hookCallbackIds": "a"}]}, "hooks.PreToolUse[0].hookCallbackIds"),
        ({"PreToolUse": [{"hookCallbackIds": ["a"], "timeout": -1}]}, "hooks.PreToolUse[0].timeout"),
        ({"PreToolUse": [{"hookCallbackIds": ["a"], "onFailure": "maybe"}]}, "hooks.PreToolUse[0].onFailure"),
        ({"pre tool use": [{"hookCallbackIds": ["a"]}]}, "hooks.pre tool use"),
    ],
)
def test_a_malformed_hooks_value_is_an_error_naming_the_key(config: Any, named: str) -> None:
    with pytest.raises(ValueError, match=named.replace("[", r"\[").replace("]", r"\]")):
        install_hook_callbacks(Agent(ScriptedModel([])), config, callbacks())


def failing_tool() -> Any:
    from sagent.tools.base import ToolError, tool

    @tool
    async def Build(target: str) -> str:
        """Build a target."""
        raise ToolError(f"no rule to make {target}")

    return Build


async def test_post_tool_use_failure_hears_of_a_call_that_failed_and_its_context_reaches_the_model() -> None:
    model = ScriptedModel([tool_turn(("Build", {"target": "all"})), text_turn("it failed")])
    seen: list[dict[str, Any]] = []

    def failure(hook_input: dict[str, Any]) -> dict[str, Any]:
        seen.append(hook_input)
        return {"hookSpecificOutput": {"hookEventName": "PostToolUseFailure", "additionalContext": "try make -k"}}

    agent = Agent(model, tools=[failing_tool()])
    config = {"PostToolUseFailure": [matcher("hook_0", matcher="Build")]}
    assert install_hook_callbacks(agent, config, callbacks(hook_0=failure)) == []
    await run(agent, "build")
    [hook_input] = seen
    assert hook_input["hook_event_name"] == "PostToolUseFailure" and hook_input["tool_name"] == "Build"
    assert hook_input["tool_input"] == {"target": "all"} and "no rule to make all" in hook_input["error"]
    result = tool_result_sent(model)
    assert result.is_error and "no rule to make all" in result.text and "try make -k" in result.text


async def test_post_tool_use_failure_is_not_asked_about_a_call_that_succeeded_or_was_denied() -> None:
    requester = callbacks(hook_0={}, hook_1={"decision": "block", "reason": "no"})
    config = {"PostToolUseFailure": [matcher("hook_0")], "PreToolUse": [matcher("hook_1", matcher="Write")]}
    model = ScriptedModel([tool_turn(("Bash", {"command": "ls"}), ("Write", {"path": "x"})), text_turn("ok")])
    agent = Agent(model, tools=[bash_tool([])])
    install_hook_callbacks(agent, config, requester)
    await run(agent, "go")
    assert [r["callback_id"] for r in requester.requests] == ["hook_1"]


async def test_updated_tool_output_replaces_what_the_model_reads() -> None:
    model = bash_then_done()
    answer = {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": "[output redacted]"}}
    agent = agent_with(model, [], {"PostToolUse": [matcher("hook_0")]}, callbacks(hook_0=answer))
    await run(agent, "clean up")
    result = tool_result_sent(model)
    assert result.text == "[output redacted]" and not result.is_error


async def test_updated_mcp_tool_output_with_content_blocks_replaces_the_text() -> None:
    model = bash_then_done()
    blocks = [{"type": "text", "text": "first"}, {"type": "text", "text": "second"}]
    answer = {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedMCPToolOutput": blocks}}
    agent = agent_with(model, [], {"PostToolUse": [matcher("hook_0")]}, callbacks(hook_0=answer))
    await run(agent, "clean up")
    assert tool_result_sent(model).text == "first\nsecond"


async def test_a_sub_agents_hooks_say_which_sub_agent_they_are_for() -> None:
    model = ScriptedModel([tool_turn(("Bash", {"command": "ls"})), text_turn("child done")])
    seen: list[dict[str, Any]] = []

    def record(hook_input: dict[str, Any]) -> dict[str, Any]:
        seen.append(hook_input)
        return {}

    parent = Agent(model, tools=[bash_tool([])])
    config = {"PreToolUse": [matcher("hook_0")], "SubagentStop": [matcher("hook_0")]}
    install_hook_callbacks(parent, config, callbacks(hook_0=record))
    child = parent.spawn("look around", label="scout")
    result = await child.wait()
    await parent.aclose()
    assert result.subtype == "success"
    assert [s["hook_event_name"] for s in seen] == ["PreToolUse", "SubagentStop"]
    assert all(s["agent_id"] == "scout" and s["agent_type"] for s in seen)
    assert "agent_transcript_path" in seen[1]


class NoRm(Hook):
    """Stands for the permission policy: it denies any command that removes files."""

    async def before_tool(self, agent: Agent, call: ToolCall) -> ToolDecision:
        return Deny("rm is not allowed") if "rm" in call.arguments.get("command", "") else ALLOW


async def test_a_call_an_sdk_hook_rewrites_is_still_checked_by_the_permission_policy() -> None:
    ran: list[str] = []
    model = bash_then_done("ls")
    rewrite = {"hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": {"command": "rm -rf build"}}}
    agent = Agent(model, tools=[bash_tool(ran)], hooks=[CommandHooks({}), NoRm()])
    install_hook_callbacks(agent, {"PreToolUse": [matcher("hook_0")]}, callbacks(hook_0=rewrite))
    await run(agent, "list")
    assert ran == [] and tool_result_sent(model).text == "denied: rm is not allowed"
    hooks = agent.settings.hooks
    assert isinstance(hooks[1], CommandHooks) and isinstance(hooks[2], NoRm)  # after the settings' hooks


async def test_an_sdk_hook_hears_of_a_call_the_permission_policy_denies() -> None:
    requester = callbacks(hook_0={})
    agent = Agent(bash_then_done("rm x"), tools=[bash_tool([])], hooks=[NoRm()])
    install_hook_callbacks(agent, {"PreToolUse": [matcher("hook_0")]}, requester)
    await run(agent, "go")
    assert [r["input"]["tool_input"] for r in requester.requests] == [{"command": "rm x"}]


async def test_only_the_tool_events_carry_a_tool_use_id() -> None:
    requester = callbacks(hook_0={}, hook_1={})
    agent = Agent(bash_then_done(), tools=[bash_tool([])])
    install_hook_callbacks(
        agent, {"UserPromptSubmit": [matcher("hook_0")], "PreToolUse": [matcher("hook_1")]}, requester
    )
    await run(agent, "go")
    prompt, pre = requester.requests
    assert "tool_use_id" not in prompt and prompt["input"]["hook_event_name"] == "UserPromptSubmit"
    assert pre["tool_use_id"] == pre["input"]["tool_use_id"]


async def test_a_callback_that_gives_no_answer_in_its_timeout_fails_and_may_block() -> None:
    import asyncio

    async def never(request: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(60)
        return {}

    ran: list[str] = []
    model = bash_then_done()
    requester = FakeRequester(never)
    agent = Agent(model, tools=[bash_tool(ran)])
    install_hook_callbacks(agent, {"PreToolUse": [matcher("hook_0", timeout=0.2, onFailure="block")]}, requester)
    events = await run(agent, "go")
    assert ran == [] and requester.timeouts == [0.2]
    assert "no answer" in tool_result_sent(model).text
    assert any(n.level == "error" for n in notices(events))


async def test_subagent_start_hears_of_a_sub_agent_and_gives_it_context() -> None:
    model = ScriptedModel([text_turn("child done")])
    seen: list[dict[str, Any]] = []

    def start(hook_input: dict[str, Any]) -> dict[str, Any]:
        seen.append(hook_input)
        return {"hookSpecificOutput": {"hookEventName": "SubagentStart", "additionalContext": "use the staging db"}}

    parent = Agent(model)
    assert install_hook_callbacks(parent, {"SubagentStart": [matcher("hook_0")]}, callbacks(hook_0=start)) == []
    child = parent.spawn("look around", label="scout")
    result = await child.wait()
    await parent.aclose()
    assert result.subtype == "success"
    [hook_input] = seen
    assert hook_input["hook_event_name"] == "SubagentStart" and hook_input["agent_id"] == "scout"
    assert hook_input["agent_type"]
    assert "use the staging db" in str(model.requests[0].messages)


async def test_pre_compact_hears_of_a_compaction_before_it_runs() -> None:
    model = ScriptedModel([text_turn("first answer"), text_turn("## Goal\nsummary of the talk")])
    seen: list[tuple[dict[str, Any], int]] = []
    agent = Agent(model)

    def before(hook_input: dict[str, Any]) -> dict[str, Any]:
        seen.append((hook_input, len(agent.history)))
        return {"systemMessage": "transcript saved"}

    config = {"PreCompact": [matcher("hook_0", matcher="manual")], "SessionStart": []}
    assert install_hook_callbacks(agent, config, callbacks(hook_0=before)) == []
    await run(agent, "hello")
    history = len(agent.history)
    await agent.compact("keep the greeting")
    [(hook_input, length)] = seen
    assert hook_input["hook_event_name"] == "PreCompact" and hook_input["trigger"] == "manual"
    assert hook_input["custom_instructions"] == "keep the greeting"
    assert length == history  # it ran before the history was replaced


async def test_the_hook_input_carries_the_permission_mode_when_a_policy_has_one() -> None:
    from sagent.permissions.policy import PermissionHook, Permissions

    requester = callbacks(hook_0={})
    agent = Agent(
        bash_then_done("ls"),
        tools=[bash_tool([])],
        hooks=[PermissionHook()],
        permissions=Permissions(mode="acceptEdits", allow=()),
    )
    install_hook_callbacks(agent, {"PreToolUse": [matcher("hook_0")]}, requester)
    await run(agent, "go")
    assert requester.requests[0]["input"]["permission_mode"] == "acceptEdits"


class AsksAboutBash(Hook):
    """Stands for the permission policy: every Bash call needs the user's approval."""

    async def before_tool(self, agent: Agent, call: ToolCall) -> ToolDecision:
        return Ask("Bash needs approval") if call.name == "Bash" else ALLOW


def permission_answer(**decision: Any) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}}


async def test_a_permission_request_hook_answers_a_question_instead_of_the_approver() -> None:
    asked: list[str] = []

    async def approver(agent: Agent, call: ToolCall, reason: str) -> Allow | Deny:
        asked.append(call.name)
        return ALLOW

    ran: list[str] = []
    model = ScriptedModel(
        [tool_turn(("Bash", {"command": "rm -rf /"})), tool_turn(("Bash", {"command": "ls"})), text_turn("ok")]
    )
    seen: list[dict[str, Any]] = []

    def decide(hook_input: dict[str, Any]) -> dict[str, Any]:
        seen.append(hook_input)
        if "rm" in hook_input["tool_input"]["command"]:
            return permission_answer(behavior="deny", message="never rm -rf /")
        return permission_answer(behavior="allow", updatedInput={"command": "ls -la"})

    agent = Agent(model, tools=[bash_tool(ran)], hooks=[AsksAboutBash()], approver=approver)
    assert (
        install_hook_callbacks(
            agent, {"PermissionRequest": [matcher("hook_0", matcher="Bash")]}, callbacks(hook_0=decide)
        )
        == []
    )
    await run(agent, "go")
    assert asked == [] and ran == ["ls -la"]
    assert tool_result_sent(model).text == "denied: never rm -rf /"
    assert seen[0]["hook_event_name"] == "PermissionRequest" and seen[0]["tool_name"] == "Bash"
    assert seen[0]["tool_input"] == {"command": "rm -rf /"}


async def test_a_permission_request_hook_with_no_decision_leaves_the_question_to_the_approver() -> None:
    asked: list[str] = []

    async def approver(agent: Agent, call: ToolCall, reason: str) -> Allow | Deny:
        asked.append(reason)
        return Deny("the user said no")

    requester = callbacks(hook_0={})
    model = bash_then_done()
    agent = Agent(model, tools=[bash_tool([])], hooks=[AsksAboutBash()], approver=approver)
    install_hook_callbacks(agent, {"PermissionRequest": [matcher("hook_0")]}, requester)
    await run(agent, "go")
    assert asked == ["Bash needs approval"] and len(requester.requests) == 1
    assert tool_result_sent(model).text == "denied: the user said no"


async def test_a_permission_request_hook_is_not_asked_about_a_call_nobody_asks_about() -> None:
    requester = callbacks(hook_0=permission_answer(behavior="deny", message="no"))
    ran: list[str] = []
    agent = Agent(bash_then_done(), tools=[bash_tool(ran)])
    install_hook_callbacks(agent, {"PermissionRequest": [matcher("hook_0")]}, requester)
    await run(agent, "go")
    assert requester.requests == [] and ran == ["make clean"]


async def test_a_permission_request_hook_decides_when_nobody_is_there_to_ask() -> None:
    ran: list[str] = []
    requester = callbacks(hook_0=permission_answer(behavior="deny", message="not unattended"))
    model = bash_then_done()
    agent = Agent(model, tools=[bash_tool(ran)], hooks=[AsksAboutBash()])  # no approver: a headless run
    install_hook_callbacks(agent, {"PermissionRequest": [matcher("hook_0")]}, requester)
    await run(agent, "go")
    assert ran == [] and tool_result_sent(model).text == "denied: not unattended"
