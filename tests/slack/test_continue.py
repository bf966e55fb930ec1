"""`sagent-slack --continue` after the service was killed with SIGKILL: the agents come back with their
histories (a real subprocess, the fake Slack and a fake Chat Completions server)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.fakes.openai_chat_server import FakeChat, text_chunks
from tests.fakes.slack_server import BOT_USER, FakeSlack


def _service(slack: FakeSlack, chat: FakeChat, tmp_path: Path, *more: str) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "SLACK_APP_TOKEN": "xapp-test",
        "SLACK_BOT_TOKEN": "xoxb-test",
        "OPENAI_API_KEY": "test",
    }
    command = [
        sys.executable,
        "-m",
        "sagent",
        "slack",
        "--slack-api-url",
        slack.url,
        "--provider",
        "openai-compat",
        "--base-url",
        chat.url,
        "--model",
        "test-model",
        "--tools",
        "none",
        "--no-memory",
        "--session-dir",
        str(tmp_path / "sessions"),
        "--cwd",
        str(tmp_path),
        *more,
    ]
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_continue_after_kill_9_restores_agents_with_their_histories(tmp_path: Path) -> None:
    with FakeSlack() as slack, FakeChat([text_chunks("noted: 42"), text_chunks("you said 42")]) as chat:
        first = _service(slack, chat, tmp_path)
        try:
            slack.wait_connected()
            ts = slack.message(f"<@{BOT_USER}> create keeper")
            slack.wait(lambda: any("Created `keeper`" in t for t in slack.texts()))
            ts = slack.message("remember the number 42")
            slack.wait(
                lambda: any(
                    p.get("thread_ts") == ts and "noted: 42" in t
                    for p, t in zip(slack.posted, slack.texts(), strict=True)
                )
            )
        finally:
            first.kill()  # SIGKILL: no clean shutdown
            first.wait()
        second = _service(slack, chat, tmp_path, "--continue")
        try:
            slack.wait_connected(2)
            later = slack.message("what number did I say?", thread_ts=ts)  # keeper still owns the thread
            slack.wait(lambda: any("you said 42" in t for t in slack.texts()))
        finally:
            second.terminate()
            _, err = second.communicate(timeout=30)
        assert second.returncode == 0, err.decode()
        assert "agents: keeper" in err.decode()
        request = chat.bodies()[-1]
        said = json.dumps(request["messages"])
        assert "remember the number 42" in said and "noted: 42" in said and "what number did I say?" in said
        assert later
        manifests = list((tmp_path / "sessions").glob("*/manifest.json"))
        assert len(manifests) == 1  # the continued session goes on in the same directory
