"""OpenAISubscription end to end: the real Codex CLI (installed by .ci/run into .ci/node) against sagent's
fake Responses server, with sagent's tools bridged over MCP so sagent's loop runs every tool."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from sagent.agent.agent import Agent
from sagent.events import Event, Result, Retrying, ToolFinished
from sagent.providers.base import AuthenticationError, BadRequestError
from sagent.providers.cli_backends.codex import CodexCLIModel
from sagent.tools import builtin_tools
from sagent.types import ModelRequest, UserMessage
from tests.fakes.openai_responses_server import FakeResponses, responses_text, responses_tools
from tests.fakes.sse_server import Faulty
from tests.providers.processes import group_ends

ROOT = Path(__file__).resolve().parents[2]
LOCAL = ROOT / ".ci" / "node" / "node_modules" / ".bin" / "codex"
CODEX = str(LOCAL) if LOCAL.exists() else shutil.which("codex")
needs_cli = pytest.mark.skipif(
    CODEX is None,
    reason="the Codex CLI is not installed (.ci/run installs it into .ci/node when npm is present)",
)
BRIDGED = "mcp__sagent"
"""The namespace Codex offers the bridge's tools in."""


@pytest.fixture
def cli_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private CODEX_HOME (Codex keeps its config, sessions and sign-in there, never the user's) and no
    key or endpoint from the environment."""
    home = tmp_path / "codex-home"
    home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(home))
    for name in ("OPENAI_API_KEY", "CODEX_API_KEY", "SAGENT_CODEX_API_KEY", "SAGENT_CODEX_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    work = tmp_path / "work"
    work.mkdir()
    return work


def model(fake: FakeResponses, cwd: Path) -> CodexCLIModel:
    assert CODEX is not None
    return CodexCLIModel("gpt-5.4", api_key="test", base_url=fake.url, binary=CODEX, cwd=cwd)


async def run(agent: Agent, prompt: str) -> list[Event]:
    return [e async for e in agent.run(prompt)]


def outputs(fake: FakeResponses, index: int) -> list[dict[str, Any]]:
    """The function_call_output items Codex sent in request `index`."""
    return [i for i in fake.requests[index]["body"]["input"] if i.get("type") == "function_call_output"]


def output_text(item: dict[str, Any]) -> str:
    output = item.get("output")
    if isinstance(output, str):
        return output
    return "".join(part.get("text", "") for part in output or [])


def tool_names(fake: FakeResponses, index: int) -> list[str]:
    """Every tool request `index` offered the model, namespaced ones as `namespace/name`."""
    names = []
    for tool in fake.requests[index]["body"].get("tools", []):
        if tool.get("type") == "namespace":
            names += [f"{tool['name']}/{t['name']}" for t in tool.get("tools", [])]
        else:
            names.append(str(tool.get("name") or tool.get("type")))
    return names


@needs_cli
def test_multi_round_tool_task_runs_the_tools_in_sagent(cli_env: Path) -> None:
    (cli_env / "a.txt").write_text("alpha contents\n")
    steps = [
        responses_tools([("Read", {"path": "a.txt"})], namespace=BRIDGED),
        responses_tools([("Write", {"path": "b.txt", "content": "beta"})], namespace=BRIDGED),
        responses_text("all done", input_tokens=300, cached_tokens=100, output_tokens=7),
    ]
    with FakeResponses(steps) as fake:

        async def go() -> list[Event]:
            agent = Agent(model(fake, cli_env), system="HOUSE RULES", tools=builtin_tools(fleet=False), cwd=cli_env)
            try:
                return await run(agent, "read a.txt then write b.txt")
            finally:
                await agent.aclose()

        events = asyncio.run(go())
        finished = [e for e in events if isinstance(e, ToolFinished)]
        assert [f.result.name for f in finished] == ["Read", "Write"]
        assert "alpha contents" in finished[0].result.text
        assert (cli_env / "b.txt").read_text() == "beta"
        result = next(e for e in events if isinstance(e, Result))
        assert result.text == "all done" and not result.is_error
        # Codex sent sagent's results back to the model, offered only sagent's tools, and sagent's system
        # prompt instead of its own.
        assert "alpha contents" in output_text(outputs(fake, 1)[0])
        names = tool_names(fake, 0)
        assert f"{BRIDGED}/Read" in names and all(n.startswith(BRIDGED) or "mcp_resource" in n for n in names)
        developer = [i for i in fake.requests[0]["body"]["input"] if i.get("role") == "developer"]
        assert "HOUSE RULES" in json.dumps(developer) and "Codex CLI" not in json.dumps(developer)
        # The usage Codex reported for the turn is recorded, as subscription-free API-key use here.
        assert result.usage.output_tokens >= 7 and result.usage.cache_read_tokens >= 100


def test_a_missing_binary_is_a_clear_error(tmp_path: Path) -> None:
    m = CodexCLIModel("default", binary=str(tmp_path / "no-such-codex"))

    async def go() -> None:
        try:
            async for _ in m.stream(ModelRequest("sys", (UserMessage.of("hi"),))):
                pass
        finally:
            await m.aclose()

    with pytest.raises(BadRequestError, match="not installed"):
        asyncio.run(go())


@needs_cli
def test_a_tool_denied_by_a_permission_rule_never_runs_and_codex_hears_why(cli_env: Path) -> None:
    from sagent.permissions import PermissionHook, Permissions

    steps = [
        responses_tools([("Write", {"path": "x.txt", "content": "no"})], namespace=BRIDGED),
        responses_text("understood"),
    ]
    with FakeResponses(steps) as fake:

        async def go() -> list[Event]:
            rules = Permissions.build(deny=["Write(x.txt)"], cwd=cli_env)  # a whole-tool rule would not offer it
            agent = Agent(
                model(fake, cli_env),
                tools=builtin_tools(fleet=False),
                cwd=cli_env,
                permissions=rules,
                hooks=[PermissionHook()],
            )
            try:
                return await run(agent, "write x.txt")
            finally:
                await agent.aclose()

        events = asyncio.run(go())
        assert not (cli_env / "x.txt").exists()
        denied = output_text(outputs(fake, 1)[0])
        assert "denied" in denied.lower() or "not allowed" in denied.lower(), denied
        assert next(e for e in events if isinstance(e, Result)).text == "understood"


@needs_cli
def test_the_next_prompt_resumes_the_same_codex_thread(cli_env: Path) -> None:
    with FakeResponses([responses_text("first"), responses_text("second")]) as fake:

        async def go() -> None:
            agent = Agent(model(fake, cli_env), tools=builtin_tools(fleet=False), cwd=cli_env, effort="low")
            try:
                await run(agent, "remember ZEBRA")
                await run(agent, "and now?")
            finally:
                await agent.aclose()

        asyncio.run(go())
        second = json.dumps(fake.requests[1]["body"]["input"])
        # Resumed, not replayed: Codex's own record of the first turn, then the new prompt as a message.
        assert "remember ZEBRA" in second and "first" in second and "<transcript>" not in second
        thread = fake.requests[0]["body"]["prompt_cache_key"]
        assert fake.requests[1]["body"]["prompt_cache_key"] == thread
        assert fake.requests[0]["body"]["reasoning"]["effort"] == "low"  # sagent's effort reaches Codex


@needs_cli
def test_a_switch_to_the_api_and_back_carries_the_history(cli_env: Path) -> None:
    from sagent.providers.openai_responses import OpenAIModel

    with (
        FakeResponses(
            [
                responses_tools([("Read", {"path": "note.txt"})], namespace=BRIDGED),
                responses_text("first, on codex"),
                responses_text("third, on codex again"),
            ]
        ) as cli_fake,
        FakeResponses([responses_text("second, on the API")]) as api_fake,
    ):
        (cli_env / "note.txt").write_text("the note says OSPREY\n")

        async def go() -> None:
            cli_model = model(cli_fake, cli_env)
            agent = Agent(cli_model, tools=builtin_tools(fleet=False), cwd=cli_env)
            try:
                await run(agent, "remember the word PELICAN")
                agent.switch_model(OpenAIModel("gpt-5.4", api_key="test", base_url=api_fake.url))
                await run(agent, "what was the word?")
                agent.switch_model(cli_model)
                await run(agent, "and once more?")
            finally:
                await agent.aclose()

        asyncio.run(go())
        api_sent = json.dumps(api_fake.requests[0]["body"]["input"])
        assert "PELICAN" in api_sent and "first, on codex" in api_sent and "OSPREY" in api_sent
        calls = [i for i in api_fake.requests[0]["body"]["input"] if i.get("type") == "function_call"]
        assert [c["name"] for c in calls] == ["Read"]  # Codex's MCP call, as sagent's own tool call
        # Switched back in, Codex starts a thread on the whole conversation, the API's answer included.
        replayed = json.dumps(cli_fake.requests[-1]["body"]["input"])
        assert "PELICAN" in replayed and "second, on the API" in replayed and "once more" in replayed
        assert "OSPREY" in replayed


@needs_cli
def test_a_cli_killed_mid_turn_is_a_connection_error_and_the_retry_replays(cli_env: Path) -> None:
    slow = Faulty(responses_text("never finished " * 20), delay=0.5)
    with FakeResponses([slow, responses_text("recovered")]) as fake:

        async def go() -> tuple[list[Event], int]:
            m = model(fake, cli_env)
            agent = Agent(m, tools=builtin_tools(fleet=False), cwd=cli_env)

            async def kill_when_streaming() -> int:
                while not fake.requests:
                    await asyncio.sleep(0.05)
                assert m.cli is not None
                pid = m.cli.process.pid
                os.killpg(pid, 9)
                return pid

            killer = asyncio.create_task(kill_when_streaming())
            try:
                events = await run(agent, "say something long")
            finally:
                await agent.aclose()
            return events, await killer

        events, pid = asyncio.run(go())
        retries = [e for e in events if isinstance(e, Retrying)]
        assert retries and "connection" in retries[0].error
        assert next(e for e in events if isinstance(e, Result)).text == "recovered"
        assert group_ends(pid)  # the killed CLI's group is gone


@needs_cli
def test_a_sub_agent_on_codex_under_a_parent_on_the_api(cli_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sagent.providers.openai_responses import OpenAIModel

    assert CODEX is not None
    with (
        FakeResponses([responses_text("the child's answer")]) as cli_fake,
        FakeResponses(
            [
                responses_tools([("AgentSpawn", {"prompt": "look around", "provider": "OpenAISubscription"})]),
                responses_text("parent done"),
            ]
        ) as api_fake,
    ):
        monkeypatch.setenv("SAGENT_CODEX_BIN", CODEX)
        monkeypatch.setenv("SAGENT_CODEX_API_KEY", "test")
        monkeypatch.setenv("SAGENT_CODEX_BASE_URL", cli_fake.url)

        async def go() -> list[Event]:
            parent = OpenAIModel("gpt-5.4", api_key="test", base_url=api_fake.url)
            agent = Agent(parent, tools=builtin_tools(), cwd=cli_env)
            try:
                return await run(agent, "delegate")
            finally:
                await agent.aclose()

        events = asyncio.run(go())
        spawned = next(e for e in events if isinstance(e, ToolFinished) and e.result.name == "AgentSpawn")
        assert not spawned.result.is_error, spawned.result.text
        assert "the child's answer" in spawned.result.text
        assert len(cli_fake.requests) == 1
        assert next(e for e in events if isinstance(e, Result)).text == "parent done"


@needs_cli
def test_signed_out_is_an_authentication_error_that_says_how_to_sign_in(cli_env: Path) -> None:
    with FakeResponses([responses_text("unreachable")]) as fake:
        # No key given: Codex's own sign-in would pay, and in this private CODEX_HOME there is none.
        m = CodexCLIModel("gpt-5.4", base_url=fake.url, binary=CODEX, cwd=cli_env)

        async def go() -> None:
            try:
                async for _ in m.stream(ModelRequest("sys", (UserMessage.of("hi"),))):
                    pass
            finally:
                await m.aclose()

        with pytest.raises(AuthenticationError, match="codex login"):
            asyncio.run(go())
        assert fake.requests == []


def test_subscription_use_is_marked_and_never_priced_per_token() -> None:
    from sagent.agent.cost import CostTracker
    from sagent.types import Usage

    on_login = CodexCLIModel("gpt-5.4")._message([], ["hi"], (), Usage(1000, 100))
    assert on_login.model == "gpt-5.4 (subscription)" and on_login.provider == "openai-subscription"
    tracker = CostTracker()
    assert not tracker.add(on_login.model, on_login.usage).priced
    on_key = CodexCLIModel("gpt-5.4", api_key="k")._message([], ["hi"], (), Usage(1000, 100))
    assert CostTracker().add(on_key.model, on_key.usage).priced  # an API key given on purpose is billed


@needs_cli
def test_the_subscription_token_limit_stops_the_next_turn(cli_env: Path) -> None:
    with FakeResponses([responses_text("first", input_tokens=90, output_tokens=30)]) as fake:
        # No key given to sagent: Codex's own sign-in pays (here one made with `codex login --with-api-key`
        # in the private CODEX_HOME), so the use is subscription use.
        assert CODEX is not None
        subprocess.run([CODEX, "login", "--with-api-key"], input="test", text=True, capture_output=True, check=True)
        m = CodexCLIModel("gpt-5.4", base_url=fake.url, binary=CODEX, cwd=cli_env)

        async def go() -> tuple[Result, Result]:
            agent = Agent(m, tools=builtin_tools(fleet=False), cwd=cli_env, max_subscription_tokens=100)
            try:
                first = (await run(agent, "one"))[-1]
                second = (await run(agent, "two"))[-1]
            finally:
                await agent.aclose()
            assert isinstance(first, Result) and isinstance(second, Result)
            return first, second

        first, second = asyncio.run(go())
        assert first.text == "first"
        assert second.subtype == "error_max_budget_usd" and "max_subscription_tokens" in second.text
        assert len(fake.requests) == 1


@needs_cli
def test_a_rate_limit_from_the_endpoint_is_a_typed_error_and_retried(cli_env: Path) -> None:
    from tests.fakes.openai_responses_server import Fault

    steps = [Fault(429, "Rate limit reached", "rate_limit_exceeded"), responses_text("after the wait")]
    with FakeResponses(steps) as fake:

        async def go() -> list[Event]:
            agent = Agent(model(fake, cli_env), tools=builtin_tools(fleet=False), cwd=cli_env)
            try:
                return await run(agent, "hello")
            finally:
                await agent.aclose()

        events = asyncio.run(go())
        retries = [e for e in events if isinstance(e, Retrying)]
        assert retries and "rate" in retries[0].error, [getattr(e, "error", "") for e in retries]
        assert next(e for e in events if isinstance(e, Result)).text == "after the wait"


@needs_cli
def test_parallel_tool_calls_in_one_response_each_get_their_own_result(cli_env: Path) -> None:
    (cli_env / "a.txt").write_text("alpha\n")
    (cli_env / "b.txt").write_text("beta\n")
    steps = [
        responses_tools([("Read", {"path": "a.txt"}), ("Read", {"path": "b.txt"})], namespace=BRIDGED),
        responses_text("both read"),
    ]
    with FakeResponses(steps) as fake:

        async def go() -> list[Event]:
            agent = Agent(model(fake, cli_env), tools=builtin_tools(fleet=False), cwd=cli_env)
            try:
                return await run(agent, "read both")
            finally:
                await agent.aclose()

        events = asyncio.run(go())
        assert len([e for e in events if isinstance(e, ToolFinished)]) == 2
        sent = [output_text(o) for o in outputs(fake, 1)]  # each call's own result, in either order
        assert len(sent) == 2 and sorted("alpha" in text for text in sent) == [False, True]
        assert sorted("beta" in text for text in sent) == [False, True]
        assert next(e for e in events if isinstance(e, Result)).text == "both read"


@needs_cli
def test_sagent_p_on_a_signed_out_codex_says_how_to_sign_in_in_one_line(cli_env: Path) -> None:
    import sys

    assert CODEX is not None
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")} | {"SAGENT_CODEX_BIN": CODEX}
    env["XDG_DATA_HOME"] = str(cli_env / "data")
    argv = [sys.executable, "-m", "sagent.cli.main", "-p", "hi", "--provider", "OpenAISubscription"]
    out = subprocess.run([*argv, "--cwd", str(cli_env)], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and out.stdout == ""
    errors = [line for line in out.stderr.splitlines() if line.startswith("sagent:")]
    assert len(errors) == 1 and "codex login" in errors[0] and "refused the key" not in errors[0], out.stderr
    assert "Traceback" not in out.stderr


@needs_cli
def test_a_codex_gone_silent_mid_turn_is_ended_and_the_retry_starts_afresh(cli_env: Path) -> None:
    (cli_env / "a.txt").write_text("alpha\n")
    steps = [
        responses_tools([("Read", {"path": "a.txt"})], namespace=BRIDGED),
        Faulty(responses_text("too late"), pause=(0, 60.0)),  # the model's next answer never comes
        responses_text("recovered"),
    ]
    with FakeResponses(steps) as fake:

        async def go() -> tuple[list[Event], list[int]]:
            assert CODEX is not None
            m = CodexCLIModel("gpt-5.4", api_key="test", base_url=fake.url, binary=CODEX, cwd=cli_env, idle_timeout=8)
            agent = Agent(m, tools=builtin_tools(fleet=False), cwd=cli_env)
            events: list[Event] = []
            pids: list[int] = []
            try:
                async for event in agent.run("read a.txt"):
                    events.append(event)
                    if m.cli is not None and m.cli.process.pid not in pids:
                        pids.append(m.cli.process.pid)
            finally:
                await agent.aclose()
            return events, pids

        events, pids = asyncio.run(go())
        retries = [e for e in events if isinstance(e, Retrying)]
        assert retries and "printed nothing" in retries[0].error, [e.error for e in retries]
        assert next(e for e in events if isinstance(e, Result)).text == "recovered"
        assert len(pids) == 2  # the silent Codex, then the one the retry started
        for pid in pids:
            assert group_ends(pid)  # each is gone, with everything it started
