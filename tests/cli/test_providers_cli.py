"""`sagent` on every provider as a user runs it: a tool round through the CLI against each fake server,
presets and their keys, and `--continue` staying on the session's provider."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.cli.test_headless import records, run_sagent
from tests.fakes import gemini_server as gem
from tests.fakes import openai_chat_server as chat
from tests.fakes import openai_responses_server as resp


def env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data"), **extra}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "VERSION").write_text("4.2.0\n")
    return root


USAGE = {"prompt_tokens": 900, "completion_tokens": 30, "total_tokens": 930}
CASES = [
    (
        "openai",
        resp.FakeResponses,
        lambda: [resp.responses_tools([("Read", {"path": "VERSION"})]), resp.responses_text("Version 4.2.0.")],
        ["--provider", "openai"],
        {"OPENAI_API_KEY": "sk-test"},
        "gpt-5.4",
    ),
    (
        "google",
        gem.FakeGemini,
        lambda: [gem.gemini_tools([("Read", {"path": "VERSION"})]), gem.gemini_text("Version 4.2.0.")],
        ["--model", "gemini-3-flash-preview"],
        {"GEMINI_API_KEY": "g-test"},
        "gemini-3-flash-preview",
    ),
    (
        "moonshot",
        chat.FakeChat,
        lambda: [
            chat.tool_chunks([("Read", '{"path": "VERSION"}')], USAGE),
            chat.text_chunks("Version 4.2.0.", USAGE),
        ],
        ["--provider", "moonshot"],
        {"MOONSHOT_API_KEY": "mk-test"},
        "kimi-k2-thinking",
    ),
]


@pytest.mark.parametrize(("name", "server", "steps", "args", "keys", "model"), CASES, ids=[c[0] for c in CASES])
def test_a_tool_round_through_the_cli(name, server, steps, args, keys, model, project: Path, tmp_path: Path) -> None:
    with server(steps()) as fake:
        out = run_sagent(
            ["-p", "Which version is this?", "--output-format", "json", *args, "--base-url", fake.url],
            env(tmp_path, **keys),
            cwd=project,
        )
        sent = fake.bodies()
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["result"] == "Version 4.2.0." and result["num_turns"] == 2
    assert list(result["modelUsage"]) == [model] and result["total_cost_usd"] > 0
    assert "4.2.0" in json.dumps(sent[1])  # the file the tool read went back to the model
    assert out.stderr == ""  # a named provider is not announced


def test_continue_stays_on_the_provider_the_session_used(project: Path, tmp_path: Path) -> None:
    keys = {"OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-ant-test"}
    with resp.FakeResponses([resp.responses_text("First."), resp.responses_text("Second.")]) as fake:
        first = run_sagent(
            ["-p", "one", "--provider", "openai", "--base-url", fake.url], env(tmp_path, **keys), cwd=project
        )
        # No provider named: ANTHROPIC_API_KEY would pick Anthropic, but the session was on OpenAI.
        second = run_sagent(
            ["-p", "two", "--continue", "--base-url", fake.url, "--output-format", "stream-json"],
            env(tmp_path, **keys),
            cwd=project,
        )
        sent = fake.bodies()
    assert first.returncode == 0 and second.returncode == 0, second.stderr
    assert records(second.stdout)[-1]["result"] == "Second."
    assert [i["content"][0]["text"] for i in sent[1]["input"] if i.get("role") == "user"] == ["one", "two"]


def test_continue_on_a_compatible_endpoint_needs_no_base_url_again(project: Path, tmp_path: Path) -> None:
    server_args = ["--provider", "openai-compat", "--model", "served-model", "--api-key-env", "SERVER_KEY"]
    keyed = env(tmp_path, SERVER_KEY="sk-server-secret-0042")
    with chat.FakeChat([chat.text_chunks("First."), chat.text_chunks("Second.")]) as fake:
        first = run_sagent(["-p", "one", *server_args, "--base-url", fake.url], keyed, cwd=project)
        second = run_sagent(["-p", "two", "--continue", "--api-key-env", "SERVER_KEY"], keyed, cwd=project)
        sent = fake.bodies()
    assert first.returncode == 0 and second.returncode == 0, second.stderr
    assert second.stdout.strip() == "Second."
    assert [m["content"] for m in sent[1]["messages"] if m["role"] == "user"] == ["one", "two"]
    (log,) = (tmp_path / "data").rglob("*.jsonl")
    assert fake.url in log.read_text() and "sk-server-secret-0042" not in log.read_text()


def test_a_preset_without_its_key_says_which_variable_to_set(tmp_path: Path) -> None:
    out = run_sagent(["-p", "hi", "--provider", "dashscope"], env(tmp_path))
    assert out.returncode == 2 and "DASHSCOPE_API_KEY" in out.stderr and out.stdout == ""


def test_providers_and_models_list_what_sagent_knows() -> None:
    providers = run_sagent(["providers"], dict(os.environ))
    assert providers.returncode == 0
    for name in ("anthropic", "openai", "google", "local", "moonshot", "dashscope", "minimax", "openrouter", "ollama"):
        assert any(line.startswith(name + " ") for line in providers.stdout.splitlines()), name
    models = run_sagent(["models", "openai"], dict(os.environ))
    row = next(line for line in models.stdout.splitlines() if line.startswith("gpt-5.4 "))
    assert "2.50" in row and "15.00" in row and "thinking" in row
    assert "claude" not in models.stdout
