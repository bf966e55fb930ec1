"""Skills in the real REPL (tmux) against the fake Anthropic server: the banner names a broken one, Tab
completion offers them after `/`, `/skills` lists them with where they come from, and `/NAME args` sends
the skill as the user's turn."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic, text_response
from tests.repl.test_repl_tmux import user_texts
from tests.repl.tmux import HAVE_TMUX, Tmux
from tests.trusting import trust_in

pytestmark = pytest.mark.skipif(not HAVE_TMUX, reason="tmux is not installed")


def test_skills_are_listed_completed_and_loaded_by_slash_name(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    skills = project / ".claude" / "skills"
    (skills / "bump-version").mkdir(parents=True)
    (skills / "bump-version" / "SKILL.md").write_text(
        "---\ndescription: Bump the version everywhere it is written.\nargument-hint: VERSION\n---\n"
        "BUMP-BODY: set the version to $ARGUMENTS.\n"
    )
    (skills / "help").mkdir()
    (skills / "help" / "SKILL.md").write_text("---\ndescription: a skill named like a built-in\n---\nx\n")
    (skills / "nodesc").mkdir()
    (skills / "nodesc" / "SKILL.md").write_text("---\nname: nodesc\n---\nbody\n")
    home = tmp_path / "home"
    (home / ".claude" / "skills" / "tidy").mkdir(parents=True)
    (home / ".claude" / "skills" / "tidy" / "SKILL.md").write_text("---\ndescription: Tidy the imports.\n---\nx\n")
    config = tmp_path / "config"
    trust_in(config, project)
    with FakeAnthropic([text_response("Bumped to 2.0.")]) as fake:
        env = {
            **os.environ,
            "ANTHROPIC_API_KEY": "sk-ant-test",
            "ANTHROPIC_BASE_URL": fake.url,
            "HOME": str(home),
            "XDG_DATA_HOME": str(tmp_path / "data"),
            "XDG_CONFIG_HOME": str(config),
            "TERM": "xterm-256color",
        }
        with Tmux([], env, project, width=120, height=40) as term:
            screen = term.wait_for("Esc interrupts")
            assert "skills that cannot be used: nodesc" in screen
            term.type("/bump")
            term.wait_for("Bump the version everywhere", timeout=10)  # the completion menu offers it
            term.press("C-u")
            term.type("/skills")
            term.press("Enter")
            screen = term.wait_for("Tidy the imports.")
            assert "/bump-version VERSION" in screen and "[project, .claude]" in screen
            assert "[user, ~/.claude]" in screen
            assert "/help runs the built-in command" in screen
            assert "/nodesc" in screen and "no `description`" in screen
            term.type("/bump-version 2.0")
            term.press("Enter")
            screen = term.wait_for("Bumped to 2.0.")
            assert "/bump-version →" in screen
            body = fake.requests[0]["body"]
    prompt = user_texts(body)[-1]
    assert "BUMP-BODY: set the version to 2.0." in prompt and str(skills / "bump-version") in prompt
    (tool,) = [t for t in body["tools"] if t["name"] == "Skill"]
    assert "- bump-version: Bump the version" in tool["description"] and "- tidy:" in tool["description"]


def test_a_skill_saved_during_a_session_is_offered_after_clear(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    config = tmp_path / "config"
    trust_in(config, project)
    with FakeAnthropic([text_response("ANSWER-ONE"), text_response("ANSWER-TWO")]) as fake:
        env = {
            **os.environ,
            "ANTHROPIC_API_KEY": "sk-ant-test",
            "ANTHROPIC_BASE_URL": fake.url,
            "HOME": str(tmp_path / "home"),
            "XDG_DATA_HOME": str(tmp_path / "data"),
            "XDG_CONFIG_HOME": str(config),
            "TERM": "xterm-256color",
        }
        with Tmux([], env, project) as term:
            term.wait_for("Esc interrupts")
            term.type("hello")
            term.press("Enter")
            term.wait_for("ANSWER-ONE")
            skill = project / ".sagent" / "skills" / "fresh"
            skill.mkdir(parents=True)
            (skill / "SKILL.md").write_text("---\ndescription: Saved a moment ago.\n---\nFRESH\n")
            refused = 0
            term.type("/clear")
            term.press("Enter")
            for _ in range(600):  # the turn may still be closing
                if "─ new session" in (screen := term.screen()):
                    break
                if screen.count("press Esc first") > refused:  # then /clear says so: once more
                    refused += 1
                    term.type("/clear")
                    term.press("Enter")
                time.sleep(0.1)
            term.type("again")
            term.press("Enter")
            term.wait_for("ANSWER-TWO")
            before, after = ([t["name"] for t in r["body"]["tools"]] for r in fake.requests)
            description = next(t["description"] for t in fake.requests[1]["body"]["tools"] if t["name"] == "Skill")
    assert "Skill" not in before and "Skill" in after and "- fresh: Saved a moment ago." in description
