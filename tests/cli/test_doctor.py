"""`sagent doctor` as a user runs it: each check says what it found and how to fix a problem, keys are named
and never shown, and the exit code says whether sagent can work (0) or not (1)."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from sagent.cli.doctor import Check, lines_of, passed, run_checks

SECRET = "sk-ant-doctor-secret-0123456789"


def doctor(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sagent.cli.main", "doctor", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
    )


def program(folder: Path, name: str, body: str) -> Path:
    """An executable shell script called `name` in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def bare_env(tmp_path: Path) -> dict[str, str]:
    """An environment with no provider key, no local model, no subscription CLI, and sagent's own tools on
    PATH (the folder of this Python, as an install puts them)."""
    env = {k: v for k, v in os.environ.items() if k not in ("SAGENT_NATS_URL", "LLAMA_CPP_SERVER", "LLAMA_CPP_MODEL")}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"])
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    return env


def by_name(checks: list[Check]) -> dict[str, Check]:
    return {c.name: c for c in checks}


@pytest.fixture
def nats_like() -> Iterator[int]:
    """A server on 127.0.0.1 that greets as a NATS server does (`INFO {...}`); its port."""
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.sendall(b'INFO {"server_id":"test","version":"2.10.0"}\r\n')

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield port
    server.close()


def test_with_a_key_it_passes_names_the_key_and_never_shows_it(bare_env: dict[str, str], tmp_path: Path) -> None:
    done = doctor(env={**bare_env, "ANTHROPIC_API_KEY": SECRET}, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert SECRET not in done.stdout + done.stderr
    lines = done.stdout.splitlines()
    keys = next(line for line in lines if "API keys" in line)
    assert keys.startswith("✓") and "ANTHROPIC_API_KEY" in keys
    model = next(line for line in lines if "a model" in line)
    assert model.startswith("✓") and "anthropic" in model
    assert lines[-1].startswith("ready")


def test_with_nothing_to_run_on_it_fails_and_says_how_to_fix_it(bare_env: dict[str, str], tmp_path: Path) -> None:
    no_local_model = {**bare_env, "LLAMA_CPP_MODEL": str(tmp_path / "missing.gguf")}  # with or without the extra
    done = doctor(env=no_local_model, cwd=tmp_path)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    index = next(i for i, line in enumerate(lines) if "a model" in line)
    assert lines[index].startswith("✗")
    assert "fix:" in lines[index + 1] and "ANTHROPIC_API_KEY" in lines[index + 1]
    assert "problem to fix" in lines[-1]


def test_json_lists_every_check_with_status_and_fix(bare_env: dict[str, str], tmp_path: Path) -> None:
    done = doctor("--json", env={**bare_env, "OPENAI_API_KEY": SECRET}, cwd=tmp_path)
    assert done.returncode == 0
    report = json.loads(done.stdout)
    assert report["ok"] is True
    names = [c["name"] for c in report["checks"]]
    for wanted in ("install", "command", "settings", "API keys", "claude CLI", "codex CLI", "gemini CLI"):
        assert wanted in names
    for wanted in ("sandbox", "ripgrep", "NATS", "local model", "a model"):
        assert wanted in names
    assert all(set(c) == {"name", "status", "detail", "fix"} for c in report["checks"])
    assert SECRET not in done.stdout


def test_help_and_bad_usage(bare_env: dict[str, str], tmp_path: Path) -> None:
    done = doctor("--help", env=bare_env, cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.startswith("usage: sagent doctor")
    done = doctor("--frobnicate", env=bare_env, cwd=tmp_path)
    assert done.returncode == 2 and "unknown argument '--frobnicate'" in done.stderr
    done = doctor("--cwd", str(tmp_path / "missing"), env=bare_env, cwd=tmp_path)
    assert done.returncode == 2 and "not a folder" in done.stderr


def test_sagent_help_lists_doctor() -> None:
    done = subprocess.run([sys.executable, "-m", "sagent.cli.main", "--help"], capture_output=True, text=True)
    assert any(line.strip().startswith("sagent doctor") for line in done.stdout.splitlines())


def test_a_settings_file_it_refuses_fails_naming_the_file(bare_env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".sagent").mkdir()
    bad = tmp_path / ".sagent" / "settings.json"
    bad.write_text("{not json")
    done = doctor("--cwd", str(tmp_path), env={**bare_env, "ANTHROPIC_API_KEY": SECRET}, cwd=tmp_path)
    assert done.returncode == 1
    line = next(line for line in done.stdout.splitlines() if "settings" in line and "✗" in line)
    assert str(bad) in line and "not valid JSON" in line


def test_subscription_clis_on_path_are_found_with_their_versions(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    bin_dir = tmp_path / "bin"
    program(bin_dir, "claude", 'echo "2.1.0 (Claude Code)"')
    program(bin_dir, "codex", 'echo "codex broke" >&2; exit 3')
    monkeypatch.setenv("PATH", os.pathsep.join([str(bin_dir), "/usr/bin", "/bin"]))
    checks = by_name(run_checks(tmp_path))
    claude = checks["claude CLI"]
    assert claude.status == "ok" and "2.1.0 (Claude Code)" in claude.detail and str(bin_dir / "claude") in claude.detail
    codex = checks["codex CLI"]
    assert codex.status == "warn" and "exited 3" in codex.detail and "codex broke" in codex.detail and codex.fix
    gemini = checks["gemini CLI"]
    assert gemini.status == "info" and "not installed" in gemini.detail and "npm install" in gemini.fix
    # No key and no local model, but a subscription CLI: a model to run on, with a flag or a setting.
    if checks["local model"].status != "ok":
        model = checks["a model"]
        assert model.status == "warn" and "--provider anthropic-cli" in model.detail
        assert '"provider": "anthropic-cli"' in model.fix


def user_settings(data: dict) -> Path:
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "sagent" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def test_the_provider_the_settings_choose_needs_its_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    user_settings({"provider": "openai"})
    model = by_name(run_checks(tmp_path))["a model"]
    assert model.status == "fail" and "openai needs OPENAI_API_KEY" in model.detail
    assert model.fix == "export OPENAI_API_KEY=..."

    user_settings({"model": "no-such-model-family"})
    model = by_name(run_checks(tmp_path))["a model"]
    assert model.status == "fail" and "cannot tell the provider" in model.detail


def test_a_key_a_settings_file_sets_counts_and_is_named_as_such(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    user_settings({"env": {"GEMINI_API_KEY": SECRET}})
    checks = by_name(run_checks(tmp_path))
    assert "GEMINI_API_KEY (a settings file's env)" in checks["API keys"].detail
    assert checks["a model"].status == "ok" and "google" in checks["a model"].detail
    assert all(SECRET not in c.detail + c.fix for c in checks.values())


def test_a_configured_nats_server_is_connected_to(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, nats_like: int
) -> None:
    monkeypatch.setenv("SAGENT_NATS_URL", f"nats://127.0.0.1:{nats_like}")
    nats = by_name(run_checks(tmp_path))["NATS"]
    assert nats.status == "ok" and f"127.0.0.1:{nats_like}" in nats.detail


def test_a_configured_nats_server_that_is_down_fails_with_a_fix(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
    monkeypatch.setenv("SAGENT_NATS_URL", f"nats://127.0.0.1:{port}")
    checks = run_checks(tmp_path)
    nats = by_name(checks)["NATS"]
    assert nats.status == "fail" and "cannot be reached" in nats.detail and "nats-server" in nats.fix
    assert not passed(checks)


def test_nats_not_configured_is_no_problem(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("SAGENT_NATS_URL", raising=False)
    assert by_name(run_checks(tmp_path))["NATS"].status == "info"


def test_a_sandbox_that_cannot_start_warns_and_fails_where_settings_require_it(
    bare_env: dict[str, str], tmp_path: Path
) -> None:
    env = {**bare_env, "ANTHROPIC_API_KEY": SECRET, "SAGENT_BWRAP": str(tmp_path / "no-bwrap")}
    done = doctor("--json", env=env, cwd=tmp_path)
    sandbox = next(c for c in json.loads(done.stdout)["checks"] if c["name"] == "sandbox")
    assert done.returncode == 0 and sandbox["status"] == "warn"
    assert "run without a sandbox" in sandbox["detail"] and sandbox["fix"]

    config = Path(env.get("XDG_CONFIG_HOME", tmp_path / "cfg"))
    env["XDG_CONFIG_HOME"] = str(config)
    (config / "sagent").mkdir(parents=True, exist_ok=True)
    (config / "sagent" / "settings.json").write_text('{"sandbox": {"required": true}}')
    done = doctor("--json", env=env, cwd=tmp_path)
    sandbox = next(c for c in json.loads(done.stdout)["checks"] if c["name"] == "sandbox")
    assert done.returncode == 1 and sandbox["status"] == "fail"


def test_ripgrep_missing_is_a_warning_with_the_install_command(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    rg = by_name(run_checks(tmp_path))["ripgrep"]
    assert rg.status == "warn" and "install ripgrep" in rg.fix


def test_the_local_model_check_names_what_is_missing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LLAMA_CPP_MODEL", str(tmp_path / "missing.gguf"))
    local = by_name(run_checks(tmp_path))["local model"]
    assert local.status == "warn" and "missing.gguf" in local.detail and "local" in local.fix


def test_lines_show_a_fix_only_under_a_problem() -> None:
    checks = [
        Check("one", "ok", "fine", "never shown"),
        Check("two", "fail", "broken", "do this"),
        Check("three", "info", "absent", "optional"),
    ]
    lines = lines_of(checks)
    assert lines[0].startswith("✓ one") and lines[1].startswith("✗ two") and "fix: do this" in lines[2]
    assert not any("never shown" in line or "optional" in line for line in lines)
    assert lines[-1] == "1 problem to fix"


def test_a_sagent_on_path_that_is_another_program_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    program(bin_dir, "sagent", 'echo "usage: sagent [options] (an agent framework)"')
    monkeypatch.setenv("PATH", os.pathsep.join([str(bin_dir), "/usr/bin", "/bin"]))
    command = by_name(run_checks(tmp_path))["command"]
    assert command.status == "warn" and "is not this program" in command.detail
    assert "uv tool install --force" in command.fix and "PyPI's `sagent` is another project" in command.fix

    program(bin_dir, "sagent", 'echo "sagent 0.0.1"')
    command = by_name(run_checks(tmp_path))["command"]
    assert command.status == "warn" and "another install of it: sagent 0.0.1" in command.detail

    (bin_dir / "sagent").unlink()
    command = by_name(run_checks(tmp_path))["command"]
    assert command.status == "warn" and command.detail == "`sagent` is not on PATH" and "uv tool install" in command.fix
