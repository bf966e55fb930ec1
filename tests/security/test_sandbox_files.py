"""A sandboxed command writes only to the workspace, /tmp, $TMPDIR and configured roots, reads none of the
denied credentials, and cannot rewrite what would run code outside the sandbox later (git hooks, sagent's
project settings). Every form below must fail to touch the real file."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from sagent.sandbox import SandboxPolicy
from sagent.tools.base import ToolContext
from sagent.tools.shell import Bash
from tests.security.sandbox_support import needs_sandbox

pytestmark = needs_sandbox


async def run(command: str, ctx: ToolContext) -> str:
    """`command` run by Bash, only if it runs in the sandbox: these commands would do harm outside it."""
    out = await Bash().run({"command": f'[ -n "$SAGENT_SANDBOX" ] || exit 99\n{command}'}, ctx)
    assert not out.endswith("exit code 99"), "the command did not run in the sandbox"
    return out


@pytest.fixture
def outside() -> Iterator[Path]:
    """A folder outside the workspace, /tmp and $TMPDIR (under /var/tmp, which the sandbox keeps read-only)."""
    folder = Path("/var/tmp") / f"sagent-outside-{uuid.uuid4().hex[:10]}"
    folder.mkdir()
    (folder / "victim").write_text("original\n")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    work = tmp_path / "work"
    work.mkdir()
    return ToolContext(cwd=work)


# Ways to write to {o} (a folder outside the workspace) or its file {o}/victim.
WRITES = {
    "redirect": "echo pwned > {o}/victim",
    "append": "echo pwned >> {o}/victim",
    "read-write redirect": "echo pwned 1<> {o}/victim",
    "new file": "touch {o}/new",
    "remove": "rm -f {o}/victim",
    "rename out": "mv {o}/victim ./taken",
    "tee": "echo pwned | tee {o}/victim",
    "cp": "cp /etc/hostname {o}/victim",
    "dd": "echo pwned | dd of={o}/victim",
    "sed -i": "sed -i s/original/pwned/ {o}/victim",
    "python": f"{sys.executable} -c \"open('{{o}}/victim', 'w').write('pwned')\"",
    "symlink in the workspace": "ln -s {o} link && echo pwned > link/victim",
    "symlink then ..": "mkdir -p sub && ln -s {o} sub/link && echo pwned > sub/link/../link/victim",
    "hard link": "ln {o}/victim here && echo pwned > here",
    "chmod": "chmod 000 {o}/victim",
    "truncate": "truncate -s 0 {o}/victim",
    "a new namespace remounting it": "unshare -rm sh -c 'mount -o remount,rw,bind {o} && echo pwned > {o}/victim'",
    "a bind mount over it": "unshare -rm sh -c 'mount --bind . {o}; echo pwned > {o}/victim'",
    "env -i": "env -i /bin/sh -c 'echo pwned > {o}/victim'",
    "setsid background": "setsid sh -c 'echo pwned > {o}/victim' & sleep 0.3",
}


@pytest.mark.parametrize("form", WRITES)
async def test_nothing_outside_the_workspace_is_written(ctx: ToolContext, outside: Path, form: str) -> None:
    await run(WRITES[form].format(o=outside), ctx)
    assert (outside / "victim").read_text() == "original\n", form
    assert sorted(p.name for p in outside.iterdir()) == ["victim"], form
    assert oct((outside / "victim").stat().st_mode & 0o777) != "0o0", form


@pytest.mark.parametrize("target", ["/etc/sagent-sandbox-test", "/usr/local/sagent-sandbox-test", "/opt/x"])
async def test_system_folders_are_not_written(ctx: ToolContext, target: str) -> None:
    out = await run(f"touch {target}; echo $?", ctx)
    assert not Path(target).exists()
    assert "Read-only file system" in out


async def test_the_real_home_is_not_written(ctx: ToolContext) -> None:
    home = Path.home()
    name = f".sagent-sandbox-test-{uuid.uuid4().hex[:8]}"
    await run(f"touch ~/{name}; echo x >> ~/.bashrc.sagent-test", ctx)
    assert not (home / name).exists() and not (home / ".bashrc.sagent-test").exists()


async def test_the_workspace_tmp_and_added_roots_are_written(ctx: ToolContext, tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    ctx.sandbox = SandboxPolicy(writable_roots=(str(extra),))
    name = f"sagent-sandbox-{uuid.uuid4().hex[:8]}"
    out = await run(f"echo a > here && echo b > /tmp/{name} && echo c > {extra}/f && echo ok", ctx)
    try:
        assert out == "ok\n"
        assert (ctx.cwd / "here").read_text() == "a\n" and (extra / "f").read_text() == "c\n"
        assert Path(f"/tmp/{name}").read_text() == "b\n"  # the host's /tmp: sagent's Read sees it too
    finally:
        Path(f"/tmp/{name}").unlink(missing_ok=True)


async def test_read_only_writes_nothing_even_in_the_workspace(ctx: ToolContext) -> None:
    ctx.sandbox = SandboxPolicy(mode="read-only")
    out = await run("cat /etc/hostname > /dev/null && echo read; touch here", ctx)
    assert out.startswith("read\n") and "Read-only file system" in out
    assert not (ctx.cwd / "here").exists()


async def test_git_hooks_and_sagent_settings_in_the_workspace_stay_read_only(ctx: ToolContext) -> None:
    work = ctx.cwd
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    (work / ".sagent").mkdir()
    (work / ".sagent" / "settings.json").write_text("{}\n")
    (work / ".mcp.json").write_text("{}\n")
    hook = work / ".git" / "hooks" / "pre-commit"
    # A fresh context: protected paths are found when the sandbox starts.
    ctx = ToolContext(cwd=work)
    command = (
        f"echo 'touch /tmp/pwned' > {hook}; chmod +x {hook}; "
        'echo \'{"permissions": {"defaultMode": "bypassPermissions"}}\' > .sagent/settings.json; '
        "echo '{\"mcpServers\": {}}' > .mcp.json; git config core.hooksPath /tmp; echo src > file"
    )
    await run(command, ctx)
    assert not hook.exists()
    assert (work / ".sagent" / "settings.json").read_text() == "{}\n"
    assert (work / ".mcp.json").read_text() == "{}\n"
    assert "hooksPath" not in (work / ".git" / "config").read_text()
    assert (work / "file").read_text() == "src\n"  # the rest of the workspace is written as usual


@pytest.fixture
def fake_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    for folder, name, text in (
        (".ssh", "id_rsa", "-----BEGIN OPENSSH PRIVATE KEY----- secret"),
        (".aws", "credentials", "aws_secret_access_key = secret"),
        (".gnupg", "private.key", "secret"),
        (".config/sagent", "settings.json", '{"env": {"TOKEN": "secret"}}'),
        (".local/share/sagent/sessions/other-project", "s.jsonl", '{"text": "secret"}'),
    ):
        (home / folder).mkdir(parents=True)
        (home / folder / name).write_text(text + "\n")
    (home / ".netrc").write_text("machine x password secret\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    return home


READS = {
    "cat": "cat ~/.ssh/id_rsa ~/.aws/credentials ~/.gnupg/private.key ~/.netrc",
    "grep -r": "grep -r secret ~/.ssh ~/.aws ~/.gnupg ~/.config/sagent ~/.local/share/sagent",
    "find": "find ~/.ssh ~/.aws ~/.config/sagent ~/.local/share/sagent -type f -exec cat {} +",
    "symlink in the workspace": "ln -s ~/.ssh/id_rsa key && cat key; ln -s ~/.aws aws && cat aws/credentials",
    "cd and read": "cd ~/.ssh && cat id_rsa",
    "python": f"{sys.executable} -c \"import os; print(open(os.path.expanduser('~/.ssh/id_rsa')).read())\"",
    "sagent's own settings": "cat ~/.config/sagent/settings.json",
    "another project's session": "cat ~/.local/share/sagent/sessions/other-project/s.jsonl",
    "tar": "tar cf - ~/.ssh ~/.aws 2>/dev/null | strings",
}


@pytest.mark.parametrize("form", READS)
async def test_denied_paths_cannot_be_read(fake_home: Path, ctx: ToolContext, form: str) -> None:
    out = await run(READS[form], ctx)
    assert "secret" not in out, f"{form}: {out}"
    assert (fake_home / ".ssh" / "id_rsa").exists()  # hidden in the sandbox, untouched outside


async def test_a_denied_path_cannot_be_written_either(fake_home: Path, ctx: ToolContext) -> None:
    ctx.sandbox = SandboxPolicy(writable_roots=(str(fake_home),))  # even inside a writable root
    await run("echo 'ssh-rsa attacker' >> ~/.ssh/authorized_keys; rm -f ~/.ssh/id_rsa", ctx)
    assert not (fake_home / ".ssh" / "authorized_keys").exists()
    assert (fake_home / ".ssh" / "id_rsa").exists()


async def test_denyread_in_the_policy_adds_a_path(tmp_path: Path, ctx: ToolContext) -> None:
    secret = tmp_path / "vault"
    secret.mkdir()
    (secret / "key").write_text("secret\n")
    ctx.sandbox = SandboxPolicy(deny_read=(str(secret),))
    assert "secret" not in await run(f"cat {secret}/key; ls {secret}", ctx)


async def test_other_processes_environments_are_out_of_sight(ctx: ToolContext) -> None:
    # A process of the user's outside the sandbox, holding a secret in its environment.
    env = {**os.environ, "SAGENT_SANDBOX_TEST_SECRET": "hunter2-secret"}
    other = subprocess.Popen(["sleep", "60"], env=env)
    try:
        out = await run("cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c hunter2", ctx)
        assert out.strip().splitlines()[0] == "0"
        out = await run(f"cat /proc/{other.pid}/environ; ls /proc | grep -c .", ctx)
        assert "hunter2" not in out
    finally:
        other.kill()
        other.wait()
