"""Programs on the official TypeScript Claude Agent SDK (`@anthropic-ai/claude-agent-sdk`, installed by
.ci/run into .ci/node) run unchanged with `pathToClaudeCodeExecutable` pointing at sagent, on the
Anthropic, OpenAI and Gemini fakes. Each program in tests/sdk/ts/ asserts on what the SDK yields it; the
tests here assert on what the fake provider received and on what the program reports."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.sse_server import Faulty
from tests.sdk.harness import PROVIDERS, Provider, sent_text

REPO = Path(__file__).resolve().parents[2]
PROGRAMS = Path(__file__).parent / "ts"
NODE_MODULES = REPO / ".ci" / "node" / "node_modules"
PACKAGE = NODE_MODULES / "@anthropic-ai" / "claude-agent-sdk" / "package.json"
NODE = shutil.which("node")


def _missing() -> str | None:
    if NODE is None:
        return "node is not installed"
    if not PACKAGE.exists():
        return (
            "@anthropic-ai/claude-agent-sdk is not installed in .ci/node "
            "(.ci/run installs it; or npm install --prefix .ci/node @anthropic-ai/claude-agent-sdk@0.3.332)"
        )
    return None


pytestmark = pytest.mark.skipif(_missing() is not None, reason=_missing() or "")


def sagent_executable() -> str:
    """The `sagent` console script of the environment running the tests: what a user installs."""
    beside = Path(sys.executable).with_name("sagent")
    found = str(beside) if beside.exists() else shutil.which("sagent")
    assert found, "the sagent console script is not installed in this environment"
    return found


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "VERSION").write_text("4.2.0\n")
    return root.resolve()


def run_program(name: str, provider: Provider, fake: Any, project: Path, tmp_path: Path, **env: str) -> Any:
    """Run tests/sdk/ts/`name` with node, as an application beside its node_modules, and return the JSON
    it prints last. The program is copied next to a link to .ci/node's node_modules, since Node resolves
    `import ... from "@anthropic-ai/claude-agent-sdk"` from the importing file's folder."""
    app = tmp_path / "app"
    if not app.exists():
        app.mkdir()
        (app / "node_modules").symlink_to(NODE_MODULES, target_is_directory=True)
    for program in (name, "report_errors.mjs"):
        shutil.copy(PROGRAMS / program, app / program)
    flags = dict(zip(provider.args[::2], provider.args[1::2], strict=True))
    extra_args = {flag.removeprefix("--"): value for flag, value in flags.items()} | {"base-url": fake.url}
    variables = {
        **os.environ,
        **provider.keys,
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "SAGENT": sagent_executable(),
        "PROJECT": str(project),
        "MODEL": provider.model,
        "SAGENT_ARGS": json.dumps(extra_args),
        **env,
    }
    assert NODE is not None
    command = [NODE, "--import", "./report_errors.mjs", str(app / name)]
    out = subprocess.run(command, cwd=app, env=variables, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, f"{name} failed:\n{out.stderr[-4000:]}\nstdout:\n{out.stdout[-2000:]}"
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("provider", PROVIDERS, ids=str)
def test_a_one_shot_query_runs_a_tool_and_answers(provider: Provider, project: Path, tmp_path: Path) -> None:
    steps = [provider.tools([("Read", {"path": "VERSION"})]), provider.text("Version 4.2.0.")]
    with provider.fake(steps) as fake:
        report = run_program("oneshot.mjs", provider, fake, project, tmp_path)
        bodies = fake.bodies()
    assert report["types"][0] == "system" and report["types"][-1] == "result"
    assert len(bodies) == 2
    assert "Which version is this?" in sent_text(bodies[0]) and "4.2.0" in sent_text(bodies[1])


@pytest.mark.parametrize("provider", PROVIDERS, ids=str)
def test_a_streamed_conversation_answers_each_message_in_turn(
    provider: Provider, project: Path, tmp_path: Path
) -> None:
    steps = [
        provider.tools([("Read", {"path": "VERSION"})]),
        provider.text("Version 4.2.0."),
        provider.text("I read VERSION."),
    ]
    with provider.fake(steps) as fake:
        report = run_program("multiturn.mjs", provider, fake, project, tmp_path, WAIT="result")
        bodies = fake.bodies()
    assert report["results"] == ["Version 4.2.0.", "I read VERSION."]
    assert len(bodies) == 3
    # The follow-up went out in the same conversation: the first exchange is in its request.
    assert "And which file did you read?" in sent_text(bodies[2]) and "Version 4.2.0." in sent_text(bodies[2])
    assert "And which file did you read?" not in sent_text(bodies[:2])


@pytest.mark.parametrize("provider", PROVIDERS, ids=str)
def test_a_streamed_conversation_with_can_use_tool_ends_when_sagent_is_idle(
    provider: Provider, project: Path, tmp_path: Path
) -> None:
    steps = [
        provider.text("Version 4.2.0."),
        provider.tools([("Write", {"path": "ANSWER.txt", "content": "VERSION\n"})]),
        provider.text("I read VERSION."),
    ]
    with provider.fake(steps) as fake:
        report = run_program("multiturn.mjs", provider, fake, project, tmp_path, WAIT="result", ASK="allow")
        bodies = fake.bodies()
    # The SDK kept stdin open for the question in the second turn, and closed it once sagent was idle.
    assert report["results"] == ["Version 4.2.0.", "I read VERSION."] and report["asked"] == ["Write"]
    assert len(bodies) == 3 and (project / "ANSWER.txt").read_text() == "VERSION\n"


@pytest.mark.parametrize("provider", PROVIDERS, ids=str)
def test_messages_written_at_once_are_all_answered_after_stdin_closes(
    provider: Provider, project: Path, tmp_path: Path
) -> None:
    steps = [
        provider.tools([("Read", {"path": "VERSION"})]),
        provider.text("Version 4.2.0."),
        provider.text("I read VERSION."),
    ]
    with provider.fake(steps) as fake:
        report = run_program("multiturn.mjs", provider, fake, project, tmp_path, WAIT="none")
        bodies = fake.bodies()
    # Both messages reached the model, though the SDK closed stdin once it had written them; the last
    # answer is the last result's, whether the follow-up had a turn of its own or joined the first.
    assert "Which version is this?" in sent_text(bodies[0]) and "And which file did you read?" in sent_text(bodies[-1])
    answers = [None, "Version 4.2.0.", "I read VERSION."]
    assert report["results"][-1] == answers[len(bodies) - 1]


@pytest.mark.parametrize("provider", PROVIDERS, ids=str)
def test_can_use_tool_allows_changes_and_denies_calls(provider: Provider, project: Path, tmp_path: Path) -> None:
    steps = [
        provider.tools([("Write", {"path": "draft.txt", "content": "first\n"})]),
        provider.tools([("Write", {"path": "notes.txt", "content": "hello\n"})]),
        provider.tools([("Bash", {"command": "rm VERSION", "dangerouslyDisableSandbox": True})]),
        provider.text("Done."),
    ]
    with provider.fake(steps) as fake:
        report = run_program("permissions.mjs", provider, fake, project, tmp_path)
        bodies = fake.bodies()
    assert report["asked"] == ["Write", "Write", "Bash"]
    assert len(bodies) == 4
    # The model was told why its command was refused, in the program's own words.
    assert "Removing files is not allowed here." in sent_text(bodies[3])
    assert (project / "VERSION").exists() and (project / "draft.txt").read_text() == "reviewed\n"


@pytest.mark.parametrize("provider", PROVIDERS, ids=str)
def test_interrupt_ends_the_streaming_turn_and_the_next_message_is_answered(
    provider: Provider, project: Path, tmp_path: Path
) -> None:
    steps = [Faulty(provider.text("never finished " * 20), delay=0.5), provider.text("Done.")]
    with provider.fake(steps) as fake:
        report = run_program("interrupt.mjs", provider, fake, project, tmp_path)
        bodies = fake.bodies()
    assert report["second"] == "Done."
    assert len(bodies) == 2 and "Never mind. Just say done." in sent_text(bodies[1])


@pytest.mark.parametrize("provider", PROVIDERS, ids=str)
def test_a_tool_from_the_applications_process_is_offered_and_called(
    provider: Provider, project: Path, tmp_path: Path
) -> None:
    steps = [provider.tools([("mcp__calculator__add", {"a": 2, "b": 3})]), provider.text("The sum is 5.")]
    with provider.fake(steps) as fake:
        report = run_program("sdk_mcp.mjs", provider, fake, project, tmp_path)
        bodies = fake.bodies()
    assert report["calls"] == [{"a": 2, "b": 3}]
    assert "mcp__calculator__add" in sent_text(bodies[0]) and "Add two numbers" in sent_text(bodies[0])
    assert "2 + 3 = 5" in sent_text(bodies[1])


def system_text(body: dict[str, Any]) -> str:
    """The system prompt of a request, as each provider's API carries it."""
    if "systemInstruction" in body:  # Gemini
        return "".join(part["text"] for part in body["systemInstruction"]["parts"])
    if "instructions" in body:  # OpenAI Responses
        return str(body["instructions"])
    system = body.get("system", "")  # Anthropic: a string or text blocks
    return system if isinstance(system, str) else "".join(block["text"] for block in system)


@pytest.mark.parametrize("provider", PROVIDERS, ids=str)
def test_the_programs_system_prompt_replaces_sagents(provider: Provider, project: Path, tmp_path: Path) -> None:
    with provider.fake([provider.text("Ahoy.")]) as fake:
        run_program("system_prompt.mjs", provider, fake, project, tmp_path, SYSTEM_PROMPT='"You are a pirate."')
        system = system_text(fake.bodies()[0])
    assert system.startswith("You are a pirate.")
    assert "You are sagent" not in system


@pytest.mark.parametrize("provider", PROVIDERS, ids=str)
def test_the_preset_keeps_sagents_prompt_and_appends_the_programs(
    provider: Provider, project: Path, tmp_path: Path
) -> None:
    preset = {"type": "preset", "preset": "claude_code", "append": "Always answer like a pirate."}
    with provider.fake([provider.text("Ahoy.")]) as fake:
        run_program("system_prompt.mjs", provider, fake, project, tmp_path, SYSTEM_PROMPT=json.dumps(preset))
        system = system_text(fake.bodies()[0])
    assert system.startswith("You are sagent") and "Always answer like a pirate." in system
    assert system.index("Always answer like a pirate.") > system.index("Working directory:")


@pytest.mark.parametrize("provider", PROVIDERS, ids=str)
def test_hook_callbacks_see_the_calls_and_block_one(provider: Provider, project: Path, tmp_path: Path) -> None:
    steps = [
        provider.tools([("Read", {"path": "VERSION"})]),
        provider.tools([("Bash", {"command": "rm VERSION"})]),
        provider.text("I left the files alone."),
    ]
    with provider.fake(steps) as fake:
        report = run_program("hooks.mjs", provider, fake, project, tmp_path)
        bodies = fake.bodies()
    assert report["seen"] == ["PostToolUse Read", "PreToolUse Bash"]
    # The model was told why, in the hook's words.
    assert "This project keeps its files." in sent_text(bodies[2])
    assert (project / "VERSION").exists()


@pytest.mark.parametrize("provider", PROVIDERS, ids=str)
def test_later_queries_resume_continue_and_fork_the_first_ones_session(
    provider: Provider, project: Path, tmp_path: Path
) -> None:
    answers = ["Noted.", "It was teal.", "Cyan, say.", "Forked."]
    with provider.fake([provider.text(a) for a in answers]) as fake:
        report = run_program("resume.mjs", provider, fake, project, tmp_path)
        bodies = fake.bodies()
    assert len(bodies) == 4
    # The resumed query sent the first exchange along with its own question; the continued one and the
    # fork sent every exchange before them.
    assert "Remember the word 'teal'." in sent_text(bodies[1]) and "Noted." in sent_text(bodies[1])
    assert "Which word was it?" in sent_text(bodies[1])
    assert "It was teal." in sent_text(bodies[2]) and "And the colour after it?" in sent_text(bodies[2])
    assert "Cyan, say." in sent_text(bodies[3]) and "Start over from there." in sent_text(bodies[3])
    assert report["forked"] != report["session_id"]


OTHER_MODELS = {"anthropic": "claude-haiku-4-5", "openai": "gpt-5.4-mini", "gemini": "gemini-3.1-flash-lite"}


@pytest.mark.parametrize("provider", PROVIDERS, ids=str)
def test_the_query_controls_read_sagents_offer_and_switch_model_and_mode(
    provider: Provider, project: Path, tmp_path: Path
) -> None:
    other = OTHER_MODELS[provider.name]
    with provider.fake([provider.text("I am the other one.")]) as fake:
        run_program("controls.mjs", provider, fake, project, tmp_path, OTHER_MODEL=other)
        requests = list(fake.requests)
    assert len(requests) == 1
    # The request went to the model the program switched to (in the body, or Gemini's path).
    assert other in json.dumps({"path": requests[0]["path"], "model": requests[0]["body"].get("model")})


@pytest.mark.parametrize("provider", PROVIDERS, ids=str)
def test_a_run_that_reaches_max_turns_ends_with_its_error_result(
    provider: Provider, project: Path, tmp_path: Path
) -> None:
    steps = [provider.tools([("Read", {"path": "VERSION"})]), provider.text("never asked for")]
    with provider.fake(steps) as fake:
        report = run_program("max_turns.mjs", provider, fake, project, tmp_path)
        bodies = fake.bodies()
    # One round of tool calls ran; the request after it was never sent.
    assert report["errors"] and len(bodies) == 1


@pytest.mark.parametrize("provider", PROVIDERS, ids=str)
def test_partial_messages_stream_the_answer_as_it_is_written(provider: Provider, project: Path, tmp_path: Path) -> None:
    poem = "Roses are red,\nthe build is green,\nthe fake server answers\nwhat tests have seen."
    with provider.fake([provider.text(poem)]) as fake:
        report = run_program("partial.mjs", provider, fake, project, tmp_path)
        assert len(fake.bodies()) == 1
    assert report["streamed"] == poem


@pytest.mark.parametrize("provider", PROVIDERS, ids=str)
def test_a_program_with_many_options_runs_as_they_ask(provider: Provider, project: Path, tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    steps = [
        provider.tools([("Glob", {"pattern": "*"})]),
        provider.tools([("Read", {"path": "VERSION"})]),
        provider.text("Version 4.2.0."),
    ]
    with provider.fake(steps) as fake:
        report = run_program(
            "options.mjs",
            provider,
            fake,
            project,
            tmp_path,
            OTHER_MODEL=OTHER_MODELS[provider.name],
            EXTRA_DIR=str(extra),
        )
        bodies = fake.bodies()
    assert len(bodies) == 3 and "Answer in one line." in sent_text(bodies[0])
    assert report["tools"] == ["Read"]
    if provider.name == "anthropic":  # the thinking budget the program gave, as the Messages API takes it
        assert bodies[0]["thinking"] == {"type": "enabled", "budget_tokens": 2048}
        assert [t["name"] for t in bodies[0]["tools"]] == ["Read"]  # the tools the model was offered


@pytest.mark.parametrize("delivery", ["argv", "initialize"])
@pytest.mark.parametrize("provider", PROVIDERS, ids=str)
def test_an_mcp_server_the_program_names_is_started_and_its_tool_called(
    provider: Provider, delivery: str, project: Path, tmp_path: Path
) -> None:
    server = [sys.executable, str(REPO / "tests" / "fakes" / "mcp_server.py"), "basic"]
    steps = [provider.tools([("mcp__helper__echo", {"text": "hello"})]), provider.text("It said hello.")]
    with provider.fake(steps) as fake:
        report = run_program(
            "mcp_servers.mjs", provider, fake, project, tmp_path, MCP_COMMAND=json.dumps(server), MCP_DELIVERY=delivery
        )
        bodies = fake.bodies()
    assert [s["status"] for s in report["servers"]] == ["connected"]
    assert "mcp__helper__echo" in sent_text(bodies[0]) and "hello" in sent_text(bodies[1])
