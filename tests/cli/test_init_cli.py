"""`sagent -p /init`: the REPL's /init, headless: the model is asked to look at the repository and write
AGENTS.md, and does it through its tools."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response


def test_p_init_writes_agents_md(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / "Makefile").write_text("test:\n\tpytest\n")
    written = "# project\n\nTest with `make test`.\n"
    steps = [
        tool_use_response([("Read", {"path": "Makefile"})]),
        tool_use_response([("Write", {"path": "AGENTS.md", "content": written})]),
        text_response("Wrote AGENTS.md."),
    ]
    with FakeAnthropic(steps) as fake:
        env = {
            **os.environ,
            "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests-0001",
            "ANTHROPIC_BASE_URL": fake.url,
            "XDG_DATA_HOME": str(tmp_path / "data"),
        }
        done = subprocess.run(
            [sys.executable, "-m", "sagent.cli.main", "-p", "/init", "--permission-mode", "acceptEdits"],
            capture_output=True,
            text=True,
            env=env,
            cwd=project,
            timeout=120,
        )
        first = fake.requests[0]["body"]["messages"][0]
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Wrote AGENTS.md."
    assert (project / "AGENTS.md").read_text() == written
    asked = str(first["content"])
    assert "Write AGENTS.md" in asked and "Look at this repository" in asked


def test_p_init_without_a_writing_tool_says_so_before_any_request(tmp_path: Path) -> None:
    with FakeAnthropic([]) as fake:
        env = {
            **os.environ,
            "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests-0001",
            "ANTHROPIC_BASE_URL": fake.url,
            "XDG_DATA_HOME": str(tmp_path / "data"),
        }
        done = subprocess.run(
            [sys.executable, "-m", "sagent.cli.main", "-p", "/init", "--tools", "Read,Grep"],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=120,
        )
        assert fake.requests == []
    assert done.returncode == 2
    assert done.stderr.strip() == "sagent: /init needs the Write or Edit tool: name them in --tools"
