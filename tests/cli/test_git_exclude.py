"""A local settings file sagent writes in a git repository goes into the repository's exclude list, so git
never offers to commit it and sagent never warns about it at start. Real git repositories, real git."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sagent.cli import settings_files
from sagent.cli.git_exclude import exclude_from_git
from sagent.repl.approval import save_project_rules
from tests.trusting import trust_in

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

LOCAL = Path(".sagent") / "settings.local.json"


@pytest.fixture(autouse=True)
def plain_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Git with no user or system configuration but what a test writes in its own global file."""
    config = tmp_path / "gitconfig"
    config.write_text("[user]\n\tname = t\n\temail = t@example.com\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    return config


def git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)


def repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q")
    return path


def status(root: Path) -> str:
    return git(root, "status", "--porcelain", "--untracked-files=all").stdout


def startup_warnings(root: Path) -> list[str]:
    return [w for w in settings_files.load(root, trusted=True).warnings if "git-ignored" in w]


def test_dont_ask_again_in_this_project_keeps_the_file_out_of_git_and_out_of_the_warnings(tmp_path: Path) -> None:
    root = repo(tmp_path / "project")
    path = save_project_rules(root, ["Bash(ls:*)"])
    assert path == root / LOCAL
    assert git(root, "check-ignore", "-q", str(LOCAL)).returncode == 0
    assert ".sagent" not in status(root)  # git would commit nothing of it
    assert startup_warnings(root) == []
    assert not (root / ".gitignore").exists()  # the team's file is left alone
    lines = (root / ".git" / "info" / "exclude").read_text().splitlines()
    assert lines.count("/.sagent/settings.local.json") == 1


def test_a_second_rule_adds_no_second_line(tmp_path: Path) -> None:
    root = repo(tmp_path / "project")
    save_project_rules(root, ["Bash(ls:*)"])
    before = (root / ".git" / "info" / "exclude").read_text()
    save_project_rules(root, ["Bash(git status:*)"])
    assert exclude_from_git(root / LOCAL) is None
    assert (root / ".git" / "info" / "exclude").read_text() == before


def test_a_line_written_before_is_not_written_again(tmp_path: Path) -> None:
    """The file may be visible to git again (a `.gitignore` negation was removed, say): the line is there."""
    root = repo(tmp_path / "project")
    exclude = root / ".git" / "info" / "exclude"
    exclude.write_text("*.log\n/.sagent/settings.local.json")  # no final newline
    (root / ".gitignore").write_text("!/.sagent/settings.local.json\n")
    save_project_rules(root, ["Read"])
    assert exclude.read_text() == "*.log\n/.sagent/settings.local.json"


def test_a_file_ignored_already_changes_nothing(tmp_path: Path, plain_git: Path) -> None:
    root = repo(tmp_path / "project")
    (root / ".gitignore").write_text(".sagent/*.local.json\n")
    exclude = root / ".git" / "info" / "exclude"
    before = exclude.read_text() if exclude.exists() else None
    save_project_rules(root, ["Read"])
    assert (exclude.read_text() if exclude.exists() else None) == before
    # Ignored through the user's own core.excludesFile: the same.
    other = repo(tmp_path / "other")
    ignores = tmp_path / "ignores"
    ignores.write_text("settings.local.json\n")
    plain_git.write_text(plain_git.read_text() + f"[core]\n\texcludesFile = {ignores}\n")
    exclude = other / ".git" / "info" / "exclude"
    before = exclude.read_text() if exclude.exists() else None
    save_project_rules(other, ["Read"])
    assert (exclude.read_text() if exclude.exists() else None) == before
    assert startup_warnings(other) == []


def test_in_a_linked_worktree_the_shared_list_is_used(tmp_path: Path) -> None:
    main = repo(tmp_path / "main")
    git(main, "commit", "-q", "--allow-empty", "-m", "start")
    linked = tmp_path / "linked"
    assert git(main, "worktree", "add", "-q", str(linked)).returncode == 0
    assert (linked / ".git").is_file()  # a linked worktree's .git is a file pointing at the main repository
    save_project_rules(linked, ["Read"])
    assert "/.sagent/settings.local.json" in (main / ".git" / "info" / "exclude").read_text().splitlines()
    assert ".sagent" not in status(linked)
    assert startup_warnings(linked) == []


def test_a_project_below_the_repository_root_gets_its_own_anchored_line(tmp_path: Path) -> None:
    top = repo(tmp_path / "mono")
    service = top / "services" / "api [v2]"
    (service / ".sagent").mkdir(parents=True)  # the project root sagent finds is the service's folder
    save_project_rules(service, ["Read"])
    lines = (top / ".git" / "info" / "exclude").read_text().splitlines()
    assert "/services/api \\[v2\\]/.sagent/settings.local.json" in lines
    assert status(top) == ""
    # Another project's local file in the same repository is still git's to see.
    (top / "web" / ".sagent").mkdir(parents=True)
    (top / "web" / ".sagent" / "settings.local.json").write_text("{}")
    assert "web/.sagent/settings.local.json" in status(top)


def test_a_committed_file_is_left_to_the_user(tmp_path: Path) -> None:
    root = repo(tmp_path / "project")
    save_project_rules(root, ["Read"])
    (root / ".git" / "info" / "exclude").write_text("")
    git(root, "add", "-f", str(LOCAL))
    git(root, "commit", "-q", "-m", "local settings")
    save_project_rules(root, ["Bash(ls:*)"])
    assert (root / ".git" / "info" / "exclude").read_text() == ""


def test_outside_a_repository_or_without_git_nothing_happens(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plain = tmp_path / "plain"
    (plain / ".sagent").mkdir(parents=True)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    save_project_rules(plain, ["Read"])
    assert sorted(p.name for p in plain.iterdir()) == [".sagent"]
    root = repo(tmp_path / "project")
    monkeypatch.setenv("PATH", str(tmp_path / "no-such-bin"))
    path = save_project_rules(root, ["Read"])
    assert path.exists() and exclude_from_git(path) is None


def test_sagent_mcp_add_with_local_scope_keeps_the_file_out_of_git(tmp_path: Path) -> None:
    root = repo(tmp_path / "project")
    trust_in(tmp_path / "config", tmp_path)
    env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    add = [sys.executable, "-m", "sagent.cli.main", "mcp", "add", "--scope", "local", "notes", "--", "true"]
    done = subprocess.run(add, cwd=root, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert (root / LOCAL).exists()
    assert status(root) == ""
    listed = [sys.executable, "-m", "sagent.cli.main", "config"]
    shown = subprocess.run(listed, cwd=root, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert "git-ignored" not in shown.stderr


def test_sagent_config_set_with_local_scope_keeps_the_file_out_of_git(tmp_path: Path) -> None:
    root = repo(tmp_path / "project")
    trust_in(tmp_path / "config", tmp_path)
    env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    command = [sys.executable, "-m", "sagent.cli.main", "config", "set", "model", "gpt-5.4", "--scope", "local"]
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert (root / LOCAL).exists()
    assert status(root) == ""
    assert startup_warnings(root) == []
