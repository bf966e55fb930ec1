"""A lone surrogate from a provider (a tool call's arguments, its text) no longer breaks the session: it is
replaced by U+FFFD where provider output enters sagent, so every later request can be encoded, on every
provider; and a session log that already holds one continues with `sagent -c`."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from sagent.agent.session import SessionLog
from sagent.events import MessageAdded, ToolFinished, TurnFinished
from sagent.types import AssistantMessage, TextPart, ToolCall, ToolResult, Usage, UserMessage
from tests.cli.test_headless import records, run_sagent
from tests.fakes import gemini_server as gem
from tests.fakes import openai_chat_server as chat
from tests.fakes import openai_responses_server as resp
from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response

LONE = "\ud800"
USAGE = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
# Lone surrogates in the forms a provider's JSON can carry them: high, low, a low one before a high one.
ARGS = {"path": f"notes{LONE}x\udc00y\udbff.txt"}

PROVIDERS: list[tuple[str, list[str], Any, Any, dict[str, str]]] = [
    (
        "anthropic",
        ["--provider", "anthropic", "--model", "claude-sonnet-4-6"],
        FakeAnthropic,
        lambda: [tool_use_response([("Read", ARGS)], text=f"look{LONE}"), text_response(f"done{LONE}")],
        {"ANTHROPIC_API_KEY": "k"},
    ),
    (
        "openai",
        ["--provider", "openai"],
        resp.FakeResponses,
        lambda: [resp.responses_tools([("Read", ARGS)]), resp.responses_text(f"done{LONE}")],
        {"OPENAI_API_KEY": "k"},
    ),
    (
        "google",
        ["--provider", "google"],
        gem.FakeGemini,
        lambda: [gem.gemini_tools([("Read", ARGS)], text=f"look{LONE}"), gem.gemini_text(f"done{LONE}")],
        {"GEMINI_API_KEY": "k"},
    ),
    (
        "chat-completions",
        ["--provider", "moonshot"],
        chat.FakeChat,
        lambda: [chat.tool_chunks([("Read", json.dumps(ARGS))], USAGE), chat.text_chunks(f"done{LONE}", USAGE)],
        {"MOONSHOT_API_KEY": "k"},
    ),
]


def env(tmp_path: Path, **keys: str) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return {**clean, "XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "config"), **keys}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


@pytest.mark.parametrize("output", ["json", "text", "stream-json"])
@pytest.mark.parametrize(("name", "flags", "server", "steps", "keys"), PROVIDERS, ids=[p[0] for p in PROVIDERS])
def test_a_lone_surrogate_from_the_provider_does_not_break_the_next_request(
    name: str,
    flags: list[str],
    server: Any,
    steps: Any,
    keys: dict[str, str],
    output: str,
    project: Path,
    tmp_path: Path,
) -> None:
    with server(steps()) as fake:
        out = run_sagent(
            [
                "-p",
                "read it",
                "--no-memory",
                "--tools",
                "Read",
                "--output-format",
                output,
                *flags,
                "--base-url",
                fake.url,
            ],
            env(tmp_path, **keys),
            cwd=project,
        )
        bodies = fake.bodies()
    assert out.returncode == 0, out.stderr
    assert len(bodies) == 2  # the tool round's results went back: the second request was encodable
    second = json.dumps(bodies[1], ensure_ascii=False)
    assert "\ufffd" in second and "notes\ufffdx\ufffdy\ufffd.txt" in second
    assert "\\ud800" not in json.dumps(bodies[1]) and "malformed" not in out.stderr
    if output == "json":
        assert records(out.stdout)[0]["result"] == "done\ufffd"


def test_a_session_whose_log_already_holds_lone_surrogates_continues(
    project: Path, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    log = SessionLog.create(project, {"provider": "anthropic", "model": "claude-sonnet-4-6"})
    call = ToolCall("toolu_01", "Bash", {"command": f"echo {LONE}"})
    log.record(MessageAdded(UserMessage.of(f"say {LONE}")))
    answer = AssistantMessage(
        (TextPart(f"running{LONE}"), call), "anthropic", "claude-sonnet-4-6", Usage(10, 5), stop_reason="tool_use"
    )
    log.record(TurnFinished(answer, Usage(10, 5), cost_of_nothing(), 0.0, 1.0))
    log.record(ToolFinished(ToolResult.of(call, f"out: {LONE}!\udfff"), 1.0))
    log.close()
    assert "\\ud800" in log.path.read_text()  # the log holds them, as an older sagent wrote it

    with FakeAnthropic([text_response("continued")]) as fake:
        out = run_sagent(
            ["-p", "go on", "-c", "--no-memory", "--output-format", "json", "--base-url", fake.url],
            env(tmp_path, ANTHROPIC_API_KEY="k"),
            cwd=project,
        )
        bodies = fake.bodies()
    assert out.returncode == 0, out.stderr
    assert records(out.stdout)[0]["result"] == "continued"
    sent = json.dumps(bodies[0], ensure_ascii=False)
    assert "echo \ufffd" in sent and "out: \ufffd!\ufffd" in sent and "go on" in sent


def cost_of_nothing():  # type: ignore[no-untyped-def]
    from sagent.types import Cost

    return Cost()
