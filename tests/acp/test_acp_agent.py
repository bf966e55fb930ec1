"""`sagent acp` driven by the ACP Python SDK's client side, as an editor drives it: a subprocess on stdio
against the fake provider servers (Anthropic Messages, and Chat Completions for another provider)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.acp.acp_client import Editor, anthropic_env, connected, env_for, prompt_blocks, sagent_acp_command
from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response
from tests.fakes.openai_chat_server import FakeChat, text_chunks


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "notes.txt").write_text("old line\n")
    return root


EDIT = ("Edit", {"path": "notes.txt", "old_string": "old line", "new_string": "new line"})
READ = ("Read", {"path": "notes.txt"})


def tool_results(fake: FakeAnthropic) -> list[dict[str, Any]]:
    """Every tool_result block the last request sent."""
    out = []
    for message in fake.requests[-1]["body"]["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else ():
            if block.get("type") == "tool_result":
                content = block["content"]
                text = content if isinstance(content, str) else " ".join(p.get("text", "") for p in content)
                out.append({"text": text, "is_error": bool(block.get("is_error"))})
    return out


def edit_call_id(editor: Editor) -> str:
    [start] = [u for u in editor.of_kind("tool_call") if u["kind"] == "edit"]
    return str(start["toolCallId"])


async def test_initialize_declares_what_sagent_does(project: Path, tmp_path: Path) -> None:
    editor = Editor()
    with FakeAnthropic([]) as fake:
        async with connected(editor, anthropic_env(fake, tmp_path)) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
    init = editor.init
    assert init.protocol_version == 1
    caps = init.agent_capabilities
    assert caps.load_session is True
    assert caps.prompt_capabilities.image is True and caps.prompt_capabilities.embedded_context is True
    assert caps.prompt_capabilities.audio is False
    assert caps.mcp_capabilities.http is True and caps.mcp_capabilities.sse is True
    assert caps.session_capabilities.list is not None  # session/list: the folder's sagent sessions
    assert init.agent_info.name == "sagent"
    assert session.modes.current_mode_id == "default"
    assert [m.id for m in session.modes.available_modes] == ["default", "acceptEdits", "plan"]
    options = {o.root.id if hasattr(o, "root") else o.id: o for o in session.config_options}
    assert set(options) == {"mode", "effort", "model"}
    assert fake.requests == []  # opening a session asks the model nothing


async def test_a_permission_question_allowed_once_edits_the_file_and_shows_its_diff(
    project: Path, tmp_path: Path
) -> None:
    editor = Editor(answers=["allow_once"])
    steps = [tool_use_response([READ]), tool_use_response([EDIT]), text_response("Changed it.")]
    notified = tmp_path / "notified.json"  # the settings' Notification hook runs as the question is put
    hook = {"type": "command", "command": f"cat > {notified}"}
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "sagent"
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.json").write_text(json.dumps({"hooks": {"Notification": [{"hooks": [hook]}]}}))
    with FakeAnthropic(steps) as fake:
        async with connected(editor, anthropic_env(fake, tmp_path)) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            response = await conn.prompt(session_id=session.session_id, prompt=prompt_blocks("fix notes"))
    assert response.stop_reason == "end_turn"
    assert (project / "notes.txt").read_text() == "new line\n"
    told = json.loads(notified.read_text())
    assert (told["notification_type"], told["message"]) == (
        "permission_prompt",
        "sagent needs your permission to use Edit",
    )
    [question] = editor.questions  # Read runs unasked in the project; Edit asks
    assert question["tool_call"]["kind"] == "edit"
    kinds = [o["kind"] for o in question["options"]]
    assert kinds == ["allow_once", "allow_always", "reject_once", "reject_always"]
    assert "Edit(./**)" in question["options"][1]["name"]
    call = edit_call_id(editor)
    assert question["tool_call"]["toolCallId"] == call
    assert editor.statuses(call) == ["pending", "in_progress", "completed"]
    [start] = [u for u in editor.call_updates(call) if u["sessionUpdate"] == "tool_call"]
    assert start["title"] == "Edit notes.txt"
    assert start["locations"] == [{"path": str(project / "notes.txt")}]
    assert start["rawInput"] == EDIT[1]
    [diff] = start["content"]
    assert diff == {
        "type": "diff",
        "path": str(project / "notes.txt"),
        "oldText": "old line\n",
        "newText": "new line\n",
    }
    [read_start] = [u for u in editor.of_kind("tool_call") if u["kind"] == "read"]
    assert editor.statuses(read_start["toolCallId"]) == ["pending", "in_progress", "completed"]
    assert editor.text() == "Changed it."
    usage = editor.of_kind("usage_update")  # after each response: the context used, the window, the cost
    assert len(usage) == 3 and 0 < usage[-1]["used"] < usage[-1]["size"]
    assert usage[-1]["cost"]["currency"] == "USD" and usage[-1]["cost"]["amount"] > usage[0]["cost"]["amount"] > 0


async def test_a_rejected_edit_does_not_run_and_the_model_is_told(project: Path, tmp_path: Path) -> None:
    editor = Editor(answers=["reject_once"])
    steps = [tool_use_response([READ]), tool_use_response([EDIT]), text_response("Left it.")]
    with FakeAnthropic(steps) as fake:
        async with connected(editor, anthropic_env(fake, tmp_path)) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            response = await conn.prompt(session_id=session.session_id, prompt=prompt_blocks("fix notes"))
        results = tool_results(fake)
    assert response.stop_reason == "end_turn"
    assert (project / "notes.txt").read_text() == "old line\n"
    assert editor.statuses(edit_call_id(editor)) == ["pending", "failed"]
    assert results[-1] == {"text": "denied: the user said no", "is_error": True}


async def test_always_allow_asks_once_for_the_rest_of_the_session(project: Path, tmp_path: Path) -> None:
    (project / "more.txt").write_text("old line\n")
    edit_more = ("Edit", {"path": "more.txt", "old_string": "old line", "new_string": "more line"})
    editor = Editor(answers=["allow_always"])
    steps = [
        tool_use_response([READ, ("Read", {"path": "more.txt"})]),
        tool_use_response([EDIT]),
        text_response("one"),
        tool_use_response([edit_more]),
        text_response("two"),
    ]
    with FakeAnthropic(steps) as fake:
        async with connected(editor, anthropic_env(fake, tmp_path)) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            await conn.prompt(session_id=session.session_id, prompt=prompt_blocks("first"))
            await conn.prompt(session_id=session.session_id, prompt=prompt_blocks("second"))
    assert len(editor.questions) == 1  # the second edit in the project ran unasked
    assert (project / "notes.txt").read_text() == "new line\n"
    assert (project / "more.txt").read_text() == "more line\n"


async def test_always_reject_refuses_the_same_kind_of_call_unasked(project: Path, tmp_path: Path) -> None:
    editor = Editor(answers=["reject_always"])
    steps = [
        tool_use_response([READ]),
        tool_use_response([EDIT]),
        tool_use_response([("Write", {"path": "new.txt", "content": "x"})]),
        text_response("gave up"),
    ]
    with FakeAnthropic(steps) as fake:
        async with connected(editor, anthropic_env(fake, tmp_path)) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            await conn.prompt(session_id=session.session_id, prompt=prompt_blocks("go"))
        results = tool_results(fake)
    assert len(editor.questions) == 1
    assert not (project / "new.txt").exists() and (project / "notes.txt").read_text() == "old line\n"
    assert results[-1]["is_error"] and "refused calls like this one" in results[-1]["text"]


async def test_cancel_ends_the_turn_and_the_command_it_ran(project: Path, tmp_path: Path) -> None:
    pid_file = project / "child.pid"
    command = f"sh -c 'echo $$ > {pid_file}; exec sleep 300'"
    editor = Editor()
    steps = [tool_use_response([("Bash", {"command": command})]), text_response("never")]
    with FakeAnthropic(steps) as fake:
        env = anthropic_env(fake, tmp_path)
        async with connected(
            editor, env, "--permission-mode", "bypassPermissions", "--sandbox", "danger-full-access"
        ) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            turn = asyncio.ensure_future(conn.prompt(session_id=session.session_id, prompt=prompt_blocks("run it")))
            for _ in range(600):  # the command has started (bounded: a broken run fails, it does not hang)
                if pid_file.exists() and pid_file.read_text().strip():
                    break
                await asyncio.sleep(0.05)
            pid = int(pid_file.read_text())
            await conn.cancel(session_id=session.session_id)
            response = await turn
    assert response.stop_reason == "cancelled"
    [bash] = editor.of_kind("tool_call")
    assert bash["kind"] == "execute"
    assert editor.statuses(bash["toolCallId"])[-1] == "failed"
    for _ in range(200):
        if not _alive(pid):
            break
        await asyncio.sleep(0.05)
    assert not _alive(pid)
    assert len(fake.requests) == 1  # the model was not asked again after the cancel


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_load_replays_a_session_and_continues_it_on_another_provider(project: Path, tmp_path: Path) -> None:
    env = env_for(tmp_path, MOONSHOT_API_KEY="sk-moonshot-fake-0001")
    with FakeChat([text_chunks("The answer is 42."), text_chunks("Still 42.")]) as fake:
        flags = ("--provider", "moonshot", "--base-url", fake.url)
        first = Editor()
        async with connected(first, env, *flags) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            await conn.prompt(session_id=session.session_id, prompt=prompt_blocks("what is the answer?"))
        second = Editor()
        async with connected(second, env, *flags) as conn:
            listed = await conn.list_sessions(cwd=str(project))
            loaded = await conn.load_session(cwd=str(project), session_id=session.session_id, mcp_servers=[])
            replayed = list(second.updates)
            response = await conn.prompt(session_id=session.session_id, prompt=prompt_blocks("and now?"))
        bodies = fake.bodies()
    [info] = listed.sessions
    assert (info.session_id, info.cwd, info.title) == (session.session_id, str(project), "what is the answer?")
    assert info.updated_at and listed.next_cursor is None
    assert loaded.modes.current_mode_id == "default"
    assert [u["sessionUpdate"] for u in replayed] == ["user_message_chunk", "agent_message_chunk"]
    assert replayed[0]["content"]["text"] == "what is the answer?"
    assert replayed[1]["content"]["text"] == "The answer is 42."
    assert response.stop_reason == "end_turn" and second.text() == "The answer is 42.Still 42."
    contents = [m.get("content") for m in bodies[-1]["messages"]]
    assert "what is the answer?" in json.dumps(contents) and "The answer is 42." in json.dumps(contents)


async def test_load_of_an_unknown_session_is_an_error(project: Path, tmp_path: Path) -> None:
    from acp import RequestError

    editor = Editor()
    with FakeAnthropic([]) as fake:
        async with connected(editor, anthropic_env(fake, tmp_path)) as conn:
            with pytest.raises(RequestError) as raised:
                await conn.load_session(cwd=str(project), session_id="no-such-session", mcp_servers=[])
    assert "no-such-session" in json.dumps(raised.value.data)


async def test_read_and_edit_see_the_editors_unsaved_buffer(project: Path, tmp_path: Path) -> None:
    notes = str(project / "notes.txt")
    editor = Editor(answers=["allow_once"], buffers={notes: "unsaved line\n"})
    edit = ("Edit", {"path": "notes.txt", "old_string": "unsaved line", "new_string": "edited line"})
    steps = [tool_use_response([READ]), tool_use_response([edit]), text_response("ok")]
    with FakeAnthropic(steps) as fake:
        async with connected(editor, anthropic_env(fake, tmp_path)) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            await conn.prompt(session_id=session.session_id, prompt=prompt_blocks("edit it"))
        results = tool_results(fake)
    assert results[0] == {"text": "     1\tunsaved line", "is_error": False}  # the buffer, not the disk
    assert editor.writes == [(notes, "edited line\n")]
    assert (project / "notes.txt").read_text() == "old line\n"  # the editor saves when its user does
    [start] = [u for u in editor.of_kind("tool_call") if u["kind"] == "edit"]
    assert start["content"][0]["oldText"] == "unsaved line\n" and start["content"][0]["newText"] == "edited line\n"


async def test_bash_runs_in_the_editors_terminal(project: Path, tmp_path: Path) -> None:
    editor = Editor(terminal=True)
    steps = [tool_use_response([("Bash", {"command": "echo from-the-terminal"})]), text_response("ran")]
    flags = ("--permission-mode", "bypassPermissions", "--sandbox", "danger-full-access")
    with FakeAnthropic(steps) as fake:
        async with connected(editor, anthropic_env(fake, tmp_path), *flags) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            await conn.prompt(session_id=session.session_id, prompt=prompt_blocks("run"))
        results = tool_results(fake)
    [terminal] = editor.terminals.values()
    assert terminal["command"] == "bash" and "echo from-the-terminal" in terminal["args"][-1]
    assert terminal["cwd"] == str(project) and terminal["released"]
    assert results[0] == {"text": "from-the-terminal\n", "is_error": False}  # as Bash gives it at home
    [bash] = editor.of_kind("tool_call")
    shown = [c for u in editor.call_updates(bash["toolCallId"]) for c in u.get("content", [])]
    assert {"type": "terminal", "terminalId": "term-1"} in shown


async def test_modes_and_the_model_are_the_sessions_to_choose(project: Path, tmp_path: Path) -> None:
    editor = Editor()
    steps = [tool_use_response([EDIT]), text_response("refused"), text_response("on haiku")]
    with FakeAnthropic(steps) as fake:
        async with connected(editor, anthropic_env(fake, tmp_path)) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            await conn.set_session_mode(session_id=session.session_id, mode_id="plan")
            await conn.prompt(session_id=session.session_id, prompt=prompt_blocks("edit"))
            changed = await conn.set_config_option(
                session_id=session.session_id, config_id="model", value="anthropic:claude-haiku-4-5"
            )
            await conn.prompt(session_id=session.session_id, prompt=prompt_blocks("again"))
            from acp import RequestError

            with pytest.raises(RequestError):
                await conn.set_session_mode(session_id=session.session_id, mode_id="bypassPermissions")
        results = tool_results(fake)
    assert editor.questions == []  # plan mode refuses the edit without asking
    assert results[0]["is_error"] and "plan mode" in results[0]["text"]
    model = next(o for o in changed.config_options if (getattr(o, "root", o)).id == "model")
    assert getattr(model, "root", model).current_value == "claude-haiku-4-5"
    assert fake.requests[-1]["body"]["model"] == "claude-haiku-4-5"  # the next turn went to the new model


def test_help_and_bad_flags(tmp_path: Path) -> None:
    helped = subprocess.run([*sagent_acp_command("--help")], capture_output=True, text=True, timeout=60)
    assert helped.returncode == 0 and "Agent Client Protocol" in helped.stdout and "docs/acp.md" in helped.stdout
    bad = subprocess.run([*sagent_acp_command("-p", "hi")], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--prompt is for one task in a terminal" in bad.stderr
    assert bad.stdout == ""


def test_stdout_carries_only_the_protocol(project: Path, tmp_path: Path) -> None:
    """A line that is not JSON-RPC would break the editor's reader: even sagent's own notices go to stderr."""
    init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
    new = json.dumps(
        {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": str(project), "mcpServers": []}}
    )
    env = env_for(tmp_path, ANTHROPIC_API_KEY="sk-ant-fake-key-for-tests-0001")
    out = subprocess.run(
        [sys.executable, "-m", "sagent.cli.main", "acp"],
        input=f"{init}\n{new}\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert [line.get("id") for line in lines] == [1, 2]
    assert lines[1]["result"]["sessionId"]
    assert "sagent acp: ready" in out.stderr
    assert out.returncode == 0


MCP_SERVER = str(Path(__file__).resolve().parents[1] / "fakes" / "mcp_server.py")


async def test_the_editors_mcp_server_is_there_from_the_first_request(project: Path, tmp_path: Path) -> None:
    from acp.schema import McpServerStdio

    editor = Editor(answers=["allow_once"])
    call = ("mcp__fake__echo", {"text": "hi"})
    steps = [tool_use_response([call]), text_response("said it")]
    server = McpServerStdio(name="fake", command=sys.executable, args=[MCP_SERVER, "basic"], env=[])
    with FakeAnthropic(steps) as fake:
        async with connected(editor, anthropic_env(fake, tmp_path)) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[server])
            await conn.prompt(session_id=session.session_id, prompt=prompt_blocks("echo hi"))
        first_tools = [t["name"] for t in fake.requests[0]["body"]["tools"]]
        results = tool_results(fake)
    assert "mcp__fake__echo" in first_tools
    assert results[0] == {"text": "echo: hi", "is_error": False}
    [start] = editor.of_kind("tool_call")
    assert start["title"] == "echo (fake)" and start["kind"] == "other"


async def test_an_approved_plan_is_sent_as_the_plan_and_changes_the_mode(project: Path, tmp_path: Path) -> None:
    editor = Editor(answers=["accept_edits"])
    plan = "Steps:\n1. Read notes.txt\n2. Change old to new"
    steps = [
        tool_use_response([READ]),
        tool_use_response([("ExitPlanMode", {"plan": plan})]),
        tool_use_response([EDIT]),
        text_response("done"),
    ]
    with FakeAnthropic(steps) as fake:
        async with connected(editor, anthropic_env(fake, tmp_path), "--permission-mode", "plan") as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            response = await conn.prompt(session_id=session.session_id, prompt=prompt_blocks("plan it"))
    assert response.stop_reason == "end_turn"
    assert session.modes.current_mode_id == "plan"
    [question] = editor.questions  # the plan; the edit after it runs unasked in acceptEdits
    assert [o["optionId"] for o in question["options"]] == ["accept_edits", "default", "keep_planning"]
    [plan_update] = editor.of_kind("plan")
    assert [e["content"] for e in plan_update["entries"]] == ["Read notes.txt", "Change old to new"]
    assert [u["currentModeId"] for u in editor.of_kind("current_mode_update")] == ["acceptEdits"]
    assert (project / "notes.txt").read_text() == "new line\n"


async def test_embedded_files_and_images_reach_the_model(project: Path, tmp_path: Path) -> None:
    from acp import image_block, resource_block, text_block
    from acp.schema import TextResourceContents

    pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGMAAQAABQABDQottAAAAABJRU5ErkJggg=="
    uri = (project / "notes.txt").as_uri()
    blocks = [
        text_block("what does this say?"),
        resource_block(TextResourceContents(uri=uri, text="unsaved words\n", mime_type="text/plain")),
        image_block(pixel, "image/png"),
    ]
    editor = Editor()
    with FakeAnthropic([text_response("it says unsaved words")]) as fake:
        env = anthropic_env(fake, tmp_path)
        async with connected(editor, env, "--model", "claude-sonnet-4-6") as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            await conn.prompt(session_id=session.session_id, prompt=blocks)
        [message] = fake.requests[0]["body"]["messages"]
    kinds = [block["type"] for block in message["content"]]
    assert kinds == ["text", "text", "image"]
    assert message["content"][1]["text"].startswith('<file path="notes.txt"') and "unsaved words" in str(message)
    assert message["content"][2]["source"]["data"] == pixel


async def test_cancelling_while_a_question_is_open_runs_nothing_and_ends_the_turn(
    project: Path, tmp_path: Path
) -> None:
    editor = Editor(answers=["cancel the turn"])
    steps = [tool_use_response([READ]), tool_use_response([EDIT]), text_response("never")]
    with FakeAnthropic(steps) as fake:
        async with connected(editor, anthropic_env(fake, tmp_path)) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            response = await conn.prompt(session_id=session.session_id, prompt=prompt_blocks("edit"))
            after = await conn.prompt(session_id=session.session_id, prompt=prompt_blocks("still there?"))
        bodies = [r["body"] for r in fake.requests]
    assert response.stop_reason == "cancelled"
    assert (project / "notes.txt").read_text() == "old line\n"
    assert editor.statuses(edit_call_id(editor))[-1] == "failed"
    assert after.stop_reason == "end_turn" and len(bodies) == 3  # the session goes on after a cancel


async def test_custom_commands_are_offered_and_run_as_in_sagent_p(project: Path, tmp_path: Path) -> None:
    commands = tmp_path / "config" / "sagent" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text(
        "---\ndescription: review a file\nargument-hint: FILE\n---\nReview $ARGUMENTS for bugs.\n"
    )
    editor = Editor()
    with FakeAnthropic([text_response("looks fine")]) as fake:
        env = {**anthropic_env(fake, tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config")}
        async with connected(editor, env) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            await conn.prompt(session_id=session.session_id, prompt=prompt_blocks("/review notes.txt"))
        [message] = fake.requests[0]["body"]["messages"]
    [offered] = editor.of_kind("available_commands_update")
    assert offered["availableCommands"] == [
        {"name": "review", "description": "review a file (user)", "input": {"hint": "FILE"}}
    ]
    assert "Review notes.txt for bugs." in json.dumps(message["content"])


async def test_additional_directories_count_as_the_project(project: Path, tmp_path: Path) -> None:
    other = tmp_path / "shared"
    other.mkdir()
    (other / "lib.txt").write_text("shared text\n")
    editor = Editor()
    read_other = ("Read", {"path": str(other / "lib.txt")})
    steps = [tool_use_response([read_other]), text_response("read it")]
    with FakeAnthropic(steps) as fake:
        async with connected(editor, anthropic_env(fake, tmp_path)) as conn:
            assert editor.init.agent_capabilities.session_capabilities.additional_directories is not None
            session = await conn.new_session(cwd=str(project), mcp_servers=[], additional_directories=[str(other)])
            await conn.prompt(session_id=session.session_id, prompt=prompt_blocks("read the shared file"))
        results = tool_results(fake)
    assert editor.questions == []  # reading there asks nothing, as with --add-dir
    assert results[0] == {"text": "     1\tshared text", "is_error": False}


async def test_cancel_kills_the_command_in_the_editors_terminal(project: Path, tmp_path: Path) -> None:
    editor = Editor(terminal=True)
    steps = [tool_use_response([("Bash", {"command": "sleep 300"})]), text_response("never")]
    flags = ("--permission-mode", "bypassPermissions", "--sandbox", "danger-full-access")
    with FakeAnthropic(steps) as fake:
        async with connected(editor, anthropic_env(fake, tmp_path), *flags) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            turn = asyncio.ensure_future(conn.prompt(session_id=session.session_id, prompt=prompt_blocks("wait")))
            for _ in range(600):  # bounded: a broken run fails, it does not hang
                if editor.terminals:
                    break
                await asyncio.sleep(0.05)
            await conn.cancel(session_id=session.session_id)
            response = await turn
            for _ in range(200):
                if editor.terminals["term-1"]["released"]:
                    break
                await asyncio.sleep(0.05)
    assert response.stop_reason == "cancelled"
    terminal = editor.terminals["term-1"]
    assert terminal.get("killed") and terminal["released"]
    assert terminal["proc"].returncode is not None  # the command is gone with the turn


async def test_the_reasoning_effort_is_an_option_and_thinking_streams_as_thought(project: Path, tmp_path: Path) -> None:
    from tests.fakes.openai_responses_server import FakeResponses, responses_reasoning, responses_text

    editor = Editor()
    steps = [responses_text("quick"), responses_reasoning("weighing it up", "enc-1", "considered")]
    with FakeResponses(steps) as fake:
        env = env_for(tmp_path, OPENAI_API_KEY="sk-openai-fake-0001", OPENAI_BASE_URL=fake.url)
        async with connected(editor, env, "--provider", "openai", "--model", "gpt-5.4") as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            options = {getattr(o, "root", o).id: getattr(o, "root", o) for o in session.config_options}
            assert options["effort"].current_value == "off" and options["effort"].category == "thought_level"
            await conn.prompt(session_id=session.session_id, prompt=prompt_blocks("first"))
            changed = await conn.set_config_option(session_id=session.session_id, config_id="effort", value="high")
            await conn.prompt(session_id=session.session_id, prompt=prompt_blocks("second"))
        bodies = fake.bodies()
    effort = next(getattr(o, "root", o) for o in changed.config_options if getattr(o, "root", o).id == "effort")
    assert effort.current_value == "high"
    assert "effort" not in json.dumps(bodies[0].get("reasoning") or {})
    assert bodies[1]["reasoning"]["effort"] == "high"  # the next request carries the effort chosen
    assert editor.text("agent_thought_chunk") == "weighing it up"
    assert editor.text() == "quickconsidered"


@pytest.mark.parametrize("transport", ["http", "sse"])
async def test_the_editors_remote_mcp_servers_are_reached(
    transport: str, project: Path, tmp_path: Path, http_server: Any
) -> None:
    from acp.schema import HttpHeader, HttpMcpServer, SseMcpServer

    url = http_server("basic", transport)
    headers = [HttpHeader(name="X-Test", value="1")]
    server: Any = (
        HttpMcpServer(name="remote", url=url, headers=headers, type="http")
        if transport == "http"
        else SseMcpServer(name="remote", url=url, headers=headers, type="sse")
    )
    editor = Editor(answers=["allow_once"])
    steps = [tool_use_response([("mcp__remote__add", {"a": 2, "b": 3})]), text_response("5")]
    with FakeAnthropic(steps) as fake:
        async with connected(editor, anthropic_env(fake, tmp_path)) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[server])
            await conn.prompt(session_id=session.session_id, prompt=prompt_blocks("add 2 and 3"))
        results = tool_results(fake)
    assert results[0]["text"] == "5" and not results[0]["is_error"]


async def test_a_loaded_session_replays_its_tool_calls_with_their_results(project: Path, tmp_path: Path) -> None:
    steps = [tool_use_response([READ]), text_response("It says old line."), text_response("Yes.")]
    with FakeAnthropic(steps) as fake:
        env = anthropic_env(fake, tmp_path)
        first = Editor()
        async with connected(first, env) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            await conn.prompt(session_id=session.session_id, prompt=prompt_blocks("read notes"))
        second = Editor()
        async with connected(second, env) as conn:
            await conn.load_session(cwd=str(project), session_id=session.session_id, mcp_servers=[])
            replayed = list(second.updates)
            await conn.prompt(session_id=session.session_id, prompt=prompt_blocks("sure?"))
    kinds = [u["sessionUpdate"] for u in replayed]
    assert kinds == ["user_message_chunk", "tool_call", "tool_call_update", "agent_message_chunk"]
    call, result = replayed[1], replayed[2]
    assert (call["kind"], call["title"], call["rawInput"]) == ("read", "Read notes.txt", READ[1])
    assert result["toolCallId"] == call["toolCallId"] and result["status"] == "completed"
    assert "old line" in json.dumps(result["content"])
    assert second.text() == "It says old line.Yes."


@pytest.mark.parametrize(("provider_stop", "expected"), [("max_tokens", "max_tokens"), ("refusal", "refusal")])
async def test_a_turn_cut_by_the_output_limit_or_refused_says_so(
    provider_stop: str, expected: str, project: Path, tmp_path: Path
) -> None:
    from tests.fakes.anthropic_server import Reply

    editor = Editor()
    with FakeAnthropic([Reply([{"type": "text", "text": "partial"}], provider_stop)]) as fake:
        async with connected(editor, anthropic_env(fake, tmp_path)) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            response = await conn.prompt(session_id=session.session_id, prompt=prompt_blocks("go"))
    assert response.stop_reason == expected and editor.text() == "partial"


async def test_the_round_limit_ends_the_turn_with_max_turn_requests(project: Path, tmp_path: Path) -> None:
    editor = Editor()
    steps = [tool_use_response([READ]), tool_use_response([READ]), text_response("never")]
    with FakeAnthropic(steps) as fake:
        async with connected(editor, anthropic_env(fake, tmp_path), "--max-tool-rounds", "1") as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            response = await conn.prompt(session_id=session.session_id, prompt=prompt_blocks("go"))
    assert response.stop_reason == "max_turn_requests"


async def test_a_spent_budget_ends_the_turn_and_says_why(project: Path, tmp_path: Path) -> None:
    editor = Editor()
    steps = [tool_use_response([READ], input_tokens=400_000), text_response("never")]
    with FakeAnthropic(steps) as fake:
        flags = ("--max-budget-usd", "0.01", "--model", "claude-sonnet-4-6")
        async with connected(editor, anthropic_env(fake, tmp_path), *flags) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            response = await conn.prompt(session_id=session.session_id, prompt=prompt_blocks("go"))
    assert response.stop_reason == "end_turn"
    assert "[sagent: " in editor.text() and "budget" in editor.text()
