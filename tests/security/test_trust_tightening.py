"""What an untrusted folder's files may still do: tighten. Its deny and ask rules and `headlessDefault: deny`
hold over the user's own allow rules, from the project file and the local one, while the rest of the same
file is skipped."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response


def tool_results(fake: FakeAnthropic) -> dict[str, str]:
    messages = fake.requests[-1]["body"]["messages"]
    calls = {b["id"]: b["input"]["command"] for m in messages for b in m["content"] if b.get("type") == "tool_use"}
    return {
        calls[b["tool_use_id"]]: json.dumps(b["content"])
        for m in messages
        for b in m["content"]
        if b.get("type") == "tool_result"
    }


@pytest.mark.parametrize("name", ["settings.json", "settings.local.json"])
def test_deny_ask_and_headless_deny_of_an_untrusted_folder_still_hold(tmp_path: Path, name: str) -> None:
    config = tmp_path / "config" / "sagent"
    config.mkdir(parents=True)
    user = {"permissions": {"allow": ["Bash"], "headlessDefault": "allow"}}
    (config / "settings.json").write_text(json.dumps(user))
    repo = tmp_path / "repo"
    (repo / ".sagent").mkdir(parents=True)
    strict = {
        "model": "claude-opus-4-1",  # skipped: a folder not trusted does not choose the model
        "permissions": {"deny": ["Bash(echo:*)"], "ask": ["Bash(ls:*)"], "headlessDefault": "deny"},
    }
    (repo / ".sagent" / name).write_text(json.dumps(strict))
    calls = [("Bash", {"command": c}) for c in ("echo denied", "ls", "pwd")]
    with FakeAnthropic([tool_use_response(calls), text_response("done")]) as fake:
        env = {
            **os.environ,
            "ANTHROPIC_API_KEY": "sk-ant-test",
            "ANTHROPIC_BASE_URL": fake.url,
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "XDG_DATA_HOME": str(tmp_path / "data"),
        }
        out = subprocess.run(
            [sys.executable, "-m", "sagent.cli.main", "-p", "go"],
            capture_output=True,
            text=True,
            env=env,
            cwd=repo,
            stdin=subprocess.DEVNULL,
            timeout=60,
        )
        results = tool_results(fake)
        assert all(r["body"]["model"] != "claude-opus-4-1" for r in fake.requests)
    assert out.returncode == 0, out.stderr
    assert "denied" in results["echo denied"] and "Bash(echo:*)" in results["echo denied"]
    assert "denied" in results["ls"]
    assert str(repo.resolve()) in results["pwd"] and "denied" not in results["pwd"]
    assert out.stderr.count("not trusted") == 1
