"""A relative XDG base directory is ignored, as the specification says: session logs, settings, memory,
custom commands and caches never land in (or are read from) whatever folder sagent runs in."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from sagent.lib import xdg
from tests.cli.test_headless import run_sagent
from tests.fakes.anthropic_server import FakeAnthropic, text_response

VARIABLES = ["XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"]
# Values that are not absolute paths: relative in every spelling, a tilde no shell expanded, empty.
RELATIVE = ["data", "./data", "../data", "data/", "~/data", ".", "", " /abs-after-space"]


@pytest.mark.parametrize("variable", VARIABLES)
@pytest.mark.parametrize("value", RELATIVE)
def test_a_relative_value_gives_the_default_under_home(variable: str, value: str, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv(variable, value)
    got = xdg.base_dir(variable)
    assert got == (tmp_path / "home").joinpath(*xdg.DEFAULTS[variable])
    assert got.is_absolute()


@pytest.mark.parametrize("variable", VARIABLES)
def test_an_absolute_value_is_used(variable: str, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(variable, str(tmp_path / "there"))
    assert xdg.base_dir(variable) == tmp_path / "there"


def test_the_runtime_dir_has_no_default_and_ignores_a_relative_value(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", "run")
    assert xdg.runtime_dir() is None
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    assert xdg.runtime_dir() is None
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    assert xdg.runtime_dir() == tmp_path


def test_every_path_sagent_keeps_follows_the_helper(tmp_path: Path, monkeypatch) -> None:
    from sagent.agent.memory import user_memory_file
    from sagent.agent.session import data_dir
    from sagent.cli.settings_files import user_settings_file
    from sagent.custom_commands import user_commands_dir
    from sagent.lib import codecache

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for variable in VARIABLES:
        monkeypatch.setenv(variable, "relative")
    home = tmp_path / "home"
    for place in (data_dir(), user_settings_file(), user_memory_file(), user_commands_dir(), codecache.path()):
        assert place.is_absolute() and home in place.parents, place


def test_a_run_with_relative_xdg_variables_writes_nothing_into_the_project(tmp_path: Path) -> None:
    project = tmp_path / "project"
    home = tmp_path / "home"
    project.mkdir()
    home.mkdir()
    # What a repository could plant where a relative XDG_CONFIG_HOME would point: settings and memory.
    planted = project / "cfg" / "sagent"
    planted.mkdir(parents=True)
    (planted / "settings.json").write_text(json.dumps({"appendSystemPrompt": "PLANTED-SETTINGS"}))
    (planted / "AGENTS.md").write_text("PLANTED-MEMORY\n")
    before = sorted(p.relative_to(project) for p in project.rglob("*"))
    env = {
        **{k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")},
        "HOME": str(home),
        "ANTHROPIC_API_KEY": "k",
        "XDG_DATA_HOME": "data",
        "XDG_CONFIG_HOME": "cfg",
        "XDG_CACHE_HOME": "cache",
        "XDG_STATE_HOME": "state",
    }
    with FakeAnthropic([text_response("hi")]) as fake:
        out = run_sagent(["-p", "hi", "--output-format", "json", "--base-url", fake.url], env, cwd=project)
        system = json.dumps(fake.bodies()[0]["system"])
    assert out.returncode == 0, out.stderr
    assert sorted(p.relative_to(project) for p in project.rglob("*")) == before  # nothing new in the project
    assert list((home / ".local" / "share" / "sagent" / "sessions").rglob("*.jsonl"))  # the log is under HOME
    assert "PLANTED-SETTINGS" not in system and "PLANTED-MEMORY" not in system
