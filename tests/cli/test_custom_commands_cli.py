"""`sagent -p "/name args"` expands a custom command as the REPL does, against the fake Anthropic server."""

from __future__ import annotations

from pathlib import Path

from tests.cli.test_headless import env_for, records, run_sagent
from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response
from tests.trusting import trust_in


def user_texts(body: dict) -> list[str]:
    return [
        block.get("text", "")
        for message in body["messages"]
        if message["role"] == "user"
        for block in message["content"]
        if block.get("type") == "text"
    ]


def test_a_headless_prompt_naming_a_custom_command_sends_its_expansion(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".sagent" / "commands" / "ops").mkdir(parents=True)
    (project / ".sagent" / "commands" / "ops" / "greet.md").write_text(
        "---\ndescription: greet someone\nallowed-tools: Read\n---\nGreet $1 warmly, then list $ARGUMENTS.\n"
    )
    user = tmp_path / "config" / "sagent" / "commands"
    user.mkdir(parents=True)
    (user / "mine.md").write_text("The user's own: $ARGUMENTS")
    steps = [
        tool_use_response([("Bash", {"command": "echo not allowed"})]),
        text_response("Hello, Ada!"),
        text_response("done"),
    ]
    with FakeAnthropic(steps) as fake:
        env = {**env_for(fake, tmp_path), "XDG_CONFIG_HOME": str(trust_in(tmp_path / "config", tmp_path).parents[1])}
        out = run_sagent(["-p", "/ops:greet Ada", "--output-format", "stream-json"], env, cwd=project)
        assert out.returncode == 0, out.stderr
        first, second = fake.requests[0]["body"], fake.requests[1]["body"]
        mine = run_sagent(["-p", "/mine hello there"], env, cwd=project)
        assert mine.returncode == 0, mine.stderr
        third = fake.requests[2]["body"]
    assert user_texts(first)[-1] == "Greet Ada warmly, then list Ada."
    denied = [b for b in second["messages"][-1]["content"] if b.get("type") == "tool_result"]
    assert denied and "/ops:greet allows only these tools: Read" in str(denied[0]["content"])
    assert records(out.stdout)[-1]["result"] == "Hello, Ada!"
    assert user_texts(third)[-1] == "The user's own: hello there"


def test_a_broken_command_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".sagent" / "commands").mkdir(parents=True)
    (project / ".sagent" / "commands" / "bad.md").write_text("---\nnot a key value line\n---\nbody\n")
    with FakeAnthropic([text_response("unused")]) as fake:
        env = {**env_for(fake, tmp_path), "XDG_CONFIG_HOME": str(trust_in(tmp_path / "config", tmp_path).parents[1])}
        out = run_sagent(["-p", "/bad"], env, cwd=project)
        assert fake.requests == []
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "bad.md: line 2 of the front matter" in out.stderr
    assert "Traceback" not in out.stderr


def test_a_command_with_a_model_runs_on_it(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".sagent" / "commands").mkdir(parents=True)
    quick = project / ".sagent" / "commands" / "quick.md"
    quick.write_text("---\nmodel: claude-haiku-4-5\n---\nAnswer fast: $ARGUMENTS")
    with FakeAnthropic([text_response("fast answer")]) as fake:
        env = {**env_for(fake, tmp_path), "XDG_CONFIG_HOME": str(trust_in(tmp_path / "config", tmp_path).parents[1])}
        out = run_sagent(["-p", "/quick what is 2+2", "--output-format", "stream-json"], env, cwd=project)
        body = fake.requests[0]["body"]
    assert out.returncode == 0, out.stderr
    assert body["model"] == "claude-haiku-4-5" and user_texts(body)[-1] == "Answer fast: what is 2+2"
    assert records(out.stdout)[-1]["type"] == "result"  # the switch back is not in the output
