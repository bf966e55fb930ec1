"""Slack going wrong: a rate limit, a dropped Socket Mode connection, a repeated envelope, refused tokens,
agents messaging each other where Slack users see it."""

from __future__ import annotations

from pathlib import Path

import pytest

from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.slack.cli import main
from sagent.tools import tools_by_name
from sagent.types import ModelRequest
from tests.fakes.slack_server import BOT_USER, FakeSlack
from tests.slack.harness import answer, echo, echo_model, replies, running, until


@pytest.fixture
def fake() -> FakeSlack:
    with FakeSlack() as slack:
        yield slack


async def test_a_rate_limited_post_waits_out_retry_after(fake: FakeSlack, tmp_path: Path) -> None:
    async with running(fake, echo_model(), tmp_path, router_log=None):
        fake.rate_limit("chat.postMessage", 1)
        ts = fake.message(f"<@{BOT_USER}> help")
        await answer(fake, ts, "sagent", "create <persona>")
        posts = [i for i, (method, _) in enumerate(fake.calls) if method == "chat.postMessage"]
        assert len(posts) == 2  # the refused one, then the one after Retry-After
        assert fake.call_times[posts[1]] - fake.call_times[posts[0]] >= 1.0


async def test_a_dropped_connection_reconnects_without_losing_or_repeating_an_event(
    fake: FakeSlack, tmp_path: Path
) -> None:
    model = echo_model()
    async with running(fake, model, tmp_path):
        ts = fake.message(f"<@{BOT_USER}> create solo")
        await answer(fake, ts, "sagent", "Created")
        first = fake.message("one")
        await answer(fake, first, "solo", "solo heard")
        await until(lambda: len(fake.acked) >= 2)
        fake.redeliver_last()  # Slack sends the last envelope again: its acknowledgement crossed the drop
        fake.drop()
        second = fake.message("two")  # sent while the client reconnects
        await answer(fake, second, "solo", "solo heard")
        await until(lambda: fake.connections >= 2)
        third = fake.message("three")
        await answer(fake, third, "solo", "solo heard")
        heard = [r.messages[-1].text for r in model.requests]  # type: ignore[union-attr]
        assert [h.rsplit(": ", 1)[-1] for h in heard] == ["one", "two", "three"]
        assert len(replies(fake, first, "solo")) == 1


async def test_agents_message_each_other_where_people_see_it(fake: FakeSlack, tmp_path: Path) -> None:
    def alice_or_bob(request: ModelRequest):  # type: ignore[no-untyped-def]
        if 'agent "alice"' in request.system and len(request.messages) == 1:
            return tool_turn(("AgentSend", {"to": "bob", "message": "bob, check the tests"}))
        if 'agent "alice"' in request.system:
            return text_turn("asked bob")
        return echo(request)

    model = ScriptedModel([alice_or_bob] * 20)
    async with running(fake, model, tmp_path, tools=tools_by_name(["AgentSend"])):
        for name in ("alice", "bob"):
            ts = fake.message(f"<@{BOT_USER}> create helper as {name}")
            await answer(fake, ts, "sagent", "Created")
        ts = fake.message("alice: get bob on it")
        await answer(fake, ts, "alice", "asked bob")
        alice_log, bob_log = fake.channel("sagent-alice-log"), fake.channel("sagent-bob-log")
        await until(lambda: any("AgentSend" in t and "check the tests" in t for t in fake.texts(alice_log)))
        await until(lambda: any("from alice" in t and "check the tests" in t for t in fake.texts(bob_log)))
        await until(lambda: any("💬 bob heard: bob, check the tests" in t for t in fake.texts(bob_log)))


def _args(fake: FakeSlack, tmp_path: Path, *more: str) -> list[str]:
    return [
        "--slack-api-url",
        fake.url,
        "--app-token",
        "xapp-test",
        "--bot-token",
        "xoxb-test",
        "--provider",
        "openai-compat",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "m",
        "--session-dir",
        str(tmp_path / "sessions"),
        "--tools",
        "none",
        *more,
    ]


def test_a_refused_bot_token_is_one_line_and_exit_2(
    fake: FakeSlack, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.revoke("xoxb-test")
    assert main(_args(fake, tmp_path)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "Slack refused the bot token" in err and "invalid_auth" in err


def test_a_refused_app_token_is_one_line_and_exit_2(
    fake: FakeSlack, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.revoke("xapp-test")
    assert main(_args(fake, tmp_path, "--router-log-channel", "")) == 2
    assert "Slack refused the app token" in capsys.readouterr().err


def test_continue_with_no_session_says_so(fake: FakeSlack, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_args(fake, tmp_path, "--continue")) == 2
    assert "no Slack session to continue" in capsys.readouterr().err


def test_missing_tokens_and_one_task_flags_are_usage_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("SLACK_APP_TOKEN", raising=False)
    monkeypatch.delenv("SLACK_BOT_TOKEN", raising=False)
    assert main(["--bot-token", "xoxb-1"]) == 2
    assert "SLACK_APP_TOKEN" in capsys.readouterr().err
    assert main(["--app-token", "xapp-1", "--bot-token", "xoxb-1", "-p", "hi"]) == 2
    assert "--prompt is for one task" in capsys.readouterr().err


def test_help_names_the_scopes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for needed in ("connections:write", "chat:write", "app_mentions:read", "--persona-dir", "--router-log-channel"):
        assert needed in out
    assert "--output-format" not in out
