"""`sagent/bin/cli.py`: the command from a clone, with nothing installed by hand."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CLI = Path(__file__).resolve().parents[2] / "sagent" / "bin" / "cli.py"


def test_it_is_an_executable_that_runs_the_command_in_the_projects_environment(tmp_path: Path) -> None:
    assert os.access(CLI, os.X_OK)
    env = {**os.environ, "PATH": str(tmp_path / "bin")}  # no uv in reach: it must not need to hand over
    done = subprocess.run(
        [sys.executable, str(CLI), "--help"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "usage: sagent" in done.stdout


@pytest.mark.skipif(shutil.which("uv") is None, reason="uv is not installed")
def test_a_bare_interpreter_hands_over_to_uv_which_runs_the_same_command(tmp_path: Path) -> None:
    # -S: no site-packages, as a system Python without sagent's dependencies
    done = subprocess.run(
        [sys.executable, "-S", str(CLI), "--version"], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("sagent ")


def test_without_uv_it_says_how_to_get_it_and_exits_127(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": str(tmp_path)}  # no uv in reach
    done = subprocess.run(
        [sys.executable, "-S", str(CLI), "--version"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 127
    assert "pip install uv" in done.stderr


def test_an_interpreter_with_some_of_the_libraries_but_not_sagent_still_hands_over(tmp_path: Path) -> None:
    # A system Python that happens to have prompt_toolkit (or any other of sagent's libraries) must not run
    # the clone's code without the rest: it hands over to uv, which here is not in reach.
    (tmp_path / "prompt_toolkit").mkdir()
    (tmp_path / "prompt_toolkit" / "__init__.py").write_text("")
    env = {**os.environ, "PATH": str(tmp_path / "bin"), "PYTHONPATH": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-S", str(CLI), "--version"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 127 and "pip install uv" in done.stderr
