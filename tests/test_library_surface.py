"""The library surface users of sagent expect: `from sagent.agent import Agent`, `sagent.tools` by tool name,
`agent.run(...)` awaited or iterated with a prompt or a JSON directive, `json_freeze`; and the command's
other spellings: `python -m sagent`, `--max-response-tokens`, `--max-tool-call-rounds`, `--effort none`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sagent import ScriptedModel, tools
from sagent.agent import Agent, AgentError, Reply, RunHandle
from sagent.events import MessageAdded, Result, TextDelta, TurnFinished
from sagent.lib.json import FrozenMap, json_freeze, json_thaw
from sagent.providers.scripted import text_turn, tool_turn
from sagent.tools import BUILTIN
from sagent.types import UserMessage
from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response
from tests.fakes.openai_responses_server import FakeResponses, responses_text

ROOT = Path(__file__).parent.parent
SERVER_SAMPLE = "<!-- runs against the fake Anthropic server in tests/test_library_surface.py -->\n"


# ------------------------------------------------------------------------------------------ the handle


async def test_a_run_awaited_gives_the_final_message_and_its_text() -> None:
    model = ScriptedModel([tool_turn(("Glob", {"pattern": "*.toml"})), text_turn("One: pyproject.toml.")])
    agent = Agent(model, tools=[tools.Glob()], cwd=ROOT)
    handle = agent.run("Which TOML files are here?")
    assert isinstance(handle, RunHandle)
    reply = await handle
    assert isinstance(reply, Reply)
    assert reply.content == reply.text == str(reply) == "One: pyproject.toml."
    assert reply.message.text == "One: pyproject.toml." and reply.message.tool_calls == ()
    assert reply.result.subtype == "success" and reply.result.num_turns == 2
    assert handle.result == reply.result
    # The Glob really ran: its result went back to the model.
    assert "pyproject.toml" in model.requests[1].messages[-1].text
    await agent.aclose()


async def test_a_run_iterated_yields_every_event_as_before() -> None:
    agent = Agent(ScriptedModel([text_turn("hello there")]))
    events = [event async for event in agent.run("hi")]
    assert [type(e) for e in events if not isinstance(e, TextDelta)][-3:] == [MessageAdded, TurnFinished, Result]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "hello there"
    await agent.aclose()


async def test_a_handle_iterated_part_way_and_then_awaited_drains_the_rest() -> None:
    agent = Agent(ScriptedModel([text_turn("done")]))
    handle = agent.run("go")
    first = await handle.__anext__()
    assert type(first).__name__ == "SessionStarted"
    reply = await handle
    assert reply.content == "done"
    assert (await handle).content == "done"  # awaiting again gives the same answer, running nothing more
    await agent.aclose()


async def test_a_failed_run_awaited_raises_agent_error_like_ask() -> None:
    model = ScriptedModel([tool_turn(("Glob", {"pattern": "*"})), text_turn("never sent")])
    agent = Agent(model, tools=[tools.Glob()], max_tool_rounds=1, cwd=ROOT)
    with pytest.raises(AgentError) as raised:
        await agent.run("list everything")
    assert raised.value.result.subtype == "error_max_turns"
    assert len(model.requests) == 1
    await agent.aclose()


async def test_nothing_runs_until_the_handle_is_used_and_it_can_be_closed() -> None:
    model = ScriptedModel([text_turn("a"), text_turn("b")])
    agent = Agent(model)
    handle = agent.run("first")
    assert model.requests == [] and not agent.running
    await handle.__anext__()
    with pytest.raises(RuntimeError, match="already running"):
        await agent.run("second")
    await handle.aclose()
    assert not agent.running
    with pytest.raises(RuntimeError, match="closed before it ended"):
        await handle


# ------------------------------------------------------------------------------------------ directives


@pytest.mark.parametrize(
    "prompt",
    [
        {"prompt": "What is 2+2?"},
        '{"prompt": "What is 2+2?"}',
        '  {"prompt": "What is 2+2?"}\n',
        UserMessage.of("What is 2+2?"),
        "What is 2+2?",
    ],
    ids=["dict", "json-string", "json-string-spaced", "user-message", "text"],
)
async def test_every_prompt_form_sends_the_same_message(prompt: object) -> None:
    model = ScriptedModel([text_turn("4")])
    agent = Agent(model)
    reply = await agent.run(prompt)  # type: ignore[arg-type]
    assert reply.content == "4"
    assert model.requests[0].messages == (UserMessage.of("What is 2+2?"),)
    await agent.aclose()


async def test_a_directive_is_kept_frozen_on_the_handle() -> None:
    directive = {"prompt": "say hi"}
    agent = Agent(ScriptedModel([text_turn("hi")]))
    handle = agent.run(directive)
    directive["prompt"] = "changed afterwards"
    assert isinstance(handle.directive, FrozenMap) and handle.directive == {"prompt": "say hi"}
    with pytest.raises(TypeError):
        handle.directive["prompt"] = "x"  # type: ignore[index]
    await handle
    assert agent.run("plain text").directive is None
    await agent.aclose()


@pytest.mark.parametrize(
    "text",
    ['{"task": "not a directive"}', "[1, 2]", "{not json", '"a string"', "{}"],
)
async def test_text_that_is_not_a_directive_is_sent_as_it_is(text: str) -> None:
    model = ScriptedModel([text_turn("ok")])
    agent = Agent(model)
    await agent.run(text)
    assert model.requests[0].messages == (UserMessage.of(text),)
    await agent.aclose()


@pytest.mark.parametrize(
    ("prompt", "message"),
    [
        ({"prompt": "x", "model": "opus"}, "unknown key.*'model'.*only 'prompt'"),
        ('{"prompt": "x", "effort": "high"}', "unknown key.*'effort'"),
        ({"prompt": 3}, "'prompt' must be a string"),
        ({"promt": "typo"}, "unknown key.*'promt'"),
    ],
)
async def test_a_bad_directive_is_refused_when_run_is_called(prompt: object, message: str) -> None:
    model = ScriptedModel([text_turn("never")])
    agent = Agent(model)
    with pytest.raises(ValueError, match=message):
        agent.run(prompt)  # type: ignore[arg-type]
    assert model.requests == []
    await agent.aclose()


async def test_ask_takes_a_directive_too() -> None:
    agent = Agent(ScriptedModel([text_turn("yes")]))
    message = await agent.ask({"prompt": "ready?"})
    assert message.text == "yes"
    await agent.aclose()


# ------------------------------------------------------------------------------------------ json_freeze


def test_json_freeze_freezes_all_the_way_down_and_copies() -> None:
    value = {"prompt": "p", "tags": ["a", {"deep": [1, 2.5, None, True]}], "n": 3}
    frozen = json_freeze(value)
    assert isinstance(frozen, FrozenMap)
    assert frozen["tags"] == ("a", FrozenMap({"deep": (1, 2.5, None, True)}))
    assert frozen == {"prompt": "p", "tags": ("a", {"deep": (1, 2.5, None, True)}), "n": 3}
    value["tags"][1]["deep"].append(99)  # type: ignore[index, union-attr]
    value["prompt"] = "changed"
    assert frozen["prompt"] == "p" and frozen["tags"][1]["deep"] == (1, 2.5, None, True)  # type: ignore[index]
    assert hash(frozen) == hash(json_freeze(json.loads(json.dumps(json_thaw(frozen)))))
    assert json_thaw(frozen) == {"prompt": "p", "tags": ["a", {"deep": [1, 2.5, None, True]}], "n": 3}
    assert json_freeze(frozen) == frozen  # freezing a frozen value is harmless
    for scalar in ("s", 1, 1.5, True, None):
        assert json_freeze(scalar) == scalar
    with pytest.raises(TypeError):
        frozen["n"] = 4  # type: ignore[index]


@pytest.mark.parametrize(
    ("value", "where"),
    [({"a": {1, 2}}, r"set at \$\.a"), ({"a": [b"x"]}, r"bytes at \$\.a\[0\]"), ({1: "x"}, "not a string")],
)
def test_json_freeze_refuses_what_json_cannot_hold(value: object, where: str) -> None:
    with pytest.raises(TypeError, match=where):
        json_freeze(value)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------ sagent.tools


def test_every_builtin_tool_is_a_class_of_sagent_tools_under_its_name() -> None:
    for cls in BUILTIN:
        made = getattr(tools, cls.name)()
        assert type(made) is cls and made.name == cls.name
        assert cls.name in tools.__all__
    assert [t.name for t in [tools.Read(), tools.Glob(), tools.Bash()]] == ["Read", "Glob", "Bash"]


def test_paper_tools_built_one_by_one_share_a_scholar_like_builtin_tools(monkeypatch: pytest.MonkeyPatch) -> None:
    search, fetch = tools.PaperSearch(), tools.PaperFetch()
    assert search.scholar is fetch.scholar
    made = {t.name: t for t in tools.builtin_tools()}
    assert made["PaperSearch"].scholar is made["PaperFetch"].scholar  # type: ignore[attr-defined]
    # A changed environment is obeyed: a mirror set now is the one used by tools made now.
    monkeypatch.setenv("SAGENT_ARXIV_URL", "http://127.0.0.1:9/arxiv")
    later = tools.PaperDetails()
    assert later.scholar is not search.scholar and later.scholar.arxiv_url == "http://127.0.0.1:9/arxiv"
    assert search.scholar.arxiv_url != "http://127.0.0.1:9/arxiv"


# ------------------------------------------------------------------------------------------ the docs sample


def _minimal_sample() -> str:
    text = (ROOT / "docs" / "library.md").read_text()
    assert text.count(SERVER_SAMPLE) == 1
    after = text.split(SERVER_SAMPLE, 1)[1]
    assert after.startswith("```python\n")
    return after.removeprefix("```python\n").split("\n```\n", 1)[0] + "\n"


def test_the_minimal_agent_sample_in_the_docs_runs_verbatim_against_the_fake_server(tmp_path: Path) -> None:
    sample = tmp_path / "minimal.py"
    sample.write_text(_minimal_sample())
    steps = [
        tool_use_response([("Glob", {"pattern": "sagent/*.py"})]),
        text_response("sagent is a coding agent for the terminal and a Python library."),
    ]
    with FakeAnthropic(steps) as fake:
        env = {
            **os.environ,
            "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests-0001",
            "ANTHROPIC_BASE_URL": fake.url,
            "XDG_DATA_HOME": str(tmp_path / "data"),
        }
        done = subprocess.run(
            [sys.executable, str(sample)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
        )
        bodies = fake.bodies()
    assert done.returncode == 0, done.stderr
    assert done.stdout == "sagent is a coding agent for the terminal and a Python library.\n"
    assert done.stderr == ""
    first = bodies[0]
    assert first["model"] == "claude-sonnet-4-6"
    assert first["messages"][0]["content"][0]["text"].startswith("What does this repository do?")
    assert sorted(t["name"] for t in first["tools"]) == ["Glob", "Grep", "Read"]
    # The Glob ran in the repository, and its result went back in the second request.
    tool_result = bodies[1]["messages"][-1]["content"][0]
    assert tool_result["type"] == "tool_result" and "sagent/__main__.py" in json.dumps(tool_result)


# ------------------------------------------------------------------------------------------ the command


def _sagent(args: list[str], env: dict[str, str], *, module: str = "sagent") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def _env(fake: FakeAnthropic, tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests-0001",
        "ANTHROPIC_BASE_URL": fake.url,
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }


def test_python_m_sagent_prints_the_version_as_the_command_does() -> None:
    done = _sagent(["--version"], dict(os.environ))
    entry = _sagent(["--version"], dict(os.environ), module="sagent.cli.main")
    assert done.returncode == 0 and done.stdout == entry.stdout
    assert done.stdout.startswith("sagent ") and done.stdout.strip() == f"sagent {__import__('sagent').__version__}"


def test_python_m_sagent_runs_a_task_with_the_commands_output_and_exit_codes(tmp_path: Path) -> None:
    with FakeAnthropic([text_response("Hello from the fake.")]) as fake:
        done = _sagent(["-p", "say hello", "--output-format", "json"], _env(fake, tmp_path))
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["result"] == "Hello from the fake." and record["subtype"] == "success"
    # A usage error exits 2, as `sagent` does.
    bad = _sagent(["--max-tool-rounds", "0", "-p", "x"], dict(os.environ))
    assert bad.returncode == 2 and "--max-tool-rounds must be at least 1" in bad.stderr
    # Stopped at the tool-round limit: exit 3, as `sagent` does.
    with FakeAnthropic([tool_use_response([("Glob", {"pattern": "*"})])]) as fake:
        stopped = _sagent(["-p", "look", "--max-tool-rounds", "1", "--cwd", str(tmp_path)], _env(fake, tmp_path))
    assert stopped.returncode == 3, stopped.stderr


def test_the_flag_aliases_set_the_same_limits(tmp_path: Path) -> None:
    with FakeAnthropic([tool_use_response([("Glob", {"pattern": "*"})]), text_response("unreached")]) as fake:
        done = _sagent(
            ["-p", "look", "--max-response-tokens", "321", "--max-tool-call-rounds", "1", "--cwd", str(tmp_path)],
            _env(fake, tmp_path),
        )
        bodies = fake.bodies()
    assert done.returncode == 3, done.stderr  # stopped by --max-tool-call-rounds 1
    assert len(bodies) == 1 and bodies[0]["max_tokens"] == 321
    bad = _sagent(["--max-tool-call-rounds", "0", "-p", "x"], dict(os.environ))
    assert bad.returncode == 2 and "at least 1" in bad.stderr


@pytest.mark.parametrize(("effort", "sent"), [("none", None), ("low", "low")])
def test_effort_none_is_accepted_and_sends_no_effort(effort: str, sent: str | None, tmp_path: Path) -> None:
    env = {**os.environ, "OPENAI_API_KEY": "sk-test", "XDG_DATA_HOME": str(tmp_path / "data")}
    with FakeResponses([responses_text("fine")]) as fake:
        done = _sagent(["-p", "hi", "--provider", "openai", "--base-url", fake.url, "--effort", effort], env)
        body = fake.bodies()[0]
    assert done.returncode == 0, done.stderr
    assert done.stdout == "fine\n"
    assert body.get("reasoning", {}).get("effort") == sent


def test_effort_accepts_only_its_choices() -> None:
    bad = _sagent(["--effort", "off", "-p", "x"], dict(os.environ))
    assert bad.returncode == 2 and "invalid choice" in bad.stderr and "none" in bad.stderr
