"""PreToolUse and PostToolUse command hooks, as real shell scripts: each outcome (exit 0 with and without
JSON, exit 2, allow/deny/ask, updatedInput, additionalContext, a failure, a timeout) and matcher selection."""

from __future__ import annotations

import os
import time
from pathlib import Path

from sagent.agent.agent import Agent
from sagent.agent.hooks import ALLOW, Allow, Deny
from sagent.events import Result, ToolFinished
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.types import ToolCall, ToolResult
from sagent.userhooks.config import matches
from tests.userhooks.scripts import bash_tool, entry, hooks, notices, recorded, recorder, run, script


def bash_then_done(command: str = "make clean") -> ScriptedModel:
    return ScriptedModel([tool_turn(("Bash", {"command": command})), text_turn("done")])


def last_tool_result(model: ScriptedModel) -> ToolResult:
    message = model.requests[1].messages[-1]
    assert isinstance(message, ToolResult)
    return message


async def test_exit_0_without_output_lets_the_call_run_and_the_hook_reads_claude_codes_input(tmp_path: Path) -> None:
    ran: list[str] = []
    model = bash_then_done()
    pre = recorder(tmp_path, "pre", 'echo "$SAGENT_PROJECT_DIR|$CLAUDE_PROJECT_DIR|$(pwd)" > "$0.env"')
    agent = Agent(model, tools=[bash_tool(ran)], hooks=[hooks(tmp_path, PreToolUse=[entry(pre, "Bash")])])
    events = await run(agent, "clean up")
    assert ran == ["make clean"]
    assert isinstance(events[-1], Result) and events[-1].subtype == "success"
    [seen] = recorded(tmp_path, "pre")
    assert seen["hook_event_name"] == "PreToolUse" and seen["tool_name"] == "Bash"
    assert seen["tool_input"] == {"command": "make clean"} and seen["tool_use_id"]
    assert seen["session_id"] == agent.session.id and seen["cwd"] == str(agent.context.cwd)
    assert "transcript_path" in seen
    project = str(tmp_path.resolve())
    assert Path(pre + ".env").read_text().strip() == f"{project}|{project}|{project}"
    assert notices(events) == []


async def test_exit_2_blocks_the_call_and_its_stderr_reaches_the_model(tmp_path: Path) -> None:
    ran: list[str] = []
    model = bash_then_done("rm -rf /")
    pre = script(tmp_path, "pre", 'echo "rm -rf is not allowed; use make clean" >&2\necho ignored\nexit 2\n')
    agent = Agent(model, tools=[bash_tool(ran)], hooks=[hooks(tmp_path, PreToolUse=[entry(pre, "Bash")])])
    events = await run(agent, "clean up")
    assert ran == []
    result = last_tool_result(model)
    assert result.is_error and result.text == "denied: rm -rf is not allowed; use make clean"
    assert isinstance(events[-1], Result) and events[-1].subtype == "success"


async def test_a_json_deny_blocks_with_its_reason(tmp_path: Path) -> None:
    ran: list[str] = []
    model = bash_then_done()
    decision = '"permissionDecision": "deny", "permissionDecisionReason": "not on Fridays"'
    answer = f'{{"hookSpecificOutput": {{"hookEventName": "PreToolUse", {decision}}}}}'
    pre = script(tmp_path, "pre", f"echo '{answer}'\n")
    agent = Agent(model, tools=[bash_tool(ran)], hooks=[hooks(tmp_path, PreToolUse=[entry(pre)])])
    await run(agent, "clean up")
    assert ran == [] and last_tool_result(model).text == "denied: not on Fridays"


async def test_a_json_allow_runs_the_call(tmp_path: Path) -> None:
    ran: list[str] = []
    answer = '{"hookSpecificOutput": {"permissionDecision": "allow", "permissionDecisionReason": "safe"}}'
    pre = script(tmp_path, "pre", f"echo '{answer}'\n")
    agent = Agent(bash_then_done(), tools=[bash_tool(ran)], hooks=[hooks(tmp_path, PreToolUse=[entry(pre)])])
    events = await run(agent, "clean up")
    assert ran == ["make clean"] and notices(events) == []


class Approver:
    def __init__(self, answer: Allow | Deny) -> None:
        self.answer = answer
        self.asked: list[tuple[str, str]] = []

    async def __call__(self, agent: Agent, call: ToolCall, reason: str) -> Allow | Deny:
        self.asked.append((call.arguments["command"], reason))
        return self.answer


async def test_a_json_ask_goes_to_the_approver(tmp_path: Path) -> None:
    answer = '{"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "deletes files"}}'
    pre = script(tmp_path, "pre", f"echo '{answer}'\n")
    for said, runs in ((Deny("no, keep them"), False), (ALLOW, True)):
        ran: list[str] = []
        approver = Approver(said)
        model = bash_then_done()
        agent = Agent(
            model, tools=[bash_tool(ran)], hooks=[hooks(tmp_path, PreToolUse=[entry(pre)])], approver=approver
        )
        await run(agent, "clean up")
        assert approver.asked == [("make clean", "deletes files")]
        assert ran == (["make clean"] if runs else [])
        if not runs:
            assert last_tool_result(model).text == "denied: no, keep them"


async def test_updated_input_runs_the_call_with_the_new_arguments(tmp_path: Path) -> None:
    ran: list[str] = []
    answer = '{"hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": {"command": "make -n clean"}}}'
    pre = script(tmp_path, "pre", f"echo '{answer}'\n")
    agent = Agent(bash_then_done(), tools=[bash_tool(ran)], hooks=[hooks(tmp_path, PreToolUse=[entry(pre)])])
    await run(agent, "clean up")
    assert ran == ["make -n clean"]


async def test_the_matcher_selects_the_hooks_that_run(tmp_path: Path) -> None:
    ran: list[str] = []
    table = hooks(
        tmp_path,
        PreToolUse=[
            entry(recorder(tmp_path, "edits"), "Edit|Write"),
            entry(recorder(tmp_path, "bash"), "Edit|Bash"),
            entry(recorder(tmp_path, "everything"), "*"),
            entry(recorder(tmp_path, "blank"), ""),
            entry(recorder(tmp_path, "regex"), "^Ba"),
            entry(recorder(tmp_path, "mcp"), "mcp__github__.*"),
        ],
    )
    await run(Agent(bash_then_done(), tools=[bash_tool(ran)], hooks=[table]), "clean up")
    assert ran == ["make clean"]
    counts = {name: len(recorded(tmp_path, name)) for name in ("edits", "bash", "everything", "blank", "regex", "mcp")}
    assert counts == {"edits": 0, "bash": 1, "everything": 1, "blank": 1, "regex": 1, "mcp": 0}
    assert matches("mcp__github__.*", "mcp__github__create_issue") and not matches("mcp__github__.*", "Bash")
    assert not matches("Bash", "BashOutput") and matches("Notebook.*", "NotebookEdit")


async def test_a_failing_hook_is_reported_and_the_call_runs(tmp_path: Path) -> None:
    ran: list[str] = []
    crash = script(tmp_path, "crash", 'echo "jq: command not found" >&2\nexit 1\n')
    nonsense = script(tmp_path, "nonsense", "echo '{not json'\n")
    table = hooks(tmp_path, PreToolUse=[entry(crash), entry(nonsense), entry(str(tmp_path / "missing.sh"))])
    agent = Agent(bash_then_done(), tools=[bash_tool(ran)], hooks=[table])
    events = await run(agent, "clean up")
    assert ran == ["make clean"]
    said = {n.hook.split("`")[1].rsplit("/", 1)[-1]: n for n in notices(events)}
    assert set(said) == {"crash", "nonsense", "missing.sh"} and all(n.level == "error" for n in said.values())
    assert said["crash"].message == "exited with 1: jq: command not found"
    assert "invalid JSON" in said["nonsense"].message
    assert said["missing.sh"].message.startswith("exited with 127")
    # Each notice comes before the tool's result in the stream, and the session log has it.
    first_result = next(i for i, e in enumerate(events) if isinstance(e, ToolFinished))
    assert all(events.index(n) < first_result for n in said.values())
    assert agent.session.path is None or "hook_notice" in agent.session.path.read_text()


async def test_a_hook_past_its_timeout_is_killed_with_its_children_and_reported(tmp_path: Path) -> None:
    ran: list[str] = []
    pids = tmp_path / "pids"
    slow = script(tmp_path, "slow", f'sleep 30 &\necho $! > "{pids}"\nwait\n')
    table = hooks(tmp_path, PreToolUse=[entry(slow, timeout=0.5)])
    agent = Agent(bash_then_done(), tools=[bash_tool(ran)], hooks=[table])
    events = await run(agent, "clean up")
    assert ran == ["make clean"]
    [notice] = notices(events)
    assert notice.level == "error" and notice.message == "timed out after 0.5 s and was killed"
    child = int(pids.read_text())
    for _ in range(100):  # the kill is sent before the run goes on; the process may take a moment to go
        if not _alive(child):
            break
        time.sleep(0.02)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie counts as gone: it no longer runs.
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


async def test_post_tool_use_feedback_reaches_the_model_with_the_result(tmp_path: Path) -> None:
    ran: list[str] = []
    model = bash_then_done()
    log = recorder(tmp_path, "post", 'echo "lint failed: fix src/a.py" >&2; exit 2')
    context = script(tmp_path, "ctx", """echo '{"hookSpecificOutput": {"additionalContext": "3 files changed"}}'\n""")
    block = script(tmp_path, "block", """echo '{"decision": "block", "reason": "tests now fail"}'\n""")
    table = hooks(tmp_path, PostToolUse=[entry(log, "Bash"), entry(context), entry(block), entry(log, "Edit")])
    await run(Agent(model, tools=[bash_tool(ran)], hooks=[table]), "clean up")
    result = last_tool_result(model)
    assert result.text.startswith("ran make clean\n\n") and not result.is_error
    assert "[PostToolUse hook] lint failed: fix src/a.py" in result.text
    assert "[PostToolUse hook] tests now fail" in result.text
    assert "[PostToolUse hook] 3 files changed" in result.text
    [seen] = recorded(tmp_path, "post")
    assert seen["hook_event_name"] == "PostToolUse"
    assert seen["tool_response"] == {"output": "ran make clean", "is_error": False}


async def test_post_tool_use_does_not_run_for_a_denied_call(tmp_path: Path) -> None:
    ran: list[str] = []
    deny = script(tmp_path, "deny", "echo no >&2; exit 2\n")
    post = recorder(tmp_path, "post")
    table = hooks(tmp_path, PreToolUse=[entry(deny)], PostToolUse=[entry(post)])
    await run(Agent(bash_then_done(), tools=[bash_tool(ran)], hooks=[table]), "clean up")
    assert ran == [] and recorded(tmp_path, "post") == []


async def test_continue_false_stops_the_run_and_says_why(tmp_path: Path) -> None:
    ran: list[str] = []
    stop = script(tmp_path, "stop", """echo '{"continue": false, "stopReason": "build is broken"}'\n""")
    model = ScriptedModel([tool_turn(("Bash", {"command": "make"})), text_turn("never")])
    events = await run(Agent(model, tools=[bash_tool(ran)], hooks=[hooks(tmp_path, PreToolUse=[entry(stop)])]), "go")
    assert ran == []
    assert isinstance(events[-1], Result) and events[-1].subtype == "interrupted"
    assert [(n.level, n.message) for n in notices(events)] == [("warning", "stopped the agent: build is broken")]
    assert len(model.requests) == 1


async def test_a_system_message_is_shown_to_the_user(tmp_path: Path) -> None:
    ran: list[str] = []
    hello = script(tmp_path, "hello", """echo '{"systemMessage": "checked by policy v2"}'\n""")
    agent = Agent(bash_then_done(), tools=[bash_tool(ran)], hooks=[hooks(tmp_path, PreToolUse=[entry(hello)])])
    events = await run(agent, "clean up")
    assert ran == ["make clean"]
    [notice] = notices(events)
    assert (notice.level, notice.message, notice.agent) == ("info", "checked by policy v2", "main")
    assert notice.hook.startswith("PreToolUse `")
