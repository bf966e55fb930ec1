"""`--resume-mode` from the command line: only what is new goes where the server keeps the conversation."""

from __future__ import annotations

from pathlib import Path

from tests.cli.test_headless import run_sagent
from tests.fakes import openai_responses_server as resp
from tests.fakes.anthropic_server import FakeAnthropic, text_response


def _env(tmp_path: Path, **keys: str) -> dict[str, str]:
    import os

    return {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data"), **keys}


def test_resume_sends_only_the_new_items_after_the_stored_response(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("print('a')\n")
    steps = [resp.responses_tools([("Read", {"path": "a.py"})]), resp.responses_text("It prints a.")]
    with resp.FakeResponses(steps) as fake:
        done = run_sagent(
            ["-p", "what does a.py print?", "--provider", "openai", "--base-url", fake.url, "--resume-mode", "resume"],
            _env(tmp_path, OPENAI_API_KEY="sk-test"),
            cwd=tmp_path,
        )
        first, second = fake.bodies()
    assert done.returncode == 0, done.stderr
    assert first["store"] is True and second["previous_response_id"] == "resp_fake01"
    assert [i["type"] for i in second["input"]] == ["function_call_output"]
    assert "resume" not in done.stderr  # no note: it resumed


def test_resume_where_the_server_keeps_nothing_says_it_replays(tmp_path: Path) -> None:
    with FakeAnthropic([text_response("Hi."), text_response("Hi again.")]) as fake:
        env = _env(tmp_path, ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=fake.url)
        done = run_sagent(["-p", "hi", "--resume-mode", "resume"], env, cwd=tmp_path)
        quiet = run_sagent(["-p", "hi", "--resume-mode", "auto"], env, cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.strip() == "Hi."
    assert "keeps no conversation on its server" in done.stderr
    assert quiet.returncode == 0 and "keeps no conversation" not in quiet.stderr


def test_google_resumes_on_the_interactions_api(tmp_path: Path) -> None:
    from tests.fakes.gemini_server import FakeGemini, gemini_text, gemini_tools

    (tmp_path / "a.py").write_text("print('a')\n")
    with FakeGemini([gemini_tools([("Read", {"path": "a.py"})]), gemini_text("It prints a.")]) as fake:
        args = ["-p", "what does a.py print?", "--provider", "google", "--base-url", fake.url]
        args += ["--resume-mode", "resume"]
        done = run_sagent(args, _env(tmp_path, GEMINI_API_KEY="test"), cwd=tmp_path)
        first, second = fake.requests
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "It prints a."
    assert first["path"] == second["path"] == "/v1beta/interactions"
    assert first["body"]["store"] is True and second["body"]["previous_interaction_id"] == "int_fake01"
    assert [s["type"] for s in second["body"]["input"]] == ["function_result"]
    assert "keeps no conversation" not in done.stderr
