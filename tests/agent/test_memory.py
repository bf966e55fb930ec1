"""Project memory: AGENTS.md / CLAUDE.md from the repository root down to the working directory."""

from __future__ import annotations

from pathlib import Path

from sagent.agent.memory import MAX_TOTAL_CHARS, memory_files, memory_prompt, user_memory_file


def test_files_are_read_from_the_user_file_and_the_root_down_to_the_working_directory(tmp_path: Path) -> None:
    outside = tmp_path / "AGENTS.md"
    outside.write_text("not this one: above the repository")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "AGENTS.md").write_text("Run tests with `make test`.")
    (repo / "CLAUDE.md").write_text("Prefer small commits.")
    deep = repo / "pkg" / "sub"
    deep.mkdir(parents=True)
    (repo / "pkg" / "AGENTS.md").write_text("pkg: use tabs.")
    (deep / "AGENTS.md").write_text("")  # empty files add nothing
    user = user_memory_file()
    user.parent.mkdir(parents=True)
    user.write_text("Answer in British English.")

    files = memory_files(deep)
    assert [f.path for f in files] == [user, repo / "AGENTS.md", repo / "CLAUDE.md", repo / "pkg" / "AGENTS.md"]
    prompt = memory_prompt(files)
    assert prompt.startswith("# Project memory")
    assert prompt.index("British") < prompt.index("make test") < prompt.index("use tabs")  # nearer comes later
    assert "not this one" not in prompt


def test_memory_is_capped_and_a_cut_file_says_where_the_rest_is(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("a" * 30_000)
    (tmp_path / "CLAUDE.md").write_text("b" * 30_000)
    files = memory_files(tmp_path)
    assert sum(len(f.text) for f in files) == MAX_TOTAL_CHARS and all(f.cut for f in files)
    assert f"Read {tmp_path / 'AGENTS.md'} for the rest" in memory_prompt(files)


def test_no_files_no_section(tmp_path: Path) -> None:
    assert memory_files(tmp_path) == [] and memory_prompt([]) == ""
