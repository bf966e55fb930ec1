"""Skills through `sagent -p` against the fake Anthropic server: the first request names each skill and
carries no body, a Skill call brings the body, `-p "/NAME args"` sends it as the prompt, and broken files
are said on stderr."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_custom_commands_cli import user_texts
from tests.cli.test_headless import env_for, records, run_sagent
from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response
from tests.trusting import trust_in


def setup(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A trusted project with a skill in .claude/skills/, a user skill in ~/.agents/skills/, a broken one."""
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    skill = project / ".claude" / "skills" / "release-notes"
    (skill / "scripts").mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: release-notes\ndescription: Write release notes from the git log.\n"
        "allowed-tools: Bash(git log:*)\n---\nRELEASE-BODY: read the log since $ARGUMENTS.\n"
    )
    (skill / "scripts" / "log.sh").write_text("git log --oneline\n")
    home = tmp_path / "home"
    user = home / ".agents" / "skills" / "tidy"
    user.mkdir(parents=True)
    (user / "SKILL.md").write_text("---\ndescription: Tidy imports.\n---\nTIDY-BODY\n")
    (project / ".claude" / "skills" / "broken").mkdir()
    (project / ".claude" / "skills" / "broken" / "SKILL.md").write_text("---\nname: broken\n---\nno description\n")
    config = tmp_path / "config"
    trust_in(config, project)
    return project, home, {"HOME": str(home), "XDG_CONFIG_HOME": str(config)}


def test_the_first_request_lists_skills_without_bodies_and_a_call_brings_one(tmp_path: Path) -> None:
    project, _, extra = setup(tmp_path)
    steps = [tool_use_response([("Skill", {"skill": "release-notes", "args": "v1.2"})]), text_response("Notes.")]
    with FakeAnthropic(steps) as fake:
        args = ["-p", "write release notes", "--output-format", "stream-json"]
        out = run_sagent(args, {**env_for(fake, tmp_path), **extra}, cwd=project)
        first, second = fake.requests[0]["body"], fake.requests[1]["body"]
    assert out.returncode == 0, out.stderr
    init = records(out.stdout)[0]  # Claude Code's init record names the skills and their slash commands
    assert init["subtype"] == "init" and init["skills"] == ["release-notes", "tidy"] and "Skill" in init["tools"]
    assert {"release-notes", "tidy"} <= set(init["slash_commands"])
    (tool,) = [t for t in first["tools"] if t["name"] == "Skill"]
    assert "- release-notes: Write release notes from the git log." in tool["description"]
    assert "- tidy: Tidy imports." in tool["description"]
    assert "RELEASE-BODY" not in json.dumps(first) and "TIDY-BODY" not in json.dumps(first)
    results = [b for b in second["messages"][-1]["content"] if b.get("type") == "tool_result"]
    text = json.dumps(results)
    assert "RELEASE-BODY: read the log since v1.2." in text and "scripts/log.sh" in text
    assert not results[0].get("is_error")
    # The broken skill is said once, by name, on stderr; it is not offered.
    lines = [line for line in out.stderr.splitlines() if "broken" in line]
    assert len(lines) == 1 and "skill broken:" in lines[0] and "no `description`" in lines[0]
    assert "- broken" not in tool["description"]


def test_slash_name_sends_the_skill_as_the_prompt_and_a_broken_one_exits_2(tmp_path: Path) -> None:
    project, _, extra = setup(tmp_path)
    with FakeAnthropic([text_response("ok")]) as fake:
        env = {**env_for(fake, tmp_path), **extra}
        out = run_sagent(["-p", "/release-notes v2.0"], env, cwd=project)
        assert out.returncode == 0, out.stderr
        prompt = user_texts(fake.requests[0]["body"])[-1]
        broken = run_sagent(["-p", "/broken"], env, cwd=project)
        assert len(fake.requests) == 1
    assert prompt.startswith('Skill "release-notes". Base directory for this skill:')
    assert "RELEASE-BODY: read the log since v2.0." in prompt and "scripts/log.sh" in prompt
    assert broken.returncode == 2 and "no `description`" in broken.stderr


def test_without_skills_or_with_tools_that_leave_it_out_there_is_no_skill_tool(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    home = tmp_path / "home"
    home.mkdir()
    with FakeAnthropic([text_response("a"), text_response("b")]) as fake:
        env = {**env_for(fake, tmp_path), "HOME": str(home), "XDG_CONFIG_HOME": str(tmp_path / "config")}
        assert run_sagent(["-p", "hi"], env, cwd=project).returncode == 0
        project2, _, extra = setup(tmp_path / "second")
        out = run_sagent(["-p", "hi", "--tools", "Read"], {**env, **extra}, cwd=project2)
        assert out.returncode == 0, out.stderr
        names = [[t["name"] for t in r["body"].get("tools", [])] for r in fake.requests]
    assert "Skill" not in names[0] and "Read" in names[0]
    assert "Skill" not in names[1]


def test_a_claude_agent_sdk_programs_tools_list_keeps_skill() -> None:
    import io

    from sagent.cli.sdk_flags import _sagent_tools

    said = io.StringIO()
    assert _sagent_tools("Read,Skill,TodoWrite9", said) == "Read,Skill"
    assert "Skill" not in said.getvalue()


def test_sagent_skills_lists_them_and_says_what_cannot_be_used(tmp_path: Path) -> None:
    import os

    project, _, extra = setup(tmp_path)
    env = {**os.environ, **extra}
    out = run_sagent(["skills", "--json", "--cwd", str(project)], env)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert [(s["name"], s["scope"], s["origin"]) for s in report["skills"]] == [
        ("release-notes", "project", ".claude"),
        ("tidy", "user", "~/.agents"),
    ]
    assert (
        report["skills"][0]["allowedTools"] == ["Bash(git log:*)"]
        and "no `description`" in report["problems"]["broken"]
    )
    text = run_sagent(["skills"], env, cwd=project)
    assert "release-notes  [project, .claude]  Write release notes" in text.stdout
    assert "broken  cannot be used:" in text.stdout
    assert run_sagent(["skills", "--bogus"], env).returncode == 2
