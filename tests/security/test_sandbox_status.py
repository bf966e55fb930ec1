"""The REPL's /permissions shows the sandbox beside the rules: its mode, what commands may write, the
network, and whether it runs here at all; its `!command` runs in the same sandbox as the Bash tool."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from sagent.agent.agent import Agent
from sagent.permissions.policy import PermissionHook, Permissions
from sagent.providers.scripted import ScriptedModel
from sagent.repl.app import Repl
from sagent.repl.commands import run_command
from sagent.repl.render import Settings
from sagent.sandbox import SandboxPolicy
from tests.security.sandbox_support import needs_sandbox


def permissions_output(tmp_path: Path, capsys: pytest.CaptureFixture[str], sandbox: SandboxPolicy) -> str:
    extra = tmp_path / "shared"
    extra.mkdir()
    agent = Agent(
        ScriptedModel([]),
        cwd=tmp_path,
        permissions=Permissions.build(cwd=tmp_path, add_dirs=[extra]),
        hooks=[PermissionHook()],
        sandbox=sandbox,
    )
    repl = Repl(agent, new_agent=lambda path=None: agent, settings=Settings(width=200, color=False))
    try:
        asyncio.run(run_command(repl, "/permissions"))
    finally:
        asyncio.run(agent.aclose())
    return capsys.readouterr().out


def test_permissions_shows_the_sandbox_mode_and_writable_roots(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SAGENT_BWRAP", raising=False)
    out = permissions_output(tmp_path, capsys, SandboxPolicy(allowed_domains=("pypi.org",)))
    assert "sandbox: workspace-write" in out
    writable = next(line for line in out.splitlines() if "writable:" in line)
    assert str(tmp_path) in writable and str(tmp_path / "shared") in writable and "/tmp" in writable
    assert "network: only pypi.org" in out and "~/.ssh" in out


def test_permissions_says_when_the_sandbox_is_not_active(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SAGENT_BWRAP", str(tmp_path / "no-such-bwrap"))
    out = permissions_output(tmp_path, capsys, SandboxPolicy())
    assert "NOT ACTIVE" in out and "no-such-bwrap" in out
    later = tmp_path / "later"
    later.mkdir()
    off = permissions_output(later, capsys, SandboxPolicy(mode="danger-full-access"))
    assert "sandbox: danger-full-access" in off


@needs_sandbox
def test_the_repls_bang_command_runs_in_the_same_sandbox(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from sagent.repl import shell_mode

    target = Path("/var/tmp") / f"sagent-bang-{tmp_path.name}"
    agent = Agent(ScriptedModel([]), cwd=tmp_path)
    repl = Repl(agent, new_agent=lambda path=None: agent, settings=Settings(width=200, color=False))

    async def bang() -> None:
        shell_mode.start(repl, f"echo in:$SAGENT_SANDBOX; touch {target}; touch here")
        assert repl.state.shell is not None
        await repl.state.shell

    try:
        asyncio.run(bang())
        out = capsys.readouterr().out
        assert "in:workspace-write" in out and "Read-only file system" in out
        assert not target.exists() and (tmp_path / "here").exists()
    finally:
        target.unlink(missing_ok=True)
        asyncio.run(agent.aclose())


def test_each_missing_bwrap_is_named_even_after_another_was_looked_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Why the sandbox cannot start is kept per process; a second binary asked for, also missing, is named
    as itself, not as the first one (nor as bwrap missing from PATH)."""
    from sagent.sandbox.bwrap import unavailable

    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on PATH
    monkeypatch.delenv("SAGENT_BWRAP", raising=False)
    assert "not installed" in (unavailable() or "")
    monkeypatch.setenv("SAGENT_BWRAP", str(tmp_path / "first-bwrap"))
    assert "first-bwrap" in (unavailable() or "")
    monkeypatch.setenv("SAGENT_BWRAP", str(tmp_path / "no-such-bwrap"))
    out = permissions_output(tmp_path, capsys, SandboxPolicy())
    assert "NOT ACTIVE" in out and "no-such-bwrap" in out
