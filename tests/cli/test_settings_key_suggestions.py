"""An unknown key in a settings file is a warning that names the nearest known key when one is close: a
typo (`modle`), another case (`Model`), a permissions member (`alow`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sagent.cli.settings_files import KEYS, nearest_key, unknown_key
from tests.trusting import trust_in


@pytest.mark.parametrize(
    "typed, meant",
    [
        ("modle", "model"),
        ("Model", "model"),
        ("provder", "provider"),
        ("maxbudgetusd", "maxBudgetUsd"),
        ("permisions", "permissions"),
        ("sandbx", "sandbox"),
        ("systemPromt", "systemPrompt"),
    ],
)
def test_a_near_key_is_suggested(typed: str, meant: str) -> None:
    assert nearest_key(typed, KEYS) == meant
    assert f'did you mean "{meant}"?' in unknown_key("s.json", typed, KEYS)


@pytest.mark.parametrize("typed", ["xyz", "colour", "theme"])
def test_nothing_is_suggested_when_nothing_is_close(typed: str) -> None:
    assert nearest_key(typed, KEYS) is None
    assert "did you mean" not in unknown_key("s.json", typed, KEYS)


def run(project: Path, config_home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CONFIG_HOME": str(config_home), "XDG_DATA_HOME": str(project.parent / "data")}
    return subprocess.run(
        [sys.executable, "-m", "sagent.cli.main", *args],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        cwd=project,
        env=env,
        timeout=60,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".sagent").mkdir(parents=True)
    trust_in(tmp_path / "xdg", tmp_path)
    return root


def test_sagent_config_warns_with_the_suggestion(project: Path, tmp_path: Path) -> None:
    path = project / ".sagent" / "settings.json"
    path.write_text(json.dumps({"modle": "gpt-5.4", "permissions": {"alow": ["Read"]}}))
    out = run(project, tmp_path / "xdg", "config", "--json")
    assert out.returncode == 0, out.stderr
    assert f'{path}: unknown key "modle" is ignored; did you mean "model"?' in out.stderr
    assert 'unknown key "permissions.alow" is ignored; did you mean "permissions.allow"?' in out.stderr
    warnings = json.loads(out.stdout)["warnings"]
    assert any('did you mean "model"?' in w for w in warnings)


def test_a_user_settings_file_is_warned_about_the_same_way(project: Path, tmp_path: Path) -> None:
    user = tmp_path / "xdg" / "sagent" / "settings.json"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(json.dumps({"Model": "gpt-5.4"}))
    out = run(project, tmp_path / "xdg", "config")
    assert f'{user}: unknown key "Model" is ignored; did you mean "model"?' in out.stderr


def test_config_set_of_an_unknown_key_suggests_the_near_one_and_writes_nothing(project: Path, tmp_path: Path) -> None:
    out = run(project, tmp_path / "xdg", "config", "set", "modle", "x")
    assert out.returncode == 2
    assert out.stderr.startswith('sagent: error: unknown settings key "modle"; did you mean "model"?')
    assert not (tmp_path / "xdg" / "sagent" / "settings.json").exists()


def test_config_set_writes_a_checked_value_and_keeps_the_other_keys(project: Path, tmp_path: Path) -> None:
    user = tmp_path / "xdg" / "sagent" / "settings.json"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(json.dumps({"maxDepth": 3}))
    xdg = tmp_path / "xdg"
    assert run(project, xdg, "config", "set", "model", "gpt-5.4").returncode == 0
    assert run(project, xdg, "config", "set", "maxTokens", "100").returncode == 0
    assert run(project, xdg, "config", "set", "tools", "Read,Grep").returncode == 0
    assert json.loads(user.read_text()) == {
        "maxDepth": 3,
        "model": "gpt-5.4",
        "maxTokens": 100,
        "tools": ["Read", "Grep"],
    }
    bad = run(project, xdg, "config", "set", "maxTokens", "lots")
    assert bad.returncode == 2 and '"maxTokens": must be a whole number' in bad.stderr
    assert json.loads(user.read_text())["maxTokens"] == 100
    report = json.loads(run(project, xdg, "config", "--json").stdout)
    assert report["settings"]["model"]["value"] == "gpt-5.4"
    assert run(project, xdg, "config", "unset", "model").returncode == 0
    assert "model" not in json.loads(user.read_text())


def test_config_set_writes_the_project_and_local_files(project: Path, tmp_path: Path) -> None:
    xdg = tmp_path / "xdg"
    assert run(project, xdg, "config", "set", "effort", "high", "--scope", "project").returncode == 0
    assert run(project, xdg, "config", "set", "noMemory", "true", "--scope=local").returncode == 0
    assert json.loads((project / ".sagent" / "settings.json").read_text()) == {"effort": "high"}
    assert json.loads((project / ".sagent" / "settings.local.json").read_text()) == {"noMemory": True}
    assert run(project, xdg, "config", "set", "effort", "high", "--scope", "team").returncode == 2


@pytest.mark.parametrize(
    "key, value, problem",
    [("effort", "ultra", "is not one of"), ("maxBudgetUsd", "-1", "more than 0"), ("maxBudgetUsd", "NaN", "finite")],
)
def test_config_set_refuses_what_the_flag_refuses(
    key: str, value: str, problem: str, project: Path, tmp_path: Path
) -> None:
    out = run(project, tmp_path / "xdg", "config", "set", key, value)
    assert out.returncode == 2 and problem in out.stderr and f'"{key}"' in out.stderr
    assert not (tmp_path / "xdg" / "sagent" / "settings.json").exists()
