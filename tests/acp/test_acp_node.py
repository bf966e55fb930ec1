"""`sagent acp` driven by the npm `@agentclientprotocol/sdk` client (as .ci/run installs it in .ci/node): a
whole prompt turn with a permission question, on the Anthropic and Gemini fakes. Skipped, saying why,
where node or the package is missing."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.acp.acp_client import env_for
from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response
from tests.fakes.gemini_server import FakeGemini, gemini_text, gemini_tools

ROOT = Path(__file__).resolve().parents[2]
SDK = ROOT / ".ci" / "node" / "node_modules" / "@agentclientprotocol" / "sdk" / "dist" / "v1" / "stable" / "acp.js"
NODE = shutil.which("node")

pytestmark = [
    pytest.mark.skipif(NODE is None, reason="node is not installed"),
    pytest.mark.skipif(
        not SDK.exists(), reason="@agentclientprotocol/sdk is not in .ci/node (.ci/run installs it there)"
    ),
]

EDIT = {"path": "notes.txt", "old_string": "old line", "new_string": "new line"}


def run_editor(project: Path, env: dict[str, str], flags: list[str], prompt: str, answers: str) -> dict[str, Any]:
    command = [sys.executable, "-m", "sagent.cli.main", "acp", *flags]
    assert NODE is not None
    out = subprocess.run(
        [NODE, str(Path(__file__).with_name("node_client.mjs")), json.dumps(command), str(project), prompt, answers],
        capture_output=True,
        text=True,
        env={**env, "ACP_SDK": SDK.as_uri()},
        timeout=180,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.mark.parametrize("provider", ["anthropic", "google"])
def test_a_prompt_turn_with_a_permission_question(provider: str, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("old line\n")
    read = ("Read", {"path": "notes.txt"})
    if provider == "anthropic":
        fake: Any = FakeAnthropic(
            [tool_use_response([read]), tool_use_response([("Edit", EDIT)]), text_response("Done.")]
        )
        keys = {"ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests-0001", "ANTHROPIC_BASE_URL": ""}
    else:
        fake = FakeGemini([gemini_tools([read]), gemini_tools([("Edit", EDIT)]), gemini_text("Done.")])
        keys = {"GEMINI_API_KEY": "g-test"}
    with fake:
        if provider == "anthropic":
            keys["ANTHROPIC_BASE_URL"] = fake.url
            flags: list[str] = []
        else:
            flags = ["--provider", "google", "--base-url", fake.url]
        seen = run_editor(project, env_for(tmp_path, **keys), flags, "change old to new in notes.txt", "allow_once")
    assert seen["init"]["protocolVersion"] == 1 and seen["init"]["agentCapabilities"]["loadSession"] is True
    assert seen["session"]["modes"]["currentModeId"] == "default"
    assert seen["stopReason"] == "end_turn"
    assert (project / "notes.txt").read_text() == "new line\n"
    [question] = seen["questions"]
    assert question["toolCall"]["kind"] == "edit"
    assert [o["kind"] for o in question["options"]] == ["allow_once", "allow_always", "reject_once", "reject_always"]
    calls = [u for u in seen["updates"] if u["sessionUpdate"] == "tool_call"]
    assert [c["kind"] for c in calls] == ["read", "edit"]
    edit_id = calls[1]["toolCallId"]
    statuses = [u["status"] for u in seen["updates"] if u.get("toolCallId") == edit_id and "status" in u]
    assert statuses == ["pending", "in_progress", "completed"]
    assert calls[1]["content"][0]["type"] == "diff" and calls[1]["content"][0]["newText"] == "new line\n"
    text = "".join(u["content"]["text"] for u in seen["updates"] if u["sessionUpdate"] == "agent_message_chunk")
    assert text == "Done."
