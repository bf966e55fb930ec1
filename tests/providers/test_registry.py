"""Choosing a provider: explicit names, inference from a model id, the keys set, presets and their errors."""

from __future__ import annotations

import pytest

from sagent.providers.base import BadRequestError
from sagent.providers.openai_compat import OpenAICompatModel
from sagent.providers.registry import ENDPOINTS, Choice, build_model, choose, infer_provider


@pytest.mark.parametrize(
    ("model", "provider"),
    [
        ("claude-sonnet-4-6", "anthropic"),
        ("gpt-5.4", "openai"),
        ("o3", "openai"),
        ("o4-mini", "openai"),
        ("codex-mini-latest", "openai"),
        ("gemini-3-flash-preview", "google"),
        ("kimi-k2-thinking", "moonshot"),
        ("qwen3-coder-plus", "dashscope"),
        ("MiniMax-M2", "minimax"),
        ("/models/tiny.gguf", "local"),
        ("smollm2", "local"),
        ("meta-llama/llama-3.3-70b-instruct", "openrouter"),
        ("mystery-model-7", None),
        ("omega-1", None),
    ],
)
def test_a_bare_model_id_names_its_provider(model: str, provider: str | None) -> None:
    assert infer_provider(model) == provider


def test_keys_pick_the_provider_in_a_fixed_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "g")
    assert choose(None, None) == Choice("google", None)
    monkeypatch.setenv("OPENAI_API_KEY", "o")
    assert choose(None, None) == Choice("openai", None)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "a")
    assert choose(None, None) == Choice("anthropic", None)


def test_no_key_means_the_local_model_and_says_which_variables_would_help() -> None:
    choice = choose(None, None)
    assert choice.provider == "local" and choice.notice is not None
    for variable in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"):
        assert variable in choice.notice


def test_a_preset_uses_its_endpoint_and_key(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(BadRequestError, match="MOONSHOT_API_KEY"):
        build_model(Choice("moonshot", None))
    monkeypatch.setenv("MOONSHOT_API_KEY", "mk")
    model = build_model(Choice("moonshot", None))
    assert isinstance(model, OpenAICompatModel)
    assert (model.provider, model.name, model._base_url, model._api_key) == (
        "moonshot",
        "kimi-k2-thinking",
        ENDPOINTS["moonshot"].base_url,
        "mk",
    )


def test_local_servers_need_a_model_but_no_key() -> None:
    with pytest.raises(BadRequestError, match="--model"):
        build_model(Choice("ollama", None))
    model = build_model(Choice("ollama", "qwen3:8b"))
    assert isinstance(model, OpenAICompatModel) and model._base_url == "http://127.0.0.1:11434/v1"


def test_generic_endpoint_needs_a_base_url_and_reads_the_named_key(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(BadRequestError, match="--base-url"):
        build_model(Choice("openai-compat", "m"))
    with pytest.raises(BadRequestError, match="MY_KEY"):
        build_model(Choice("openai-compat", "m"), base_url="http://127.0.0.1:9/v1", api_key_env="MY_KEY")
    monkeypatch.setenv("MY_KEY", "secret")
    model = build_model(Choice("openai-compat", "m"), base_url="http://127.0.0.1:9/v1", api_key_env="MY_KEY")
    assert isinstance(model, OpenAICompatModel) and model._api_key == "secret"


@pytest.mark.parametrize(("provider", "variable"), [("openai", "OPENAI_API_KEY"), ("google", "GEMINI_API_KEY")])
def test_a_named_provider_without_its_key_is_a_clear_error(provider: str, variable: str) -> None:
    with pytest.raises(BadRequestError, match=variable):
        build_model(Choice(provider, None))


def test_the_local_provider_refuses_a_model_name_it_would_otherwise_ignore(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from sagent.providers.base import BadRequestError
    from sagent.providers.registry import Choice, _local_file, build_model

    with pytest.raises(BadRequestError, match="neither one nor the embedded model"):
        build_model(Choice("local", "qwen2.5-coder"))
    assert _local_file(None) is None and _local_file("SmolLM2") is None  # the embedded model by its name
    model = tmp_path / "weights"  # a model file without the usual suffix is still a file
    model.write_bytes(b"GGUF")
    assert _local_file(str(model)) == str(model)
    assert _local_file("/elsewhere/tiny.gguf") == "/elsewhere/tiny.gguf"  # missing: said when it starts
