"""Tests never see the developer's provider keys or endpoints: each test starts with none set, so what a
test expects cannot depend on the machine it runs on (and no test can reach a real provider). Nor do they
see the developer's own agent memory (~/.config/sagent/AGENTS.md), nor write to their caches: the runs of
the whole session share one cache folder of their own."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sagent.providers.registry import KEY_VARIABLES

_PROVIDER_VARIABLES = {v for variables in KEY_VARIABLES.values() for v in variables} | {
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "OPENAI_BASE_URL",
    "GOOGLE_GEMINI_BASE_URL",
    "VLLM_API_KEY",
}


@pytest.fixture(scope="session")
def _cache_home(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("cache"))


@pytest.fixture(autouse=True)
def _no_provider_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory, _cache_home: str
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", _cache_home)
    for name in _PROVIDER_VARIABLES & set(os.environ):
        monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))


@pytest.fixture
def trust_tmp_path(_no_provider_environment: None, tmp_path: Path) -> None:
    """The test's temporary folder is one the user trusted (written to the user's trust file in the test's
    own XDG_CONFIG_HOME, as `sagent trust` does), so the project files a test writes there apply. Mark a
    module `pytestmark = pytest.mark.usefixtures("trust_tmp_path")` when it tests what they do."""
    from sagent.cli.trust import trust

    trust(tmp_path)
