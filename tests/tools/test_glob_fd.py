"""Glob through fd and through its own walker: the same files, in the same order, with the same counts of
entries left out and skipped, on the same trees."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from sagent.tools import Glob
from sagent.tools import search as search_module
from sagent.tools.base import ToolContext
from sagent.tools.fdglob import fd_command


class NoSecrets:
    """A guard that hides every entry whose real path has a part named `secrets` or `key.pem`."""

    def hides(self, tool: str, real: str, root: str) -> bool:
        return bool({"secrets", "key.pem"} & set(Path(real).parts))

    def refuse_file(self, tool: str, real: str) -> None:
        return None

    def refuse_inode(self, tool: str, device: int, inode: int) -> None:
        return None

    def skip_below(self, tool: str, root: str) -> list[str]:
        return []


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each Glob was answered from fd's listing (True) or handed to the Python walker (False)."""
    monkeypatch.setenv("SAGENT_FD", "on")  # fd is asked for: the walker is the default
    if fd_command() is None:
        pytest.skip("fd is not installed (Debian's fd-find): there is no second backend to compare")
    answers: list[bool] = []
    real = search_module.fd_select

    def spy(*args: Any) -> bool:
        answer = real(*args)
        if fd_command() is not None:  # not a run with fd taken off the PATH
            answers.append(answer)
        return answer

    monkeypatch.setattr(search_module, "fd_select", spy)
    return answers


async def both(monkeypatch: pytest.MonkeyPatch, ctx: ToolContext, **arguments: str) -> tuple[str, str]:
    """Glob's answer with fd, then with fd off the PATH (the pure-Python walker)."""
    fast = await Glob().run(arguments, ctx)
    with monkeypatch.context() as m:
        m.setattr(search_module.shutil, "which", lambda name: None)
        slow = await Glob().run(arguments, ctx)
    return fast, slow


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A tree with what tells the walkers apart: nested and negated .gitignore rules, a nested repository,
    links to files, folders and nothing, a loop, newlines and spaces in names, ties in modification time."""
    root = Path(os.path.realpath(tmp_path))
    files = [
        "a.py", "src/app.py", "src/util.py", "src/secret.py", "src/deep/er/x.py", "build/out.py", "debug.log",
        "keep.log", "logs/debug.log", "logs/info.log", "vendor/lib/mod.py", "vendor/lib/build/gen.py",
        "secrets/token.py", "src/secrets/inner.py", "src/key.pem", "docs/Makefile", "Makefile/inside.py",
        "odd name/new\nline.py", ".hidden/dot.py", ".git/hooks/hook.py", "tie/b.py", "tie/a.py",
    ]  # fmt: skip
    for n, name in enumerate(files):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(f"{name}\n")
        os.utime(root / name, (1_000_000 + n, 1_000_000 + (0 if name.startswith("tie/") else n)))
    (root / ".gitignore").write_text("build/\n*.log\n!keep.log\n/src/deep/\n")  # not read when searching src
    (root / "src" / ".gitignore").write_text("secret.py\n")
    (root / "logs" / ".gitignore").write_text("!info.log\n")  # git keeps it; sagent's rules do not
    (root / "vendor" / "lib" / ".git" / "info").mkdir(parents=True)  # a repository of its own
    (root / "vendor" / "lib" / ".git" / "info" / "exclude").write_text("# only comments\n")
    (root / "file_link.py").symlink_to("src/app.py")
    (root / "dir_link").symlink_to("src")  # ** does not follow it
    (root / "gone.py").symlink_to("nowhere.py")
    (root / "loop.py").symlink_to("loop.py")
    (root / "key_link.py").symlink_to("src/key.pem")
    return root


PATTERNS = ["**/*.py", "**", "**/Makefile", "src/**/*.py", "**/*.log", "**/[a-c]*.py", "**/x.py"]


@pytest.mark.parametrize(("guarded", "repository"), [(False, True), (True, True), (False, False)])
async def test_glob_gives_the_same_answer_with_fd_and_without(
    project: Path, served: list[bool], monkeypatch: pytest.MonkeyPatch, guarded: bool, repository: bool
) -> None:
    if not repository:  # fd before 8.7 reads .gitignore only inside a repository; sagent reads it anywhere
        shutil.rmtree(project / ".git")
    ctx = ToolContext(cwd=project, guard=NoSecrets() if guarded else None)  # type: ignore[arg-type]
    for pattern in PATTERNS:
        fast, slow = await both(monkeypatch, ctx, pattern=pattern)
        assert fast == slow, pattern
    # fd answered each but `**`: a name with no literal part (`*`) gains nothing from fd's listing
    assert served == [pattern != "**" for pattern in PATTERNS]
    fast, _ = await both(monkeypatch, ctx, pattern="**/*.py")
    lines = fast.splitlines()
    notes = [line for line in lines if line.startswith("[")]
    shown = lines[: len(lines) - len(notes)]
    assert shown[:3] == [".hidden/dot.py", "odd name/new", "line.py"]  # newest first, a newline kept
    assert shown[-3:] == ["a.py", "tie/a.py", "tie/b.py"]  # the same time: by path
    assert "src/secret.py" not in lines and "build/out.py" not in lines and "vendor/lib/build/gen.py" not in lines
    assert ".git/hooks/hook.py" not in lines and "src/deep/er/x.py" not in lines and "dir_link/app.py" not in lines
    assert ("secrets/token.py" in lines) is not guarded and ("key_link.py" in lines) is not guarded
    assert notes[-1].startswith("[2 entries could not be read")  # the link to nothing and the loop
    if guarded:  # secrets/, src/secrets/ and the link to the key
        assert notes[0] == "[3 entries left out: the permission rules do not let this search read there]"


@pytest.mark.parametrize(
    "plant",
    [
        lambda root: (root / "src" / ".ignore").write_text("util.py\n"),
        lambda root: (root / ".fdignore").write_text("a.py\n"),
        lambda root: (root / "vendor" / "lib" / ".git" / "info" / "exclude").write_text("mod.py\n"),
        lambda root: (root / "src" / ".git").write_text("gitdir: /elsewhere\n"),
    ],
    ids=[".ignore", ".fdignore", "git-exclude", "git-file"],
)
async def test_where_fd_would_leave_out_more_the_python_walker_answers(
    project: Path, served: list[bool], monkeypatch: pytest.MonkeyPatch, plant: Any
) -> None:
    plant(project)
    fast, slow = await both(monkeypatch, ToolContext(cwd=project), pattern="**/*.py")
    assert fast == slow and served == [False]
    assert {"src/util.py", "a.py", "vendor/lib/mod.py"} <= set(fast.splitlines())


async def test_sagent_fd_off_keeps_glob_on_its_python_walker(
    project: Path, served: list[bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = ToolContext(cwd=project)
    with_fd = await Glob().run({"pattern": "**/*.py"}, ctx)
    monkeypatch.setenv("SAGENT_FD", "off")
    assert await Glob().run({"pattern": "**/*.py"}, ctx) == with_fd
    assert served == [True]  # the second call never asked fd


def test_fd_is_used_only_when_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SAGENT_FD", raising=False)
    assert fd_command() is None
    monkeypatch.setenv("SAGENT_FD", "on")
    if shutil.which("fdfind") or shutil.which("fd"):
        assert fd_command() is not None
