"""GoogleCLI end to end: the real Gemini CLI (installed by .ci/run into .ci/node) against sagent's fake
Gemini server, with sagent's tools bridged over MCP so sagent's loop runs every tool. The CLI takes a few
seconds to start, so these tests are few and each covers a whole story."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from sagent.agent.agent import Agent
from sagent.events import Event, Result, Retrying, ToolFinished
from sagent.providers.base import AuthenticationError, BadRequestError
from sagent.providers.cli_backends.gemini import GeminiCLIModel
from sagent.tools import builtin_tools
from sagent.types import ModelRequest, UserMessage
from tests.fakes.gemini_server import FakeGemini, GeminiReply, gemini_text, gemini_tools
from tests.providers.processes import group_ends

ROOT = Path(__file__).resolve().parents[2]
LOCAL = ROOT / ".ci" / "node" / "node_modules" / ".bin" / "gemini"
GEMINI = str(LOCAL) if LOCAL.exists() else shutil.which("gemini")
needs_cli = pytest.mark.skipif(
    GEMINI is None, reason="the Gemini CLI is not installed (.ci/run installs it into .ci/node when npm is present)"
)
MODEL = "gemini-2.5-flash"


@pytest.fixture
def cli_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private HOME and GEMINI_CLI_HOME (the CLI keeps its sessions and settings there, never in the
    user's), no key in the environment, and a project folder for sagent's tools."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(home))
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    work = tmp_path / "work"
    work.mkdir()
    return work


def model(fake: FakeGemini) -> GeminiCLIModel:
    assert GEMINI is not None
    return GeminiCLIModel(MODEL, api_key="test", base_url=fake.url, binary=GEMINI)


def tool(name: str) -> str:
    return "mcp_sagent_" + name


def responses(fake: FakeGemini, index: int) -> list[dict[str, Any]]:
    """The functionResponse parts the CLI sent in request `index`."""
    last = fake.requests[index]["body"]["contents"][-1]
    return [p["functionResponse"] for p in last["parts"] if "functionResponse" in p]


def offered(fake: FakeGemini, index: int) -> set[str]:
    body = fake.requests[index]["body"]
    return {f["name"] for t in body.get("tools") or [] for f in t.get("functionDeclarations") or []}


async def run(agent: Agent, prompt: str) -> list[Event]:
    return [e async for e in agent.run(prompt)]


@needs_cli
def test_a_multi_round_tool_task_runs_every_tool_in_sagent_and_a_rule_denies_one(cli_env: Path) -> None:
    from sagent.permissions import PermissionHook, Permissions

    (cli_env / "a.txt").write_text("alpha contents\n")
    (cli_env / "z.txt").write_text("zulu contents\n")
    steps: list[GeminiReply] = [
        gemini_tools([(tool("Read"), {"path": "a.txt"}), (tool("Read"), {"path": "z.txt"})]),  # two at once
        gemini_tools([(tool("Write"), {"path": "b.txt", "content": "beta"})]),
        gemini_tools([(tool("Bash"), {"command": "touch c.txt"})]),
        gemini_text("all done", promptTokenCount=300, candidatesTokenCount=7),
    ]
    with FakeGemini(steps) as fake:

        async def go() -> tuple[list[Event], Path | None]:
            m = model(fake)
            policy = Permissions.build(
                mode="default", allow=["Read", "Write"], deny=["Bash(touch:*)"], cwd=str(cli_env)
            )
            agent = Agent(
                m, tools=builtin_tools(fleet=False), cwd=cli_env, permissions=policy, hooks=[PermissionHook()]
            )
            try:
                return await run(
                    agent, "read a.txt, write b.txt, touch c.txt"
                ), m.workspace.root if m.workspace else None
            finally:
                await agent.aclose()

        events, workspace = asyncio.run(go())
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert [f.result.name for f in finished] == ["Read", "Read", "Write", "Bash"]
    both_reads = finished[0].result.text + finished[1].result.text  # the two parallel reads end in any order
    assert "alpha contents" in both_reads and "zulu contents" in both_reads
    assert (cli_env / "b.txt").read_text() == "beta"
    assert finished[3].result.is_error and not (cli_env / "c.txt").exists()  # denied by the rule, never run
    result = next(e for e in events if isinstance(e, Result))
    assert result.text == "all done" and not result.is_error
    # The CLI handed sagent's results back to the model, the denial included, and offered only sagent's tools.
    assert "alpha contents" in json.dumps(responses(fake, 1)) and "zulu contents" in json.dumps(responses(fake, 1))
    assert "Bash" in json.dumps(responses(fake, 3)) and "error" in json.dumps(responses(fake, 3))
    assert offered(fake, 0) and all(n.startswith("mcp_sagent_") for n in offered(fake, 0))
    assert workspace is not None and not workspace.exists()  # the private workspace went with the agent
    # What the CLI reported is recorded as subscription use... unless a key was given, as here.
    assert result.usage.output_tokens > 0


def test_a_missing_binary_is_a_clear_error(tmp_path: Path) -> None:
    m = GeminiCLIModel("auto", binary=str(tmp_path / "no-such-gemini"))

    async def go() -> None:
        try:
            async for _ in m.stream(ModelRequest("sys", (UserMessage.of("hi"),))):
                pass
        finally:
            await m.aclose()

    with pytest.raises(BadRequestError, match="not installed"):
        asyncio.run(go())


@needs_cli
def test_a_switch_to_the_api_and_back_carries_the_history_and_a_next_prompt_resumes(cli_env: Path) -> None:
    from sagent.providers.google import GoogleModel

    with (
        FakeGemini(
            [gemini_text("first, on the CLI"), gemini_text("second, still the CLI"), gemini_text("fourth, CLI again")]
        ) as cli_fake,
        FakeGemini([gemini_text("third, on the API")]) as api_fake,
    ):

        async def go() -> None:
            cli_model = model(cli_fake)
            agent = Agent(cli_model, tools=builtin_tools(fleet=False), cwd=cli_env)
            try:
                await run(agent, "remember the word PELICAN")
                await run(agent, "and the word HERON")
                agent.switch_model(GoogleModel(MODEL, api_key="test", base_url=api_fake.url))
                await run(agent, "what were the words?")
                agent.switch_model(cli_model)
                await run(agent, "and once more?")
            finally:
                await agent.aclose()

        asyncio.run(go())
    # The second prompt resumed the CLI's own session: its history came from the CLI, not a transcript.
    second = json.dumps(cli_fake.requests[1]["body"]["contents"])
    assert "PELICAN" in second and "HERON" in second and "<transcript>" not in second
    api_sent = json.dumps(api_fake.requests[0]["body"]["contents"])
    assert "PELICAN" in api_sent and "second, still the CLI" in api_sent
    # Switched back in, the CLI starts a session on the whole conversation, the API's answer included.
    replayed = json.dumps(cli_fake.requests[-1]["body"]["contents"])
    assert "PELICAN" in replayed and "third, on the API" in replayed and "once more" in replayed


@needs_cli
def test_a_cli_killed_mid_turn_is_a_connection_error_and_the_retry_replays(cli_env: Path) -> None:
    from tests.fakes.sse_server import Faulty

    slow = Faulty(gemini_text("never finished " * 20), delay=0.5)
    with FakeGemini([slow, gemini_text("recovered")]) as fake:

        async def go() -> tuple[list[Event], int]:
            m = model(fake)
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
def test_a_sub_agent_on_the_cli_under_a_parent_on_the_api(cli_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sagent.providers.google import GoogleModel

    assert GEMINI is not None
    with (
        FakeGemini([gemini_text("the child's answer")]) as cli_fake,
        FakeGemini(
            [
                gemini_tools([("AgentSpawn", {"prompt": "look around", "provider": "GoogleCLI", "model": MODEL})]),
                gemini_text("parent done"),
            ]
        ) as api_fake,
    ):
        monkeypatch.setenv("SAGENT_GEMINI_BIN", GEMINI)
        monkeypatch.setenv("SAGENT_GEMINI_API_KEY", "test")
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", cli_fake.url)

        async def go() -> list[Event]:
            parent = GoogleModel(MODEL, api_key="test", base_url=api_fake.url)
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
    with FakeGemini([gemini_text("unreachable")]) as fake:
        assert GEMINI is not None
        m = GeminiCLIModel(MODEL, base_url=fake.url, binary=GEMINI)  # no key: the CLI's own sign-in, and none here

        async def go() -> None:
            try:
                async for _ in m.stream(ModelRequest("sys", (UserMessage.of("hi"),))):
                    pass
            finally:
                await m.aclose()

        with pytest.raises(AuthenticationError, match="sign in"):
            asyncio.run(go())
        assert fake.requests == []


def test_subscription_use_is_marked_and_never_priced_per_token() -> None:
    from sagent.agent.cost import CostTracker
    from sagent.types import Usage

    on_login = GeminiCLIModel("gemini-3-flash-preview")._finish(["hi"], (), Usage(1000, 100), "end_turn")
    assert on_login.model == "gemini-3-flash-preview (subscription)" and on_login.provider == "google-cli"
    tracker = CostTracker()
    assert not tracker.add(on_login.model, on_login.usage).priced
    on_key = GeminiCLIModel("gemini-3-flash-preview", api_key="k")._finish(["hi"], (), Usage(1000, 100), "end_turn")
    assert CostTracker().add(on_key.model, on_key.usage).priced  # an API key given on purpose is billed


def test_a_prompt_starting_with_a_slash_is_not_a_cli_command() -> None:
    from sagent.providers.cli_backends.gemini_setup import safe_prompt

    assert safe_prompt("/quit now") == "\n/quit now" and safe_prompt("hello /quit") == "hello /quit"


def test_what_the_cli_says_when_it_fails_becomes_the_typed_error() -> None:
    from sagent.providers.base import OverloadedError, RateLimitError, ServerError
    from sagent.providers.cli_backends.gemini_setup import error_from

    signed_out = (
        "\x1b[31mManual authorization is required but the current session is non-interactive. Please run the "
        "Gemini CLI in an interactive terminal to log in, provide a GEMINI_API_KEY\x1b[0m"
    )
    error = error_from(signed_out, 41)
    assert isinstance(error, AuthenticationError) and "\x1b" not in str(error) and "run `gemini`" in str(error)
    assert isinstance(error_from("got status: 429 RESOURCE_EXHAUSTED"), RateLimitError)
    assert isinstance(error_from("[503] the model is overloaded"), OverloadedError)
    assert isinstance(error_from("something odd", 1), ServerError)


@needs_cli
def test_sagent_p_on_a_signed_out_cli_says_so_in_one_line(cli_env: Path, tmp_path: Path) -> None:
    import subprocess
    import sys

    assert GEMINI is not None
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
    env |= {"SAGENT_GEMINI_BIN": GEMINI, "XDG_DATA_HOME": str(tmp_path / "data")}
    argv = [sys.executable, "-m", "sagent.cli.main", "-p", "hi", "--provider", "GoogleCLI", "--cwd", str(cli_env)]
    done = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""  # a sign-in to fix, like a missing key
    lines = [line for line in done.stderr.splitlines() if line.startswith("sagent:")]
    assert len(lines) == 1 and "google-cli authentication" in lines[0] and "run `gemini`" in lines[0], done.stderr
    assert "refused the key in" not in lines[0]  # no key was given: the hint about one would mislead
    assert "Traceback" not in done.stderr
