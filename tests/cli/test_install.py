"""The README's install, from a clean clone: `uv tool install .` puts a working `sagent` on PATH, and the
hints sagent prints name a command that installs this project (never PyPI's `sagent`, another project).

Marked `install`: it builds sagent and installs it into a temporary tool folder, a few seconds with a warm
uv cache (packages come from the cache, or from PyPI the first time). `-m "not install"` leaves it out.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from sagent.lib import install

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.install


def clean_env(tmp_path: Path) -> dict[str, str]:
    """No key and no provider chosen: the run would fall back to the local model."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith(("_API_KEY", "_TOKEN")) and not k.startswith(("SAGENT_", "VIRTUAL_ENV", "LLAMA_CPP"))
    }
    return {
        **env,
        "UV_TOOL_DIR": str(tmp_path / "tools"),
        "UV_TOOL_BIN_DIR": str(tmp_path / "bin"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "PATH": f"{tmp_path / 'bin'}{os.pathsep}{env.get('PATH', '')}",
    }


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str]]:
    """A clean clone of this repository installed with `uv tool install .`: (the clone, bin dir, env)."""
    if shutil.which("uv") is None or shutil.which("git") is None:
        pytest.skip("needs uv and git")
    tmp_path = tmp_path_factory.mktemp("install")
    clone = tmp_path / "sagent"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, timeout=120)
    env = clean_env(tmp_path)
    done = subprocess.run(
        ["uv", "tool", "install", "."], cwd=clone, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    return clone, tmp_path / "bin", env


def test_the_installed_command_runs_from_its_bin_folder(installed: tuple[Path, Path, dict[str, str]]) -> None:
    clone, bin_dir, env = installed
    elsewhere = clone.parent / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    version = subprocess.run(
        [str(bin_dir / "sagent"), "--version"], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=60
    )
    assert version.returncode == 0 and version.stdout.startswith("sagent "), version.stderr
    helped = subprocess.run(["sagent", "--help"], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=60)
    assert helped.returncode == 0 and "sagent models" in helped.stdout
    assert shutil.which("sagent", path=env["PATH"]) == str(bin_dir / "sagent")


def test_the_readme_update_rebuilds_from_the_clone(installed: tuple[Path, Path, dict[str, str]]) -> None:
    """After a change in the clone (a `git pull`), `uv tool upgrade --reinstall sagent` installs it."""
    clone, bin_dir, env = installed
    init = clone / "sagent" / "__init__.py"
    original = init.read_text()
    init.write_text(re.sub(r'^__version__ = ".*"$', '__version__ = "9.9.9+pulled"', original, count=1, flags=re.M))
    try:
        done = subprocess.run(
            ["uv", "tool", "upgrade", "--reinstall", "sagent"], env=env, capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, done.stderr
        version = subprocess.run([str(bin_dir / "sagent"), "--version"], env=env, capture_output=True, text=True)
        assert version.stdout.startswith("sagent 9.9.9+pulled"), version.stdout
    finally:
        init.write_text(original)


def test_the_hint_for_the_local_extra_installs_this_clone(installed: tuple[Path, Path, dict[str, str]]) -> None:
    """Installed without the local extra and with no key set, a task says how to add the extra to this
    very install: uv tool install with the clone's folder, not `pip install sagent[local]`."""
    clone, bin_dir, env = installed
    done = subprocess.run(
        [str(bin_dir / "sagent"), "--provider", "local", "-p", "hello"],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert done.returncode == 2
    assert f"uv tool install '{clone}[local]'" in done.stderr, done.stderr
    assert "pip install 'sagent[" not in done.stderr and "pip install sagent" not in done.stderr


def test_a_checkout_hint_names_uv_run_with_the_extra() -> None:
    """This test process runs from the checkout (an editable install)."""
    folder, editable = install.source_folder()
    if not editable:
        pytest.skip("sagent is not installed editable from a checkout here")
    assert folder == ROOT
    assert "uv run --extra local sagent" in install.extra_hint("local")


def test_every_install_hint_in_the_code_names_this_project() -> None:
    """No hint anywhere in sagent tells a user to install `sagent` from PyPI."""
    offenders = []
    for path in (ROOT / "sagent").rglob("*.py"):
        for line in path.read_text().splitlines():
            if "another project" in line:
                continue  # the warning against it
            for wrong in ("pip install 'sagent", 'pip install "sagent', "pip install sagent", "uv add sagent"):
                if wrong in line:
                    offenders.append(f"{path.relative_to(ROOT)}: {line.strip()}")
    assert offenders == []


def test_the_readme_opens_with_the_install() -> None:
    readme = (ROOT / "README.md").read_text()
    install_section = readme[: readme.index("## Quick start")]
    assert "uv tool install ." in install_section
    assert "pipx install ." in install_section and "pip install ." in install_section
    assert "another project" in install_section


@pytest.mark.parametrize(
    "marker, editable, expected",
    [
        ("uv-receipt.toml", False, "uv tool install '/src/sagent[local]'"),
        ("pipx_metadata.json", False, "pipx install --force '/src/sagent[local]'"),
        ("pyvenv.cfg", False, "-m pip install '/src/sagent[local]'"),
        (None, True, "in the checkout /src/sagent: uv run --extra local sagent ..."),
    ],
)
def test_each_way_of_installing_gets_its_own_command(
    marker: str | None, editable: bool, expected: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if marker:
        (tmp_path / marker).write_text("home = /usr/bin\n")
    monkeypatch.setattr(install.sys, "prefix", str(tmp_path))
    monkeypatch.setattr(install, "source_folder", lambda: (Path("/src/sagent"), editable))
    assert expected in install.extra_hint("local")


def test_a_venv_made_by_uv_gets_uv_pip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyvenv.cfg").write_text("home = /usr/bin\nuv = 0.13.9\n")
    monkeypatch.setattr(install.sys, "prefix", str(tmp_path))
    monkeypatch.setattr(install, "source_folder", lambda: (Path("/src/sagent"), False))
    assert install.extra_hint("selfhosted").startswith("uv pip install --python ")
    assert install.extra_hint("selfhosted").endswith("'/src/sagent[selfhosted]'")


def test_an_install_with_no_recorded_folder_points_at_a_clone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(install.sys, "prefix", str(tmp_path))
    monkeypatch.setattr(install, "source_folder", lambda: (None, False))
    hint = install.extra_hint("local")
    assert "uv tool install '.[local]'" in hint and "another project" in hint


def test_a_uv_tool_keeps_the_extras_it_has(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "uv-receipt.toml").write_text(
        '[tool]\nrequirements = [{ name = "sagent", extras = ["selfhosted"], directory = "/src/sagent" }]\n'
    )
    monkeypatch.setattr(install.sys, "prefix", str(tmp_path))
    monkeypatch.setattr(install, "source_folder", lambda: (Path("/src/sagent"), False))
    assert install.extra_hint("local") == "uv tool install '/src/sagent[local,selfhosted]'"
