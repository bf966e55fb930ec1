"""The `advisor` settings key (a model, or an object tuning every trigger and gate) and the `--advisor-*`
flags: what they set, what they refuse (exit 2, naming the key), and an advisor on its own endpoint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sagent.advisor import AdvisorPolicy
from sagent.cli.agent_setup import advisor_of
from sagent.cli.flags import build_parser, parse_with_settings
from sagent.providers.scripted import ScriptedModel
from tests.cli.test_headless import env_for, records, run_sagent
from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response
from tests.fakes.openai_chat_server import FakeChat, text_chunks

pytestmark = pytest.mark.usefixtures("trust_tmp_path")  # the project files written here apply

RUN = ["--model", "claude-haiku-4-5", "--system", "Be brief.", "--no-memory", "--ephemeral", "--tools", "List"]


def _settings(tmp_path: Path, advisor: object) -> None:
    (tmp_path / ".sagent").mkdir(exist_ok=True)
    (tmp_path / ".sagent" / "settings.json").write_text(json.dumps({"advisor": advisor}))


def _advisor(tmp_path: Path, *argv: str):
    args = parse_with_settings(build_parser(), ["--cwd", str(tmp_path), *argv])
    assert args is not None
    return advisor_of(args, ScriptedModel([], name="claude-haiku-4-5"))


def test_the_object_sets_the_policy_and_flags_win(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-fake")
    tuned = {
        "model": "claude-opus-4-7",
        "markers": ["[HELP]"],
        "failures": None,
        "confidence": 0.2,
        "stagnation": 6,
        "similarity": 0.9,
        "maxCalls": 5,
        "cooldown": 0,
        "maxUsd": 0.5,
        "review": True,
        "structured": False,
    }
    _settings(tmp_path, tuned)
    adv = _advisor(tmp_path)
    assert adv is not None and adv.model.name == "claude-opus-4-7"
    assert adv.policy == AdvisorPolicy(
        marker=("[HELP]",),
        failures=None,
        confidence=0.2,
        stagnation=6,
        similarity=0.9,
        max_consultations=5,
        cooldown=0,
        max_usd=0.5,
        review=True,
        structured=False,
    )
    # --advisor names another model and keeps the file's tuning; the flags win over their members
    adv = _advisor(tmp_path, "--advisor", "claude-sonnet-4-6", "--advisor-max-calls", "1", "--advisor-cooldown", "4")
    assert adv is not None and adv.model.name == "claude-sonnet-4-6"
    assert (adv.policy.max_consultations, adv.policy.cooldown, adv.policy.stagnation) == (1, 4, 6)
    _settings(tmp_path, "anthropic:claude-opus-4-7")  # the string keeps meaning just the model
    adv = _advisor(tmp_path)
    assert adv is not None and adv.policy == AdvisorPolicy() and adv.model.provider == "anthropic"
    _settings(tmp_path, {"model": "claude-opus-4-7", "marker": "[SOS]", "failures": None, "stagnation": None})
    adv = _advisor(tmp_path)
    assert adv is not None and adv.policy.markers() == ("[SOS]",) and adv.policy.failures is None
    _settings(tmp_path, {"maxCalls": 2})  # tuning without a model: no advisor until one is named
    assert _advisor(tmp_path) is None
    assert _advisor(tmp_path, "--advisor", "claude-opus-4-7").policy.max_consultations == 2  # type: ignore[union-attr]


def test_an_advisor_on_its_own_endpoint(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("ADVISOR_KEY", "sk-advisor")
    _settings(tmp_path, {"model": "my-model", "baseUrl": "http://127.0.0.1:9/v1", "apiKeyEnv": "ADVISOR_KEY"})
    adv = _advisor(tmp_path)
    assert adv is not None and (adv.model.provider, adv.model.name) == ("openai-compat", "my-model")


@pytest.mark.parametrize(
    ("advisor", "named"),
    [
        ({"model": "claude-opus-4-7", "maxCalls": -1}, '"advisor.maxCalls"'),
        ({"model": "claude-opus-4-7", "failures": 0}, '"advisor.failures"'),
        ({"model": "claude-opus-4-7", "confidence": 1.5}, '"advisor.confidence"'),
        ({"model": "claude-opus-4-7", "stagnation": 1}, '"advisor.stagnation"'),
        ({"model": "claude-opus-4-7", "similarity": 0}, '"advisor.similarity"'),
        ({"model": "claude-opus-4-7", "markers": [3]}, '"advisor.markers"'),
        ({"model": "claude-opus-4-7", "cooldown": "two"}, '"advisor.cooldown"'),
        ({"model": ""}, '"advisor.model"'),
        (7, '"advisor"'),
    ],
)
def test_a_bad_value_exits_2_naming_the_key(tmp_path: Path, advisor: object, named: str) -> None:
    _settings(tmp_path, advisor)
    out = run_sagent(["-p", "go", *RUN], env_for_nothing(tmp_path), cwd=tmp_path)
    assert out.returncode == 2 and f"key {named}" in out.stderr and "Traceback" not in out.stderr, out.stderr


def env_for_nothing(tmp_path: Path) -> dict[str, str]:
    import os

    return {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data")}


def test_bad_flags_exit_2(tmp_path: Path) -> None:
    env = env_for_nothing(tmp_path)
    out = run_sagent(["-p", "go", *RUN, "--advisor-max-calls", "-2"], env, cwd=tmp_path)
    assert out.returncode == 2 and "--advisor-max-calls" in out.stderr
    out = run_sagent(["-p", "go", *RUN, "--advisor-cooldown", "1"], {**env, "ANTHROPIC_API_KEY": "k"}, cwd=tmp_path)
    assert out.returncode == 2 and "--advisor-cooldown" in out.stderr and "no advisor" in out.stderr
    args = ["-p", "go", *RUN, "--advisor", "claude-opus-4-7", "--advisor-api-key-env", "NOT_SET_HERE"]
    out = run_sagent(args, {**env, "ANTHROPIC_API_KEY": "k"}, cwd=tmp_path)
    assert out.returncode == 2 and "NOT_SET_HERE" in out.stderr and "Traceback" not in out.stderr


def test_unknown_members_are_warned_of(tmp_path: Path) -> None:
    _settings(tmp_path, {"model": "claude-opus-4-7", "maxCall": 2})
    out = run_sagent(["config"], env_for_nothing(tmp_path), cwd=tmp_path)
    assert 'unknown key "advisor.maxCall"' in out.stderr and 'did you mean "advisor.maxCalls"' in out.stderr


def test_the_executor_on_anthropic_and_its_advisor_on_a_compatible_server(tmp_path: Path) -> None:
    steps = [tool_use_response([("Advisor", {"question": "which file?"})]), text_response("Start with main.py.")]
    with FakeAnthropic(steps) as executor, FakeChat([text_chunks("Read main.py first.")]) as adviser:
        args = [*RUN, "--advisor", "qwen2.5-72b", "--advisor-base-url", adviser.url]
        args += ["--advisor-api-key-env", "ADVISOR_KEY", "--output-format", "stream-json", "-p", "fix it"]
        out = run_sagent(args, {**env_for(executor, tmp_path), "ADVISOR_KEY": "sk-adv"}, cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        asked = adviser.bodies()
        headers = {k.lower(): v for k, v in adviser.requests[0]["headers"].items()}
    assert headers["authorization"] == "Bearer sk-adv"  # the advisor's own key, not the executor's
    assert [b["model"] for b in asked] == ["qwen2.5-72b"] and "which file?" in json.dumps(asked[0])
    consulted = next(r for r in records(out.stdout) if r.get("subtype") == "advisor_consulted")
    assert consulted["model"] == "qwen2.5-72b" and consulted["advice"] == "Read main.py first."
    tool_result = json.dumps(executor.bodies()[-1]["messages"][-1])
    assert "Read main.py first." in tool_result
