"""Skills over ACP: the editor is offered them as slash commands, `/NAME args` sends the skill as in
`sagent -p`, and the model is given the Skill tool listing them."""

from __future__ import annotations

import json
from pathlib import Path

from tests.acp.acp_client import Editor, anthropic_env, connected, prompt_blocks
from tests.fakes.anthropic_server import FakeAnthropic, text_response


async def test_skills_are_offered_to_the_editor_and_to_the_model(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    skill = tmp_path / "config" / "sagent" / "skills" / "explain"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\ndescription: Explain a file simply.\nargument-hint: FILE\n---\nEXPLAIN-BODY: explain $ARGUMENTS.\n"
    )
    editor = Editor()
    with FakeAnthropic([text_response("explained")]) as fake:
        env = {**anthropic_env(fake, tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config"), "HOME": str(tmp_path)}
        async with connected(editor, env) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            await conn.prompt(session_id=session.session_id, prompt=prompt_blocks("/explain notes.txt"))
        body = fake.requests[0]["body"]
    [offered] = editor.of_kind("available_commands_update")
    assert offered["availableCommands"] == [
        {"name": "explain", "description": "Explain a file simply. (skill, sagent config)", "input": {"hint": "FILE"}}
    ]
    assert "EXPLAIN-BODY: explain notes.txt." in json.dumps(body["messages"])
    (tool,) = [t for t in body["tools"] if t["name"] == "Skill"]
    assert "- explain: Explain a file simply." in tool["description"]
