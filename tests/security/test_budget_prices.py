"""A budget counts only what it can price: a model without a price is refused under `--max-budget-usd`
before any request (exit 2, one line naming the model and `modelPrices`), on every provider; `modelPrices`
in the user's settings prices a model, over the catalog too; local and subscription models are not refused."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from sagent.agent.agent import Agent
from sagent.events import ToolFinished
from sagent.providers.catalog import lookup
from sagent.providers.llamacpp import LlamaCppModel
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.tools import AgentSpawn
from tests.cli.test_headless import records, run_sagent
from tests.fakes import gemini_server as gem
from tests.fakes import openai_chat_server as chat
from tests.fakes import openai_responses_server as resp
from tests.fakes.anthropic_server import FakeAnthropic, text_response

USAGE = {"prompt_tokens": 1_000_000, "completion_tokens": 0, "total_tokens": 1_000_000}

# provider flags, a fake server, one answer, the key variable: one row per wire API and preset.
PROVIDERS: list[tuple[str, list[str], Any, Any, dict[str, str]]] = [
    (
        "anthropic",
        ["--provider", "anthropic"],
        FakeAnthropic,
        lambda: [text_response("hi")],
        {"ANTHROPIC_API_KEY": "k"},
    ),
    (
        "openai",
        ["--provider", "openai"],
        resp.FakeResponses,
        lambda: [resp.responses_text("hi")],
        {"OPENAI_API_KEY": "k"},
    ),
    ("google", ["--provider", "google"], gem.FakeGemini, lambda: [gem.gemini_text("hi")], {"GEMINI_API_KEY": "k"}),
    (
        "moonshot",
        ["--provider", "moonshot"],
        chat.FakeChat,
        lambda: [chat.text_chunks("hi", USAGE)],
        {"MOONSHOT_API_KEY": "k"},
    ),
    (
        "dashscope",
        ["--provider", "dashscope"],
        chat.FakeChat,
        lambda: [chat.text_chunks("hi", USAGE)],
        {"DASHSCOPE_API_KEY": "k"},
    ),
    (
        "minimax",
        ["--provider", "minimax"],
        chat.FakeChat,
        lambda: [chat.text_chunks("hi", USAGE)],
        {"MINIMAX_API_KEY": "k"},
    ),
    (
        "openrouter",
        ["--provider", "openrouter"],
        chat.FakeChat,
        lambda: [chat.text_chunks("hi", USAGE)],
        {"OPENROUTER_API_KEY": "k"},
    ),
    ("openai-compat", ["--provider", "openai-compat"], chat.FakeChat, lambda: [chat.text_chunks("hi", USAGE)], {}),
    ("ollama", ["--provider", "ollama"], chat.FakeChat, lambda: [chat.text_chunks("hi", USAGE)], {}),
]
# Model ids no catalog prices, in the forms users write them.
UNPRICED = ["my-finetune-v3", "qwen3.6-plus", "claude-sonnet-9", "gpt-5.5-turbo-preview", "org/model:free"]


def user_env(tmp_path: Path, settings: dict[str, Any] | None = None, **keys: str) -> dict[str, str]:
    config = tmp_path / "config"
    (config / "sagent").mkdir(parents=True, exist_ok=True)
    if settings is not None:
        (config / "sagent" / "settings.json").write_text(json.dumps(settings))
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return {
        **env,
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(config),
        "HOME": str(tmp_path),
        **keys,
    }


def run(tmp_path: Path, fake: Any, flags: list[str], env: dict[str, str]) -> Any:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    args = ["-p", "hi", "--no-memory", "--tools", "none", "--output-format", "json", *flags, "--base-url", fake.url]
    return run_sagent(args, env, cwd=project)


@pytest.mark.parametrize(("name", "flags", "server", "steps", "keys"), PROVIDERS, ids=[p[0] for p in PROVIDERS])
def test_an_unpriced_model_under_a_budget_is_refused_before_any_request(
    name: str, flags: list[str], server: Any, steps: Any, keys: dict[str, str], tmp_path: Path
) -> None:
    model = UNPRICED[len(name) % len(UNPRICED)]
    with server(steps()) as fake:
        out = run(tmp_path, fake, [*flags, "--model", model, "--max-budget-usd", "1"], user_env(tmp_path, **keys))
        sent = len(fake.requests)
    assert out.returncode == 2, out.stderr
    assert sent == 0
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and model in lines[0] and '"modelPrices"' in lines[0], out.stderr
    assert '"input"' in lines[0] and '"cacheWrite"' in lines[0]
    assert not list((tmp_path / "data").rglob("*.jsonl"))  # no session was started for it


@pytest.mark.parametrize("model", UNPRICED)
def test_every_form_of_unpriced_id_is_refused(model: str, tmp_path: Path) -> None:
    with chat.FakeChat([chat.text_chunks("hi", USAGE)]) as fake:
        out = run(
            tmp_path,
            fake,
            ["--provider", "openai-compat", "--model", model, "--max-budget-usd", "5"],
            user_env(tmp_path),
        )
        assert fake.requests == []
    assert out.returncode == 2 and model in out.stderr and "modelPrices" in out.stderr


def test_model_prices_in_the_user_settings_price_a_model_and_the_budget_counts_it(tmp_path: Path) -> None:
    settings = {"modelPrices": {"my-finetune-v3": {"input": 2, "output": 8, "cacheRead": 0.5, "cacheWrite": 2}}}
    with chat.FakeChat([chat.text_chunks("hi", USAGE)]) as fake:
        out = run(
            tmp_path,
            fake,
            ["--provider", "openai-compat", "--model", "my-finetune-v3", "--max-budget-usd", "5"],
            user_env(tmp_path, settings),
        )
    assert out.returncode == 0, out.stderr
    (result,) = records(out.stdout)
    assert result["total_cost_usd"] == 2.0  # a million input tokens at $2
    assert result["modelUsage"]["my-finetune-v3"]["priced"] is True


def test_model_prices_win_over_the_catalog(tmp_path: Path) -> None:
    settings = {"modelPrices": {"kimi-k2-thinking": {"input": 10, "output": 10}}}
    with chat.FakeChat([chat.text_chunks("hi", USAGE)]) as fake:
        out = run(
            tmp_path,
            fake,
            ["--provider", "moonshot", "--max-budget-usd", "50"],
            user_env(tmp_path, settings, MOONSHOT_API_KEY="k"),
        )
    assert out.returncode == 0, out.stderr
    assert records(out.stdout)[0]["total_cost_usd"] == 10.0


@pytest.mark.parametrize(
    "price",
    [
        {"output": 1},
        {"input": -1, "output": 1},
        {"input": "cheap", "output": 1},
        {"input": 1, "output": 1, "bogus": 2},
        3,
    ],
)
def test_a_bad_model_price_is_refused_naming_the_key(price: Any, tmp_path: Path) -> None:
    with chat.FakeChat([chat.text_chunks("hi", USAGE)]) as fake:
        out = run(
            tmp_path,
            fake,
            ["--provider", "openai-compat", "--model", "m"],
            user_env(tmp_path, {"modelPrices": {"m": price}}),
        )
        assert fake.requests == []
    assert out.returncode == 2 and "modelPrices" in out.stderr and "settings.json" in out.stderr, out.stderr


def test_without_a_budget_an_unpriced_model_still_runs(tmp_path: Path) -> None:
    with chat.FakeChat([chat.text_chunks("hi", USAGE)]) as fake:
        out = run(tmp_path, fake, ["--provider", "openai-compat", "--model", "my-finetune-v3"], user_env(tmp_path))
    assert out.returncode == 0, out.stderr
    assert records(out.stdout)[0]["modelUsage"]["my-finetune-v3"]["priced"] is False


def test_the_seeds_example_models_have_prices() -> None:
    for model in ("gpt-5.5", "kimi-k2.6", "MiniMax-M2.7", "sonnet", "opus", "haiku"):
        info = lookup(model)
        assert info is not None and info.input > 0 and info.output > 0, model
    assert lookup("sonnet") == lookup("claude-sonnet-5-5")
    assert lookup("qwen3.6-plus") is None  # no official price found: refused under a budget, not guessed


# ------------------------------------------------------------------------------------------------ library


def test_the_library_refuses_an_unpriced_model_under_a_budget_before_the_first_request() -> None:
    from sagent.agent.pricing import UnpricedModelError

    model = ScriptedModel([text_turn("hi")], name="my-finetune-v3", provider="openai-compat")
    with pytest.raises(UnpricedModelError, match="modelPrices") as raised:
        Agent(model, max_budget_usd=1.0)
    assert "my-finetune-v3" in str(raised.value) and raised.value.kind == "unpriced"
    assert model.requests == []
    Agent(model)  # no budget: nothing to count, it runs


def test_a_local_model_is_free_under_a_budget(tmp_path: Path) -> None:
    gguf = tmp_path / "qwen2.5-coder-0.5b-q4.gguf"
    gguf.write_bytes(b"")
    Agent(LlamaCppModel(str(gguf)), max_budget_usd=0.01)  # price 0 is a price: not refused


def test_a_subscription_model_is_not_refused_by_a_usd_budget() -> None:
    class Plan(ScriptedModel):
        @property
        def subscription(self) -> bool:
            return True

    Agent(Plan([], name="default", provider="openai-subscription"), max_budget_usd=1.0)


def test_an_unpriced_advisor_under_a_budget_is_refused() -> None:
    from sagent.advisor import Advisor
    from sagent.agent.pricing import UnpricedModelError
    from sagent.agent.settings import AgentSettings

    advisor = Advisor(ScriptedModel([], name="wise-but-unpriced", provider="openai-compat"))
    priced = ScriptedModel([], name="claude-sonnet-4-6", provider="anthropic")
    with pytest.raises(UnpricedModelError, match="wise-but-unpriced"):
        Agent(priced, AgentSettings(advisor=advisor, max_budget_usd=1.0))


def test_a_sub_agent_on_an_unpriced_model_under_a_budget_is_a_tool_error_and_never_runs() -> None:
    async def main() -> None:
        from sagent.agent.fleet import Fleet

        child = ScriptedModel([text_turn("ran at $0")], name="my-finetune-v3", provider="openai-compat")
        parent = ScriptedModel(
            [tool_turn(("AgentSpawn", {"prompt": "work", "model": "my-finetune-v3"})), text_turn("done")],
            name="claude-sonnet-4-6",
            provider="anthropic",
        )
        agent = Agent(parent, tools=[AgentSpawn()], max_budget_usd=1.0, fleet=Fleet(models=lambda p, n: child))
        events = [e async for e in agent.run("go")]
        finished = [e.result for e in events if isinstance(e, ToolFinished)]
        assert finished[0].is_error and "my-finetune-v3" in finished[0].text and "modelPrices" in finished[0].text
        assert child.requests == []
        await agent.aclose()

    asyncio.run(main())


def test_a_budget_set_later_on_an_unpriced_model_is_refused() -> None:
    from sagent.agent.spending import set_budget

    agent = Agent(ScriptedModel([], name="my-finetune-v3", provider="openai-compat"))
    with pytest.raises(ValueError, match="modelPrices"):
        set_budget(agent, 1.0)  # what the REPL's /budget 1 does
    assert agent.cost.budget is None


def test_the_slack_service_refuses_an_unpriced_model_under_a_budget_at_start(tmp_path: Path, capsys) -> None:
    from sagent.slack.cli import main

    code = main(
        [
            "--app-token", "xapp-test", "--bot-token", "xoxb-test", "--provider", "openai-compat",
            "--base-url", "http://127.0.0.1:9", "--model", "my-finetune-v3", "--max-budget-usd", "1",
            "--cwd", str(tmp_path), "--session-dir", str(tmp_path / "slack"),
            "--slack-api-url", "http://127.0.0.1:9/",  # nothing listens: no request leaves this machine
        ]
    )  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert "my-finetune-v3" in err and "modelPrices" in err, err


# ------------------------------------------------------------------------------------- subscription CLIs


def test_the_claude_cli_on_its_own_login_is_a_subscription_and_with_a_key_is_priced_like_the_api() -> None:
    from sagent.agent.pricing import has_price
    from sagent.providers.cli_backends.claude import ClaudeCLIModel
    from sagent.providers.cli_backends.codex import CodexCLIModel
    from sagent.providers.cli_backends.gemini import GeminiCLIModel

    for plan in (ClaudeCLIModel("sonnet"), CodexCLIModel("default"), GeminiCLIModel("auto")):
        assert plan.subscription and has_price(plan)  # the plan pays: no USD budget refuses it
    billed = ClaudeCLIModel("sonnet", api_key="sk-ant-test")
    assert not billed.subscription and has_price(billed)  # `sonnet` costs what the current Sonnet costs
    assert not has_price(ClaudeCLIModel("claude-mystery-9", api_key="sk-ant-test"))
    assert not has_price(CodexCLIModel("default", api_key="sk-test"))  # Codex's "default" names no price


def test_a_cli_billed_by_key_on_an_unpriced_model_is_refused_before_the_cli_starts(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    fake_cli = tmp_path / "claude"
    fake_cli.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    fake_cli.chmod(0o755)
    env = user_env(tmp_path, SAGENT_CLAUDE_API_KEY="sk-ant-test", SAGENT_CLAUDE_BIN=str(fake_cli))
    project = tmp_path / "project"
    project.mkdir()
    out = run_sagent(
        ["-p", "hi", "--provider", "anthropic-cli", "--model", "claude-mystery-9", "--max-budget-usd", "1"],
        env,
        cwd=project,
    )
    assert out.returncode == 2 and "claude-mystery-9" in out.stderr and "modelPrices" in out.stderr, out.stderr
    assert not marker.exists()


def test_sagent_mcp_serves_no_task_on_an_unpriced_model(tmp_path: Path, monkeypatch) -> None:
    from sagent.mcp.server import SagentServer

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    with FakeAnthropic([text_response("ran at $0")]) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        server = SagentServer([], tmp_path, budget_usd=1.0)  # every sagent_task runs under a budget
        result, _ = asyncio.run(
            server.call("sagent_task", {"prompt": "hi", "provider": "anthropic", "model": "claude-mystery-9"})
        )
        assert fake.requests == []
    assert result.is_error and "claude-mystery-9" in result.text and "modelPrices" in result.text


def test_sagent_mcp_serve_prices_models_from_the_users_settings(tmp_path: Path, monkeypatch) -> None:
    from sagent.cli.mcp_cmd import _user_model_prices
    from sagent.mcp.server import SagentServer
    from sagent.providers.catalog import set_model_prices

    env = user_env(tmp_path, {"modelPrices": {"claude-mystery-9": {"input": 1, "output": 1}}})
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "HOME"):
        monkeypatch.setenv(name, env[name])
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    try:
        assert _user_model_prices() is None
        with FakeAnthropic([text_response("priced and run")]) as fake:
            monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
            server = SagentServer([], tmp_path, budget_usd=1.0)
            result, summary = asyncio.run(
                server.call("sagent_task", {"prompt": "hi", "provider": "anthropic", "model": "claude-mystery-9"})
            )
            assert len(fake.requests) == 1
        assert not result.is_error and summary is not None and summary["cost_usd"] > 0
    finally:
        set_model_prices({})


def test_a_coordinators_switch_of_a_worker_to_an_unpriced_model_is_refused_and_told() -> None:
    async def main() -> None:
        from sagent.agent.fleet import Fleet
        from sagent.providers.scripted import RoutedModel
        from sagent.tools import AgentSend
        from sagent.tools.base import tool

        gate = asyncio.Event()
        second = ScriptedModel([text_turn("ran at $0")], name="my-finetune-v3", provider="openai-compat")

        def models(provider: str | None, name: str | None) -> ScriptedModel:
            gate.set()  # the control has reached the worker: let its tool finish
            return second

        @tool
        async def build() -> str:
            """Build the project."""
            await asyncio.wait_for(gate.wait(), 5)
            return "build ok"

        switch = {"to": "w", "control": "switch_model", "model": "my-finetune-v3"}
        model = RoutedModel(
            {
                "main": [
                    tool_turn(("AgentSpawn", {"prompt": "build it", "label": "w", "persistent": True})),
                    tool_turn(("AgentSend", switch)),
                    text_turn("asked"),
                    text_turn("the worker is done"),
                ],
                "w": [tool_turn(("build", {})), text_turn("finished on the priced model")],
            },
            name="claude-sonnet-4-6",
            provider="anthropic",
        )
        agent = Agent(model, tools=[AgentSpawn(), AgentSend(), build], max_budget_usd=5.0, fleet=Fleet(models=models))
        [e async for e in agent.run("build with a worker")]
        worker = agent.children["w"]
        await asyncio.wait_for(worker.wait(), 10)
        assert worker.agent.model is not second and second.requests == []
        told = json.dumps([repr(m) for m in model.requests("w")[-1].messages])
        assert "not switched to my-finetune-v3" in told and "modelPrices" in told
        await agent.aclose()

    asyncio.run(main())
