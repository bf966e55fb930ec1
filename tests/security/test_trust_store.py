"""The trust store attacked: what counts as a trusted folder (real paths, subfolders, look-alike names), who
may write the list (another user, a world-writable file, a symlink, a relative XDG_CONFIG_HOME pointing
into the project, a project's own `env`), and `sagent trust`'s own command line."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from sagent.cli import trust as store


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    return home


def sagent(*args: str, cwd: Path, config: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CONFIG_HOME": str(config), "XDG_DATA_HOME": str(config.parent / "data"), **extra}
    return subprocess.run(
        [sys.executable, "-m", "sagent.cli.main", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )


def project(folder: Path, settings: dict | None = None) -> Path:
    """A project folder (with .git) whose .sagent/settings.json says `settings` (a loosening one by default)."""
    (folder / ".git").mkdir(parents=True, exist_ok=True)
    (folder / ".sagent").mkdir(exist_ok=True)
    data = {"permissions": {"allow": ["Bash"]}} if settings is None else settings
    (folder / ".sagent" / "settings.json").write_text(json.dumps(data))
    return folder


def test_a_folder_is_kept_by_real_path_and_covers_its_subfolders_only(tmp_path: Path, config: Path) -> None:
    real = tmp_path / "src" / "app"
    (real / "sub" / "deeper").mkdir(parents=True)
    (tmp_path / "app-evil").mkdir()
    (tmp_path / "src" / "app2").mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    path, added = store.trust(link)
    assert added and path == real.resolve()
    assert json.loads(store.trust_file().read_text()) == {"folders": [str(real.resolve())]}
    assert store.trust(real) == (real.resolve(), False)  # already there, by its real path
    for inside in (real, real / "sub" / "deeper", link / "sub", real / "sub" / ".." / "sub"):
        assert store.is_trusted(inside), inside
    for outside in (tmp_path / "src", tmp_path / "src" / "app2", tmp_path / "app-evil", real / "..", Path("/")):
        assert not store.is_trusted(outside), outside
    other = tmp_path / "elsewhere"
    other.mkdir()
    (real / "sub" / "escape").symlink_to(other)  # a link inside the trusted folder to one outside it
    assert not store.is_trusted(real / "sub" / "escape")


def test_the_file_is_0600_written_whole_and_revoke_takes_the_folder_out(tmp_path: Path, config: Path) -> None:
    for name in ("a", "b", "c"):
        (tmp_path / name).mkdir()
        store.trust(tmp_path / name)
    mode = stat.S_IMODE(store.trust_file().stat().st_mode)
    assert mode == 0o600
    assert stat.S_IMODE(store.trust_file().parent.stat().st_mode) & 0o077 == 0
    assert [p.name for p in store.trusted_folders()] == ["a", "b", "c"]
    assert store.revoke(tmp_path / "b") and not store.revoke(tmp_path / "b")
    assert [p.name for p in store.trusted_folders()] == ["a", "c"]
    leftovers = [p.name for p in store.trust_file().parent.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []


def test_a_folder_deleted_after_it_was_trusted_can_still_be_revoked(tmp_path: Path, config: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    store.trust(gone)
    gone.rmdir()
    assert store.revoke(gone) and store.trusted_folders() == []


@pytest.mark.parametrize(
    "spoil",
    [
        pytest.param(lambda f: f.chmod(0o666), id="world-writable"),
        pytest.param(lambda f: f.chmod(0o620), id="group-writable"),
        pytest.param(lambda f: f.write_text("not json"), id="not-json"),
        pytest.param(lambda f: f.write_text('["/"]'), id="not-an-object"),
        pytest.param(lambda f: f.write_text('{"folders": "/"}'), id="folders-not-a-list"),
    ],
)
def test_a_trust_file_that_cannot_be_believed_trusts_nothing(tmp_path: Path, config: Path, spoil: object) -> None:
    (tmp_path / "repo").mkdir()
    store.trust(tmp_path / "repo")
    spoil(store.trust_file())  # type: ignore[operator]
    problems: list[str] = []
    assert store.trusted_folders(problems) == [] and len(problems) == 1, problems
    assert not store.is_trusted(tmp_path / "repo")
    with pytest.raises(store.TrustError):  # nor is it overwritten as if it were empty
        store.trust(tmp_path / "repo")
    project(tmp_path / "repo")
    out = sagent("config", cwd=tmp_path / "repo", config=config)
    assert "trusted-folders.json" in out.stderr and "no folder is trusted" in out.stderr, out.stderr


def test_a_trust_file_that_is_a_symlink_or_owned_by_someone_else_trusts_nothing(tmp_path: Path, config: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    planted = tmp_path / "planted.json"
    planted.write_text(json.dumps({"folders": [str(repo.resolve())]}))
    planted.chmod(0o600)
    store.trust_file().parent.mkdir(parents=True)
    store.trust_file().symlink_to(planted)
    assert not store.is_trusted(repo)
    problems: list[str] = []
    assert store.trusted_folders(problems) == [] and "symbolic link" in problems[0]
    if os.geteuid() != 0:
        pytest.skip("changing a file's owner needs root")
    store.trust_file().unlink()
    planted.rename(store.trust_file())
    assert store.is_trusted(repo)
    os.chown(store.trust_file(), 65534, 65534)  # nobody's file, not the user's
    assert not store.is_trusted(repo)


def test_a_relative_xdg_config_home_cannot_point_into_the_project(tmp_path: Path) -> None:
    repo = project(tmp_path / "repo")
    # the repository ships what a trust file under XDG_CONFIG_HOME=. or =repo would be
    for base in (repo, repo / "cfg"):
        (base / "sagent").mkdir(parents=True)
        (base / "sagent" / "trusted-folders.json").write_text(json.dumps({"folders": [str(repo.resolve()), "/"]}))
        (base / "sagent" / "trusted-folders.json").chmod(0o600)
    home = tmp_path / "home"
    home.mkdir()
    for relative in (".", "cfg", "./cfg"):
        out = sagent("config", "--json", cwd=repo, config=tmp_path / "unused", XDG_CONFIG_HOME=relative, HOME=str(home))
        assert json.loads(out.stdout)["trust"]["trusted"] is False, (relative, out.stderr)


def test_a_project_cannot_trust_itself_through_its_env_or_a_nested_project(tmp_path: Path) -> None:
    evil_config = tmp_path / "evil-config"
    repo = project(tmp_path / "repo", {"env": {"XDG_CONFIG_HOME": str(evil_config)}})
    (evil_config / "sagent").mkdir(parents=True)
    (evil_config / "sagent" / "trusted-folders.json").write_text(json.dumps({"folders": [str(repo.resolve())]}))
    (evil_config / "sagent" / "trusted-folders.json").chmod(0o600)
    out = sagent("config", "--json", cwd=repo, config=tmp_path / "config")
    assert json.loads(out.stdout)["trust"]["trusted"] is False
    # a trusted parent does cover a repository cloned inside it (documented): the reverse never holds
    parent = tmp_path / "parent"
    child = project(parent / "child")
    assert sagent("trust", str(child), cwd=tmp_path, config=tmp_path / "config").returncode == 0
    project(parent)
    out = sagent("config", "--json", cwd=parent, config=tmp_path / "config")
    assert json.loads(out.stdout)["trust"]["trusted"] is False


def test_sagent_trust_list_revoke_and_help(tmp_path: Path) -> None:
    config = tmp_path / "config"
    repo = project(tmp_path / "repo")
    sub = repo / "src"
    sub.mkdir()
    empty = sagent("trust", "--list", cwd=repo, config=config)
    assert empty.returncode == 0 and empty.stdout == "" and "no folder is trusted" in empty.stderr
    done = sagent("trust", cwd=sub, config=config)  # from a subfolder: the project root is trusted
    assert done.returncode == 0 and done.stdout.strip() == f"trusted {repo.resolve()}"
    again = sagent("trust", cwd=repo, config=config)
    assert again.returncode == 0 and "already trusted" in again.stdout
    assert sagent("trust", "--list", cwd=tmp_path, config=config).stdout.splitlines() == [str(repo.resolve())]
    through = sagent("trust", "--revoke", str(sub), cwd=tmp_path, config=config)
    assert through.returncode == 1 and f"trusted through {repo.resolve()}" in through.stderr
    revoked = sagent("trust", "--revoke", cwd=sub, config=config)
    assert revoked.returncode == 0, revoked.stderr
    assert sagent("trust", "--list", cwd=tmp_path, config=config).stdout == ""
    not_trusted = sagent("trust", "--revoke", str(repo), cwd=tmp_path, config=config)
    assert not_trusted.returncode == 1 and "is not trusted" in not_trusted.stderr
    missing = sagent("trust", str(tmp_path / "nope"), cwd=tmp_path, config=config)
    assert missing.returncode == 2 and "not a folder" in missing.stderr
    both = sagent("trust", "--list", "--revoke", cwd=tmp_path, config=config)
    assert both.returncode == 2
    helped = sagent("trust", "--help", cwd=tmp_path, config=config)
    assert helped.returncode == 0
    for words in ("--list", "--revoke", "real path", "trusted-folders.json", "deny and ask rules", ".mcp.json"):
        assert words in helped.stdout, words


def test_a_folder_with_nothing_to_skip_says_nothing(tmp_path: Path) -> None:
    config = tmp_path / "config"
    plain = tmp_path / "plain"
    (plain / ".git").mkdir(parents=True)
    (plain / "AGENTS.md").write_text("notes")
    only_deny = project(tmp_path / "strict", {"permissions": {"deny": ["Bash(rm:*)"], "ask": ["Write"]}})
    for folder in (plain, only_deny, tmp_path):
        out = sagent("-p", "hi", "--provider", "nope", cwd=folder, config=config)
        assert "not trusted" not in out.stderr, (folder, out.stderr)
        report = json.loads(sagent("config", "--json", cwd=folder, config=config).stdout)
        assert report["trust"]["skipped"] == [], folder
