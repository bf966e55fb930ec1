"""One ProviderSpec per provider: everything that names providers derives from the table, a new preset is
one entry, every provider answers to its capitalised name, and the providers as library classes build
models that stream from the fake servers."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sagent.cli.commands import list_providers
from sagent.cli.main import build_parser
from sagent.providers import specs
from sagent.providers.base import BadRequestError, Model, RetryPolicy, stream_with_retry
from sagent.providers.openai_compat import OpenAICompatModel
from sagent.providers.registry import Choice, build_model, choose, infer_provider
from sagent.providers.specs import CHAT_COMPLETIONS, SPECS, ProviderSpec
from sagent.types import ModelRequest, UserMessage
from tests.cli.test_headless import run_sagent
from tests.fakes import openai_chat_server as chat
from tests.fakes.anthropic_server import FakeAnthropic, text_response

ROOT = Path(__file__).parent.parent.parent
SEED_NAMES = {
    "Anthropic": "anthropic",
    "OpenAI": "openai",
    "Google": "google",
    "Moonshot": "moonshot",
    "DashScope": "dashscope",
    "MiniMax": "minimax",
    "LlamaCpp": "local",
}

ACME = ProviderSpec(
    "acme",
    "Acme",
    "Acme Cloud",
    CHAT_COMPLETIONS,
    ("ACME_API_KEY",),
    base_url="https://api.acme.example/v1",
    default_model="acme-coder-1",
    model_pattern=r"acme-",
    model_hint="acme-*",
    compatible=True,
    sdk="openai",
)


def env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data"), **extra}


# ------------------------------------------------------------------------------------------ the table


def test_names_are_unique_across_every_spelling() -> None:
    spellings = [n for s in SPECS for n in s.names()]
    assert len(spellings) == len(set(spellings))


def test_the_docs_table_is_the_specs_table() -> None:
    text = (ROOT / "docs" / "providers.md").read_text()
    rows = [
        tuple(cell.strip().strip("`") for cell in line.strip("|").split("|"))
        for line in text.splitlines()
        if re.match(r"^\| `", line)
    ]
    assert rows == specs.table_rows()


def test_sagent_providers_prints_every_spec(tmp_path: Path) -> None:
    out = run_sagent(["providers"], env(tmp_path))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()[1:]
    assert [line.split()[0] for line in lines] == [s.name for s in SPECS]
    for spec, line in zip(SPECS, lines, strict=True):
        assert all(v in line for v in spec.key_variables) and (spec.base_url or spec.description) in line


def test_help_names_every_provider_and_every_key_variable(tmp_path: Path) -> None:
    out = run_sagent(["--help"], env(tmp_path))
    assert out.returncode == 0
    text = " ".join(out.stdout.split())  # argparse wraps lines
    text += " " + text.replace("- ", "-")  # and breaks a long name at its hyphen (openai-subscription)
    for spec in SPECS:
        assert spec.name in text
        assert all(v in text for v in spec.key_variables)
        assert spec.model_hint is None or spec.model_hint in text


# ------------------------------------------------------------------------------------------ a new preset


@pytest.fixture
def acme(monkeypatch: pytest.MonkeyPatch) -> ProviderSpec:
    monkeypatch.setattr(specs, "SPECS", (*SPECS, ACME))
    return ACME


def test_a_preset_is_one_entry_the_registry_builds(acme: ProviderSpec, monkeypatch: pytest.MonkeyPatch) -> None:
    assert choose("ACME", None) == Choice("acme", None)
    assert infer_provider("acme-coder-1") == "acme"
    with pytest.raises(BadRequestError, match="ACME_API_KEY"):
        build_model(Choice("acme", None))
    monkeypatch.setenv("ACME_API_KEY", "ak")
    assert choose(None, None) == Choice("acme", None)  # its key alone picks it
    model = build_model(Choice("acme", None))
    assert isinstance(model, OpenAICompatModel)
    assert (model.provider, model.name, model._base_url, model._api_key) == (
        "acme",
        "acme-coder-1",
        "https://api.acme.example/v1",
        "ak",
    )


def test_a_preset_is_one_entry_the_cli_and_the_repl_list(
    acme: ProviderSpec, capsys: pytest.CaptureFixture[str]
) -> None:
    assert list_providers([]) == 0
    row = [line for line in capsys.readouterr().out.splitlines() if line.startswith("acme ")]
    assert len(row) == 1 and "ACME_API_KEY" in row[0] and "https://api.acme.example/v1" in row[0]
    help_text = " ".join(build_parser().format_help().split())
    assert "acme" in help_text and "ACME_API_KEY" in help_text and "acme-*" in help_text

    from sagent.providers.classes import Provider
    from sagent.repl.commands import argument_choices

    assert "acme" in argument_choices(None, "provider")  # type: ignore[arg-type]  (needs no REPL)
    assert Provider.named("Acme")(api_key="k").model().provider == "acme"


# ------------------------------------------------------------------------------------------ any spelling


@pytest.mark.parametrize(("seed", "name"), SEED_NAMES.items())
def test_the_seed_names_are_accepted(seed: str, name: str) -> None:
    assert choose(seed, "m") == Choice(name, "m")
    assert choose(seed.upper(), "m") == Choice(name, "m")


def test_an_unknown_provider_lists_the_names() -> None:
    with pytest.raises(BadRequestError, match="anthropic, openai"):
        choose("Anthropik", None)


def test_provider_flags_take_the_seed_names(tmp_path: Path) -> None:
    with FakeAnthropic([text_response("Hello from the fake.")]) as fake:
        flags = ["--provider", "Anthropic", "--allow-providers", "Anthropic,LlamaCpp", "--output-format", "json"]
        out = run_sagent(
            ["-p", "hi", *flags],
            env(tmp_path, ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=fake.url),
        )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["result"] == "Hello from the fake."


def test_a_spawn_may_name_an_allowed_provider_by_its_seed_name() -> None:
    from sagent.agent.fleet import Fleet
    from sagent.providers.scripted import ScriptedModel

    built: list[tuple[str | None, str | None]] = []

    def models(provider: str | None, model: str | None) -> ScriptedModel:
        built.append((provider, model))
        return ScriptedModel([], provider="anthropic")

    fleet = Fleet(allow_providers={"Anthropic"}, models=models)
    fleet.model("ANTHROPIC", "claude-haiku-4-5")
    assert built == [("anthropic", "claude-haiku-4-5")]


# ------------------------------------------------------------------------------------------ library classes


def test_importing_the_provider_classes_loads_no_sdk() -> None:
    code = (
        "import sys\nfrom sagent.providers import Anthropic, OpenAI, Google, Moonshot, DashScope, MiniMax, LlamaCpp,"
        " OpenAICompatible, Provider\nprint([m for m in ('anthropic', 'openai', 'google.genai') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_from_env_without_a_key_names_the_variables() -> None:
    from sagent.providers import Google

    with pytest.raises(BadRequestError, match="GEMINI_API_KEY or GOOGLE_API_KEY") as caught:
        Google.from_env()
    assert "\n" not in caught.value.message


async def collect_text(model: Model) -> str:
    request = ModelRequest(system="be brief", messages=(UserMessage.of("hi"),), tools=())
    events = [e async for e in stream_with_retry(model, request, RetryPolicy(max_retries=0))]
    return events[-1].message.text


async def test_anthropic_from_env_streams_from_the_fake(monkeypatch: pytest.MonkeyPatch) -> None:
    from sagent.providers import Anthropic

    with FakeAnthropic([text_response("Hello through the class.")]) as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-class")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        model = Anthropic.from_env().model("claude-sonnet-4-6")
        assert await collect_text(model) == "Hello through the class."
        headers = {k.lower(): v for k, v in fake.requests[0]["headers"].items()}
    assert "sk-ant-class" in (headers.get("x-api-key") or headers.get("authorization", ""))
    assert (model.provider, model.name) == ("anthropic", "claude-sonnet-4-6")


async def test_a_preset_class_and_openai_compatible_stream_from_the_fake(monkeypatch: pytest.MonkeyPatch) -> None:
    from sagent.providers import Moonshot, OpenAICompatible

    usage = {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12}
    with chat.FakeChat([chat.text_chunks("From Kimi.", usage), chat.text_chunks("From a server.", usage)]) as fake:
        monkeypatch.setenv("MOONSHOT_API_KEY", "mk-class")
        kimi = Moonshot.from_env(base_url=fake.url).model()
        assert (kimi.provider, kimi.name) == ("moonshot", "kimi-k2-thinking")
        assert await collect_text(kimi) == "From Kimi."
        monkeypatch.setenv("MY_SERVER_KEY", "srv")
        server = OpenAICompatible.from_env("MY_SERVER_KEY", base_url=fake.url).model("served-model")
        assert await collect_text(server) == "From a server."
        sent = fake.requests
    keys = [{k.lower(): v for k, v in r["headers"].items()}.get("authorization") for r in sent]
    assert keys == ["Bearer mk-class", "Bearer srv"]
    assert [r["body"]["model"] for r in sent] == ["kimi-k2-thinking", "served-model"]


def test_openai_compatible_needs_a_base_url() -> None:
    from sagent.providers import OpenAICompatible

    with pytest.raises(BadRequestError, match="base_url"):
        OpenAICompatible(api_key="k").model("m")
