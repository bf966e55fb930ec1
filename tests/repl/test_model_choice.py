"""What /model lists and accepts, and the searchable list it opens."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from sagent.agent.agent import Agent
from sagent.providers.scripted import ScriptedModel
from sagent.providers.specs import SPECS
from sagent.repl.app import Repl
from sagent.repl.commands import run_command
from sagent.repl.model_choice import ModelRequest, model_options, parse_request, refusal, target_provider
from sagent.repl.picker import Picker, PickItem
from sagent.repl.render import Settings


def test_the_list_holds_the_providers_with_keys_and_the_model_in_use_marked() -> None:
    options = model_options("anthropic", "claude-sonnet-4-6", {"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"})
    providers = {o.provider for o in options}
    assert providers == {"anthropic", "openai"}  # no key for Google: its models are not offered
    (current,) = [o for o in options if o.current]
    assert current.id == "claude-sonnet-4-6" and current.context_window == 200_000
    assert "  ● in use" in current.row(20) and "$3.00 / $15.00" in current.row(20)
    assert "200k" in current.row(20)


def test_a_dated_model_in_use_is_marked_on_its_catalog_row_and_an_unknown_one_is_listed_first() -> None:
    options = model_options("anthropic", "claude-haiku-4-5-20251001", {"ANTHROPIC_API_KEY": "k"})
    assert [o.id for o in options if o.current] == ["claude-haiku-4-5"]
    forced = model_options("anthropic", "claude-opus-9", {"ANTHROPIC_API_KEY": "k"})
    assert forced[0].id == "claude-opus-9" and forced[0].current and "unpriced" in forced[0].row(20)


def test_a_provider_without_catalog_models_offers_its_default() -> None:
    options = model_options("openrouter", "openrouter/auto", {"OPENROUTER_API_KEY": "k"})
    assert [(o.provider, o.id, o.current) for o in options] == [("openrouter", "openrouter/auto", True)]


def test_requests_are_parsed_with_a_provider_prefix_and_a_force_flag() -> None:
    assert parse_request("claude-haiku-4-5") == ModelRequest("claude-haiku-4-5")
    assert parse_request("ollama:qwen3:8b") == ModelRequest("qwen3:8b", "ollama")
    assert parse_request("Gemini:gemini-9") == ModelRequest("gemini-9", "google")
    assert parse_request("--force claude-opus-9") == ModelRequest("claude-opus-9", None, True)
    assert parse_request("meta-llama/llama-3:free") == ModelRequest("meta-llama/llama-3:free")
    for bad in ("--force", "a b", "--fast x"):
        with pytest.raises(ValueError, match="usage: /model"):
            parse_request(bad)


def test_an_unknown_name_is_refused_with_the_nearest_known_ones() -> None:
    why = refusal(ModelRequest("claude-sonet-4-6"), "anthropic", "claude-sonnet-4-6")
    assert why is not None and "'claude-sonet-4-6'" in why and "claude-sonnet-4-6" in why.split("nearest: ")[1]
    assert "/model --force claude-sonet-4-6" in why
    nothing_near = refusal(ModelRequest("foo"), "anthropic", "claude-sonnet-4-6")
    assert nothing_near is not None and "nearest" not in nothing_near


def test_known_defaulted_forced_and_server_served_names_go_ahead() -> None:
    ok = [
        ModelRequest("claude-haiku-4-5"),
        ModelRequest("claude-haiku-4-5-20251001"),  # a dated id of a catalog model
        ModelRequest("gpt-5.4-mini"),  # another provider's model
        ModelRequest("MiniMax-M2"),  # a default, in any case
        ModelRequest("claude-opus-9", forced=True),
        ModelRequest("qwen3:8b", "ollama"),  # a server knows its own models
        ModelRequest("/models/tiny.gguf"),
    ]
    for request in ok:
        assert refusal(request, "anthropic", "claude-sonnet-4-6") is None, request
    assert refusal(ModelRequest("llama3"), "ollama", "qwen3") is None
    assert refusal(ModelRequest("gpt-5.4", "anthropic"), "openai", "gpt-5.4") is not None  # not Anthropic's


def test_the_target_provider_is_the_named_one_then_the_ids_then_the_current() -> None:
    assert target_provider(ModelRequest("x", "ollama"), "anthropic") == "ollama"
    assert target_provider(ModelRequest("gpt-5.4"), "anthropic") == "openai"
    assert target_provider(ModelRequest("mystery"), "vllm") == "vllm"


def test_the_picker_searches_moves_and_scrolls() -> None:
    chosen: list[str] = []
    items = [PickItem(f"model-{n} {'anthropic' if n % 2 else 'openai'}", f"model-{n}", f"m{n}") for n in range(30)]
    picker = Picker("Pick", items, chosen.append)
    text = picker.text(80, rows=5)
    assert text.splitlines()[1] == "› model-0 openai" and "30 · ↑↓ move" in text
    picker.move(7)
    assert picker.chosen() == items[7] and "› model-7" in picker.text(80, rows=5)
    assert "model-0" not in picker.text(80, rows=5)  # scrolled to keep the choice in view
    picker.search("MODEL-1")
    assert [i.value for i in picker.matches()] == ["m1"] + [f"m{n}" for n in range(10, 20)]
    assert picker.chosen() == items[1] and "11 of 30" in picker.text(80)
    picker.move(-3)
    assert picker.chosen() == items[1]  # stops at the top
    picker.search("nothing like it")
    assert picker.chosen() is None and "nothing matches" in picker.text(80)


def test_picker_rows_are_cut_to_the_width() -> None:
    picker = Picker("Pick", [PickItem("x" * 200, "x", 1)], lambda value: None)
    assert all(len(line) <= 59 for line in picker.text(60).splitlines())


def test_model_command_opens_the_list_refuses_unknown_names_and_switches_known_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for spec in SPECS:
        for variable in spec.key_variables:
            monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    switches: list[tuple[str | None, str | None]] = []

    def switch(agent: Agent, provider: str | None, model: str | None) -> str:
        switches.append((provider, model))
        return f"switched to {provider}/{model}"

    agent = Agent(ScriptedModel([]), cwd=tmp_path)
    repl = Repl(agent, new_agent=lambda path=None: agent, settings=Settings(color=False), switch=switch)
    try:
        asyncio.run(run_command(repl, "/model"))
        picker = repl.state.picker
        assert picker is not None and picker.chosen() is not None
        assert picker.chosen().value.id == "scripted"  # the model in use, first
        picker.search("haiku 4")
        picker.on_choose(picker.chosen().value)
        assert switches == [("anthropic", "claude-haiku-4-5")]
        asyncio.run(run_command(repl, "/model claude-hiaku-4-5"))
        assert "/model: no provider knows the model 'claude-hiaku-4-5'" in capsys.readouterr().out
        assert len(switches) == 1
        asyncio.run(run_command(repl, "/model --force claude-opus-9"))
        asyncio.run(run_command(repl, "/model ollama:qwen3:8b"))
        assert switches[1:] == [("anthropic", "claude-opus-9"), ("ollama", "qwen3:8b")]
    finally:
        asyncio.run(agent.aclose())
