"""examples/08_claude_agent_sdk.py, verbatim, against the fake Anthropic server: the SDK program the docs
show runs on sagent, and its `can_use_tool` answers the permission question."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response
from tests.sdk.harness import sent_text

EXAMPLE = Path(__file__).parent.parent.parent / "examples" / "08_claude_agent_sdk.py"


def test_the_sdk_example_runs_on_sagent(tmp_path: Path) -> None:
    steps = [
        tool_use_response([("List", {"path": "."}), ("Write", {"path": "other.txt", "content": "x"})]),
        text_response("The folder holds the examples."),
        text_response("One of them is 01_first_agent.py."),
    ]
    with FakeAnthropic(steps) as fake:
        env = {
            **os.environ,
            "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests-0001",
            "ANTHROPIC_BASE_URL": fake.url,
            "XDG_DATA_HOME": str(tmp_path / "data"),
        }
        done = subprocess.run(
            [sys.executable, str(EXAMPLE)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
        )
        bodies = fake.bodies()
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("sagent ") and lines[0].endswith(" on claude-sonnet-4-6")
    assert "asked: Write other.txt" in lines
    assert "claude-sonnet-4-6: The folder holds the examples." in lines
    assert "claude-sonnet-4-6: One of them is 01_first_agent.py." in lines
    assert sum(line.startswith("result: success, ") for line in lines) == 2
    assert "only notes.txt may be written" in sent_text(bodies[1:2]) and "01_first_agent.py" in sent_text(bodies[1:2])
    assert not (EXAMPLE.parent / "other.txt").exists()
