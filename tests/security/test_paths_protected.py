"""The project's files that configure git, a shell or sagent (its git hooks and config, `.sagent/`, `.mcp.json`,
`.claude/`, shell start-up files) are read-only inside the OS sandbox, because what they say later runs outside
it. sagent's own Write and Edit must not be the way around that: editing them asks in every mode but
bypassPermissions, whatever allow rule would let the edit run."""

from __future__ import annotations

from pathlib import Path

import pytest

from sagent.agent.hooks import Allow, Ask, Deny
from sagent.permissions.policy import Permissions

PROTECTED = [
    ".git/hooks/pre-commit",
    ".git/config",
    ".sagent/settings.json",
    ".sagent/settings.local.json",
    ".sagent/commands/x.md",
    ".mcp.json",
    ".claude/settings.json",
    ".bashrc",
    ".profile",
    ".gitconfig",
    "sub/../.mcp.json",
    "./.git//hooks/post-checkout",
]


@pytest.mark.parametrize("path", PROTECTED)
@pytest.mark.parametrize("tool", ["Write", "Edit"])
@pytest.mark.parametrize(
    "policy",
    [
        {"mode": "acceptEdits"},
        {"mode": "default", "allow": ["Edit", "Write"]},
        {"mode": "acceptEdits", "allow": ["Edit(**)", "Write(**)", "Edit(.mcp.json)", "Edit(.git/**)"]},
    ],
    ids=["acceptEdits", "allow-tools", "allow-paths"],
)
def test_editing_a_file_that_configures_what_runs_outside_the_sandbox_asks(
    tmp_path: Path, tool: str, path: str, policy: dict[str, object]
) -> None:
    (tmp_path / "sub").mkdir()
    rules = Permissions.build(cwd=tmp_path, **policy)  # type: ignore[arg-type]
    arguments = (
        {"path": path, "content": "x"} if tool == "Write" else {"path": path, "old_string": "a", "new_string": "b"}
    )
    assert isinstance(rules.decide(tool, arguments, str(tmp_path)), Ask)


def test_the_same_names_elsewhere_and_ordinary_files_are_edited_as_before(tmp_path: Path) -> None:
    rules = Permissions.build(mode="acceptEdits", cwd=tmp_path)
    for path in ("src/app.py", "docs/.mcp.json.md", "notes/git/hooks.txt", ".github/workflows/ci.yml", "sagent.md"):
        assert isinstance(rules.decide("Write", {"path": path, "content": "x"}, str(tmp_path)), Allow), path


def test_bypass_permissions_still_edits_them_and_deny_rules_still_refuse(tmp_path: Path) -> None:
    bypass = Permissions.build(mode="bypassPermissions", cwd=tmp_path)
    assert isinstance(bypass.decide("Write", {"path": ".mcp.json", "content": "{}"}, str(tmp_path)), Allow)
    denied = Permissions.build(mode="acceptEdits", deny=["Edit(.sagent/**)"], cwd=tmp_path)
    assert isinstance(denied.decide("Write", {"path": ".sagent/settings.json", "content": "{}"}, str(tmp_path)), Deny)


def test_a_link_in_the_project_to_a_protected_file_is_judged_as_that_file(tmp_path: Path) -> None:
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    (tmp_path / "innocent.sh").symlink_to(tmp_path / ".git" / "hooks" / "pre-commit")
    rules = Permissions.build(mode="acceptEdits", cwd=tmp_path)
    assert isinstance(rules.decide("Write", {"path": "innocent.sh", "content": "x"}, str(tmp_path)), Ask)
