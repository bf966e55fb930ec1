"""Where resources are found: user, project and the names other agents use, gated by folder trust."""

from __future__ import annotations

from pathlib import Path

import pytest

from sagent.cli.trust import config_dir, trust
from sagent.resources import places
from sagent.resources.front_matter import ResourceError, names_field, read_markdown, split_front_matter


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    for name in (".claude", ".agents", ".sagent"):
        (root / name / "skills").mkdir(parents=True)
    return root


def test_an_untrusted_project_offers_nothing_and_says_which_folders_it_left_out(tmp_path: Path) -> None:
    root = _project(tmp_path)
    found = places("skills", root / ".git", home=tmp_path / "home")
    assert [p.scope for p in found.found] == []
    assert set(found.untrusted) == {root / n / "skills" for n in (".claude", ".agents", ".sagent")}
    assert f"sagent trust {root}" in (found.untrusted_note() or "")


def test_a_trusted_project_comes_after_the_user_and_sagent_names_come_last(tmp_path: Path) -> None:
    root = _project(tmp_path)
    trust(root)
    home = tmp_path / "home"
    (home / ".claude" / "skills").mkdir(parents=True)
    (config_dir() / "skills").mkdir(parents=True)
    found = places("skills", root, home=home)
    assert [(p.scope, p.origin) for p in found.found] == [
        ("user", "~/.claude"),
        ("user", "sagent config"),
        ("project", ".agents"),
        ("project", ".claude"),
        ("project", ".sagent"),
    ]
    assert found.untrusted == ()
    # agent files are not looked for under .agents/
    (root / ".agents" / "agents").mkdir()
    assert all(p.origin != ".agents" for p in places("agents", root, home=home).found)


def test_front_matter_reads_yaml_lists_folded_text_and_plain_lines_yaml_refuses(tmp_path: Path) -> None:
    meta, body = split_front_matter(
        "---\nname: a\ntools:\n  - Read\n  - Grep\ndescription: >\n  two\n  lines\n---\nBody\n", "f"
    )
    assert meta == {"name": "a", "tools": ["Read", "Grep"], "description": "two lines"}
    assert body == "Body\n"
    meta, _ = split_front_matter("---\nname: b\ndescription: Use when: the user asks\n---\n", "f")
    assert meta["description"] == "Use when: the user asks"
    assert names_field({"tools": "Read, Grep Bash(git diff:*)"}, "tools", "f") == ("Read", "Grep", "Bash(git diff:*)")
    with pytest.raises(ResourceError, match="never closed"):
        split_front_matter("---\nname: c\n", "f")
    with pytest.raises(ResourceError, match="not valid YAML"):
        split_front_matter("---\nname: [unclosed\n  - x: {\n---\n", "f")


def test_a_fifo_a_huge_file_and_bad_bytes_are_refused_by_name(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "SKILL.md"
    os.mkfifo(fifo)
    with pytest.raises(ResourceError, match="not a regular file"):
        read_markdown(fifo)
    big = tmp_path / "big.md"
    big.write_bytes(b"x" * 300_000)
    with pytest.raises(ResourceError, match="larger than"):
        read_markdown(big)
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"---\nname: \xff\n---\n")
    with pytest.raises(ResourceError, match="not UTF-8"):
        read_markdown(bad)
