"""Sessions and settings a Claude Agent SDK program names: `resume` (the model sees the earlier turns),
`fork_session`, `continue_conversation`, `session_id`, `settings` and `setting_sources`."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, query

from tests.sdk.harness import ANTHROPIC, GEMINI, OPENAI, Provider, cli, sent_text


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


async def _ask(prompt: str, options: ClaudeAgentOptions) -> ResultMessage:
    messages = [m async for m in query(prompt=prompt, options=options)]
    result = messages[-1]
    assert isinstance(result, ResultMessage), messages
    return result


@pytest.mark.parametrize("provider", [ANTHROPIC, OPENAI, GEMINI], ids=str)
async def test_resume_continues_the_session_of_an_earlier_query(
    provider: Provider, project: Path, tmp_path: Path
) -> None:
    with provider.fake([provider.text("Hello, Ada."), provider.text("You are Ada.")]) as fake:
        path = cli(fake, provider, tmp_path)
        first = await _ask("My name is Ada.", ClaudeAgentOptions(cli_path=path, cwd=str(project)))
        second = await _ask("Who am I?", ClaudeAgentOptions(cli_path=path, cwd=str(project), resume=first.session_id))
        bodies = fake.bodies()
    assert second.result == "You are Ada." and second.session_id == first.session_id
    assert "My name is Ada." in sent_text(bodies[1:]) and "Hello, Ada." in sent_text(bodies[1:])


async def test_fork_session_goes_on_in_a_new_session(project: Path, tmp_path: Path) -> None:
    with ANTHROPIC.fake([ANTHROPIC.text("Noted."), ANTHROPIC.text("Blue.")]) as fake:
        path = cli(fake, ANTHROPIC, tmp_path)
        first = await _ask("My colour is blue.", ClaudeAgentOptions(cli_path=path, cwd=str(project)))
        options = ClaudeAgentOptions(cli_path=path, cwd=str(project), resume=first.session_id, fork_session=True)
        forked = await _ask("What is my colour?", options)
        bodies = fake.bodies()
    assert forked.session_id != first.session_id and forked.result == "Blue."
    assert "My colour is blue." in sent_text(bodies[1:])
    sessions = list((tmp_path / "data").rglob("*.jsonl"))
    assert len(sessions) == 2
    original = next(p for p in sessions if p.stem == first.session_id)
    assert "What is my colour?" not in original.read_text()  # the original is kept as it was


async def test_continue_conversation_and_a_named_session(project: Path, tmp_path: Path) -> None:
    chosen = str(uuid.uuid4())
    with ANTHROPIC.fake([ANTHROPIC.text("One."), ANTHROPIC.text("Two.")]) as fake:
        path = cli(fake, ANTHROPIC, tmp_path)
        first = await _ask("first", ClaudeAgentOptions(cli_path=path, cwd=str(project), session_id=chosen))
        second = await _ask("second", ClaudeAgentOptions(cli_path=path, cwd=str(project), continue_conversation=True))
        bodies = fake.bodies()
    assert first.session_id == chosen and second.session_id == chosen
    assert "first" in sent_text(bodies[1:])


async def test_settings_from_the_program_apply_and_setting_sources_choose_the_files(
    project: Path, tmp_path: Path
) -> None:
    user = Path(os.environ["XDG_CONFIG_HOME"]) / "sagent" / "settings.json"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(json.dumps({"permissions": {"deny": ["Write(a.txt)"]}}))
    steps: list[Any] = []
    for name in ("a.txt", "b.txt", "a.txt"):
        steps += [ANTHROPIC.tools([("Write", {"path": name, "content": "x"})]), ANTHROPIC.text("ok")]
    with ANTHROPIC.fake(steps) as fake:
        path = cli(fake, ANTHROPIC, tmp_path)
        base: dict[str, Any] = {"cli_path": path, "cwd": str(project), "permission_mode": "acceptEdits"}
        await _ask("write a", ClaudeAgentOptions(**base))  # the user's file denies a.txt
        await _ask(
            "write b", ClaudeAgentOptions(**base, settings=json.dumps({"permissions": {"deny": ["Write(b.txt)"]}}))
        )
        await _ask("write a again", ClaudeAgentOptions(**base, setting_sources=["project"]))  # the user's file unread
        bodies = fake.bodies()
    replies = [sent_text([b]) for b in bodies[1::2]]
    assert "denied" in replies[0] and "denied" in replies[1] and "denied" not in replies[2]
    assert (project / "a.txt").exists() and not (project / "b.txt").exists()
