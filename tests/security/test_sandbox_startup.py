"""Where the sandbox cannot start, a run says so in one line and goes on without it; `sandbox.required`
turns that into an error with a non-zero exit. `--sandbox` and the `sandbox` settings key are checked like
any flag and key. A headless run shows the sandbox in its stream-json `init` record."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response
from tests.security.sandbox_support import needs_sandbox

TIMEOUT = 120


def run(
    tmp_path: Path,
    *args: str,
    bwrap: str | None = None,
    settings: dict[str, object] | None = None,
    steps: list[object] | None = None,
) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "config"
    (config / "sagent").mkdir(parents=True, exist_ok=True)
    if settings is not None:
        (config / "sagent" / "settings.json").write_text(json.dumps(settings))
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    with FakeAnthropic(
        steps or [tool_use_response([("Bash", {"command": "echo ran:$SAGENT_SANDBOX: > out"})]), text_response("done")]
    ) as fake:
        env = {
            **os.environ,
            "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests-0001",
            "ANTHROPIC_BASE_URL": fake.url,
            "XDG_DATA_HOME": str(tmp_path / "data"),
            "XDG_CONFIG_HOME": str(config),
        }
        env.pop("SAGENT_BWRAP", None)
        if bwrap is not None:
            env["SAGENT_BWRAP"] = bwrap
        return subprocess.run(
            [sys.executable, "-m", "sagent.cli.main", "-p", "go", "--cwd", str(work), *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )


def test_without_bubblewrap_one_line_says_so_and_commands_run_without_it(tmp_path: Path) -> None:
    done = run(tmp_path, bwrap=str(tmp_path / "no-such-bwrap"))
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if "sandbox" in line]
    assert len(said) == 1, done.stderr
    assert "the sandbox cannot start" in said[0] and "no-such-bwrap" in said[0]
    assert (tmp_path / "work" / "out").read_text() == "ran::\n"  # it ran, unsandboxed


@pytest.mark.parametrize("how", ["settings", "settings and flag"])
def test_required_without_bubblewrap_is_an_error_and_runs_nothing(tmp_path: Path, how: str) -> None:
    flags = ("--sandbox", "workspace-write") if how == "settings and flag" else ()
    done = run(tmp_path, *flags, bwrap=str(tmp_path / "no-such-bwrap"), settings={"sandbox": {"required": True}})
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert "the sandbox is required" in done.stderr and "no-such-bwrap" in done.stderr
    assert not (tmp_path / "work" / "out").exists()


def test_a_run_without_bash_does_not_mention_the_sandbox(tmp_path: Path) -> None:
    done = run(
        tmp_path,
        "--tools",
        "Read",
        bwrap=str(tmp_path / "no-such-bwrap"),
        settings={"sandbox": {"required": True}},
        steps=[text_response("done")],
    )
    assert done.returncode == 0 and "sandbox" not in done.stderr, done.stderr


def test_danger_full_access_needs_no_sandbox(tmp_path: Path) -> None:
    done = run(
        tmp_path,
        "--sandbox",
        "danger-full-access",
        bwrap=str(tmp_path / "no-such-bwrap"),
        settings={"sandbox": {"required": True}},
    )
    assert done.returncode == 0 and "sandbox" not in done.stderr, done.stderr
    assert (tmp_path / "work" / "out").read_text() == "ran::\n"


@pytest.mark.parametrize(
    ("settings", "flags", "said"),
    [
        (None, ("--sandbox", "full"), "--sandbox: invalid choice"),
        ({"sandbox": {"mode": "none"}}, (), 'key "sandbox.mode"'),
        ({"sandbox": {"network": "yes"}}, (), 'key "sandbox.network": must be true or false'),
        ({"sandbox": {"allowedDomains": "pypi.org"}}, (), 'key "sandbox.allowedDomains"'),
        ({"sandbox": {"allowedDomains": ["py pi.org"]}}, (), "is not a domain"),
        ({"sandbox": {"writableRoots": ["/no/such/folder"]}}, (), "is not a folder"),
        ({"sandbox": {"denyReed": []}}, (), 'key "sandbox.denyReed": unknown member'),
        ({"sandbox": ["workspace-write"]}, (), 'key "sandbox": must be an object'),
    ],
)
def test_bad_sandbox_settings_are_refused_naming_the_key(
    tmp_path: Path, settings: dict[str, object] | None, flags: tuple[str, ...], said: str
) -> None:
    done = run(tmp_path, *flags, settings=settings)
    assert done.returncode == 2, done.stderr
    assert said in done.stderr, done.stderr
    if settings is not None:
        assert str(tmp_path / "config" / "sagent" / "settings.json") in done.stderr


@needs_sandbox
def test_the_init_record_shows_the_sandbox(tmp_path: Path) -> None:
    done = run(tmp_path, "--output-format", "stream-json", settings={"sandbox": {"allowedDomains": ["pypi.org"]}})
    assert done.returncode == 0, done.stderr
    init = json.loads(done.stdout.splitlines()[0])
    assert init["subtype"] == "init"
    sandbox = init["sandbox"]
    assert sandbox["mode"] == "workspace-write" and sandbox["active"] is True
    assert str(tmp_path / "work") in sandbox["writableRoots"] and "/tmp" in sandbox["writableRoots"]
    assert sandbox["allowedDomains"] == ["pypi.org"] and sandbox["network"] is False
    assert (tmp_path / "work" / "out").read_text() == "ran:workspace-write:\n"
