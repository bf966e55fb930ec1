"""The files a compaction keeps are the files the agent really read or changed: a call that was refused (a
permission rule, an unknown path, an edit that did not apply) or never answered touched nothing."""

from __future__ import annotations

from pathlib import Path

from sagent.agent.agent import Agent
from sagent.agent.compaction import FILES_SECTION, Thread
from sagent.permissions.policy import PermissionHook, Permissions
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.sandbox import OFF
from sagent.tools import builtin_tools
from sagent.types import AssistantMessage, ToolCall, ToolResult, UserMessage


def call(id: str, name: str, path: str) -> ToolCall:
    return ToolCall(id, name, {"path": path})


def test_only_calls_that_succeeded_count_as_files_touched() -> None:
    calls = [
        call("r1", "Read", "a.py"),
        call("r2", "Read", "secret.env"),  # denied by a rule
        call("r3", "Read", "missing.py"),  # no such file
        call("e1", "Edit", "b.py"),
        call("e2", "Edit", "c.py"),  # its old text was not found
        call("w1", "Write", "d.py"),  # still running when the history was cut: no result yet
    ]
    history = [
        UserMessage.of("look around"),
        AssistantMessage(tuple(calls)),
        ToolResult.of(calls[0], "print('a')"),
        ToolResult.of(calls[1], "denied: Read(secret.env) is denied by a rule", is_error=True),
        ToolResult.of(calls[2], "missing.py: no such file", is_error=True),
        ToolResult.of(calls[3], "edited b.py"),
        ToolResult.of(calls[4], "the old text was not found in c.py", is_error=True),
    ]
    thread = Thread().extended(history)
    assert thread.files_read == ("a.py",)
    assert thread.files_modified == ("b.py",)


def test_a_file_read_after_a_refusal_counts_once() -> None:
    first, second = call("r1", "Read", "a.py"), call("r2", "Read", "a.py")
    history = [
        AssistantMessage((first,)),
        ToolResult.of(first, "denied", is_error=True),
        AssistantMessage((second,)),
        ToolResult.of(second, "text"),
    ]
    assert Thread(files_read=("z.py",)).extended(history).files_read == ("z.py", "a.py")


async def test_a_read_a_rule_denied_is_not_in_the_summary_as_kept(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("print('hi')\n")
    (tmp_path / "secret.env").write_text("TOKEN=1\n")
    policy = Permissions.build(allow=["Read"], deny=["Read(secret.env)"], cwd=tmp_path)
    model = ScriptedModel(
        [
            tool_turn(("Read", {"path": "secret.env"}), ("Read", {"path": "app.py"})),
            text_turn("app.py prints hi; secret.env is not mine to read."),
            text_turn("## Goal\nLook at the project.\n> look at the project"),  # the summary, without paths
        ]
    )
    tools = [t for t in builtin_tools() if t.name == "Read"]
    agent = Agent(model, tools=tools, cwd=tmp_path, permissions=policy, hooks=[PermissionHook()], sandbox=OFF)
    await agent.ask("look at the project")
    results = [m for m in agent.history if isinstance(m, ToolResult)]
    assert [r.is_error for r in results] == [True, False]  # the rule held
    done = await agent.compact()
    await agent.aclose()
    assert done is not None
    assert done.files_read == ("app.py",)
    summary = agent.history[0].text
    assert f"{FILES_SECTION}\nRead: app.py" in summary
    assert "secret.env" not in summary
