"""UserPromptSubmit, Stop, SessionStart and SubagentStop command hooks, as real shell scripts: context for
the model, a blocked prompt, a run kept going (and the guard against a hook that always objects), and
which agents each event runs for."""

from __future__ import annotations

import asyncio
from pathlib import Path

from sagent.agent.agent import Agent
from sagent.agent.hooks import MAX_STOP_CONTINUES
from sagent.agent.session import SessionLog
from sagent.events import Result
from sagent.providers.scripted import ScriptedModel, text_turn
from sagent.types import PeerMessage, UserMessage
from tests.userhooks.scripts import entry, hooks, notices, recorded, recorder, run, script


def texts(model: ScriptedModel, request: int = 0) -> list[str]:
    """The messages of a request as the model reads them (a hook's message names the hook)."""
    out = []
    for message in model.requests[request].messages:
        if isinstance(message, PeerMessage):
            out.append(f"[{message.sender}] {message.text}")
        elif isinstance(message, UserMessage):
            out.append(message.text)
    return out


async def test_a_prompt_hooks_plain_output_and_json_context_follow_the_prompt(tmp_path: Path) -> None:
    model = ScriptedModel([text_turn("ok")])
    plain = recorder(tmp_path, "plain", 'echo "branch: main"')
    as_json = script(tmp_path, "json", """echo '{"hookSpecificOutput": {"additionalContext": "CI is red"}}'\n""")
    agent = Agent(model, hooks=[hooks(tmp_path, UserPromptSubmit=[entry(plain), entry(as_json)])])
    await run(agent, "fix the build")
    assert texts(model) == ["fix the build", "[UserPromptSubmit hook] branch: main\n\nCI is red"]
    [seen] = recorded(tmp_path, "plain")
    assert seen["hook_event_name"] == "UserPromptSubmit" and seen["prompt"] == "fix the build"


async def test_exit_2_blocks_the_prompt_the_model_never_sees_it(tmp_path: Path) -> None:
    model = ScriptedModel([text_turn("never")])
    block = script(tmp_path, "block", 'echo "the prompt holds an API key" >&2\nexit 2\n')
    agent = Agent(model, hooks=[hooks(tmp_path, UserPromptSubmit=[entry(block)])])
    events = await run(agent, "deploy with sk-live-123")
    assert model.requests == [] and agent.history == []
    result = events[-1]
    assert isinstance(result, Result) and result.subtype == "error_during_execution"
    assert result.text == "the prompt was blocked by a hook: the prompt holds an API key"
    [notice] = notices(events)
    assert (notice.level, notice.message) == ("warning", "prompt blocked: the prompt holds an API key")


async def test_a_json_block_blocks_the_prompt_and_later_prompts_still_run(tmp_path: Path) -> None:
    model = ScriptedModel([text_turn("hello")])
    body = """if grep -q secret; then echo '{"decision": "block", "reason": "no secrets"}'; fi\n"""
    agent = Agent(model, hooks=[hooks(tmp_path, UserPromptSubmit=[entry(script(tmp_path, "guard", body))])])
    blocked = await run(agent, "the secret is 42")
    assert isinstance(blocked[-1], Result) and blocked[-1].text == "the prompt was blocked by a hook: no secrets"
    fine = await run(agent, "hi")
    assert isinstance(fine[-1], Result) and fine[-1].subtype == "success" and texts(model) == ["hi"]


async def test_a_stop_hook_keeps_the_run_going_once_with_its_reason(tmp_path: Path) -> None:
    model = ScriptedModel([text_turn("done"), text_turn("tests pass now, done")])
    # As Claude Code's docs advise: object only when this run is not already going on because of the hook.
    log = tmp_path / "stop.jsonl"
    body = f"""input=$(cat)
echo "$input" >> "{log}"
if echo "$input" | grep -q '"stop_hook_active": false'; then echo "run the tests first" >&2; exit 2; fi
"""
    stop = script(tmp_path, "stop", body)
    events = await run(Agent(model, hooks=[hooks(tmp_path, Stop=[entry(stop)])]), "fix it")
    assert isinstance(events[-1], Result) and events[-1].subtype == "success"
    assert events[-1].text == "tests pass now, done"
    assert texts(model, 1)[-1] == "[Stop hook] run the tests first"
    seen = recorded(tmp_path, "stop")
    assert [s["stop_hook_active"] for s in seen] == [False, True]
    assert seen[0]["hook_event_name"] == "Stop" and seen[0]["last_assistant_message"] == "done"


async def test_a_json_block_from_a_stop_hook_keeps_the_run_going(tmp_path: Path) -> None:
    model = ScriptedModel([text_turn("done"), text_turn("really done")])
    flag = tmp_path / "once"
    answer = '{"decision": "block", "reason": "update the changelog"}'
    body = f"""if [ ! -e "{flag}" ]; then touch "{flag}"; echo '{answer}'; fi\n"""
    events = await run(Agent(model, hooks=[hooks(tmp_path, Stop=[entry(script(tmp_path, "s", body))])]), "go")
    assert isinstance(events[-1], Result) and events[-1].text == "really done"
    assert texts(model, 1)[-1] == "[Stop hook] update the changelog"


async def test_a_stop_hook_that_always_objects_cannot_loop_forever(tmp_path: Path) -> None:
    model = ScriptedModel([text_turn(f"answer {i}") for i in range(MAX_STOP_CONTINUES + 1)])
    nag = script(tmp_path, "nag", 'echo "not good enough" >&2\nexit 2\n')
    events = await run(Agent(model, hooks=[hooks(tmp_path, Stop=[entry(nag)])]), "go")
    assert len(model.requests) == MAX_STOP_CONTINUES + 1
    assert isinstance(events[-1], Result) and events[-1].subtype == "success"
    assert events[-1].text == f"answer {MAX_STOP_CONTINUES}"
    [notice] = notices(events)
    assert notice.level == "warning" and f"kept it going {MAX_STOP_CONTINUES} times" in notice.message


async def test_session_start_context_comes_before_the_first_prompt_only(tmp_path: Path) -> None:
    model = ScriptedModel([text_turn("one"), text_turn("two")])
    start = recorder(tmp_path, "start", 'echo "open issues: #12, #15"')
    agent = Agent(model, hooks=[hooks(tmp_path, SessionStart=[entry(start, "startup")])])
    await run(agent, "first")
    await run(agent, "second")
    assert texts(model, 0) == ["[SessionStart hook] open issues: #12, #15", "first"]
    assert texts(model, 1)[-1] == "second" and len(recorded(tmp_path, "start")) == 1
    assert recorded(tmp_path, "start")[0]["source"] == "startup"


async def test_a_resumed_session_starts_with_source_resume(tmp_path: Path) -> None:
    log = SessionLog.create(tmp_path, {"provider": "scripted", "model": "scripted"}, directory=tmp_path / "s")
    first = Agent(ScriptedModel([text_turn("one")]), session=log)
    await run(first, "first")
    await first.aclose()
    path = log.path
    assert path is not None
    startup = recorder(tmp_path, "startup")
    resume = recorder(tmp_path, "resume", 'echo "welcome back"')
    table = hooks(tmp_path, SessionStart=[entry(startup, "startup"), entry(resume, "resume")])
    model = ScriptedModel([text_turn("two")])
    await run(Agent.resume(path, model, hooks=[table]), "again")
    assert recorded(tmp_path, "startup") == [] and recorded(tmp_path, "resume")[0]["source"] == "resume"
    assert texts(model)[-2:] == ["[SessionStart hook] welcome back", "again"]


async def test_session_start_exit_2_is_shown_to_the_user_and_blocks_nothing(tmp_path: Path) -> None:
    model = ScriptedModel([text_turn("ok")])
    start = script(tmp_path, "start", 'echo "no network: skipped the issue list" >&2\nexit 2\n')
    events = await run(Agent(model, hooks=[hooks(tmp_path, SessionStart=[entry(start)])]), "go")
    assert isinstance(events[-1], Result) and events[-1].subtype == "success"
    assert [n.message for n in notices(events)] == ["no network: skipped the issue list"]


async def test_a_sub_agent_runs_subagent_stop_not_the_main_agents_hooks(tmp_path: Path) -> None:
    model = ScriptedModel([text_turn("child done"), text_turn("child checked and done")])
    flag = tmp_path / "once"
    once = f'if [ ! -e "{flag}" ]; then touch "{flag}"; echo "check your work" >&2; exit 2; fi'
    sub = recorder(tmp_path, "sub", once)
    main_only = [entry(recorder(tmp_path, name)) for name in ("stop", "prompt", "start")]
    table = hooks(
        tmp_path,
        SubagentStop=[entry(sub)],
        Stop=[main_only[0]],
        UserPromptSubmit=[main_only[1]],
        SessionStart=[main_only[2]],
    )
    parent = Agent(model, hooks=[table])
    child = parent.spawn("check the tests", label="checker")
    result = await child.wait()
    assert result.subtype == "success" and result.text == "child checked and done"
    seen = recorded(tmp_path, "sub")
    assert [s["agent"] for s in seen] == ["checker", "checker"] and seen[0]["hook_event_name"] == "SubagentStop"
    assert [s["stop_hook_active"] for s in seen] == [False, True]
    assert all(recorded(tmp_path, name) == [] for name in ("stop", "prompt", "start"))
    await parent.aclose()


async def test_an_interrupt_while_a_stop_hook_runs_stops_it_and_the_run(tmp_path: Path) -> None:
    model = ScriptedModel([text_turn("done"), text_turn("never")])
    started = tmp_path / "started"
    slow = script(tmp_path, "slow", f'touch "{started}"\nsleep 30\necho "run the tests" >&2\nexit 2\n')
    agent = Agent(model, hooks=[hooks(tmp_path, Stop=[entry(slow)])])

    async def interrupt_once_the_hook_runs() -> None:
        while not started.exists():
            await asyncio.sleep(0.01)
        agent.interrupt()

    interrupter = asyncio.create_task(interrupt_once_the_hook_runs())
    events = await run(agent, "go")
    await interrupter
    result = events[-1]
    assert isinstance(result, Result) and result.subtype == "interrupted"
    assert len(model.requests) == 1 and notices(events) == []
