"""Every example in examples/ runs offline as it stands (no API key) and prints what it shows."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sagent.providers.registry import KEY_VARIABLES

EXAMPLES = Path(__file__).parent.parent / "examples"
KEYS = {variable for variables in KEY_VARIABLES.values() for variable in variables}


def run_example(name: str, tmp_path: Path, timeout: float = 120) -> str:
    env = {k: v for k, v in os.environ.items() if k not in KEYS and k != "ENDPOINT_URL"}
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name)], cwd=EXAMPLES, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_every_example_is_tested() -> None:
    tested = set(re.findall(r'run_example\("([^"]+)"', Path(__file__).read_text()))
    assert tested == {p.name for p in EXAMPLES.glob("[0-9]*.py")}


def test_first_agent(tmp_path: Path) -> None:
    out = run_example("01_first_agent.py", tmp_path)
    assert "[List] " in out and "01_first_agent.py" in out and "02_custom_tool.py" in out  # a real listing
    assert "answer: " in out and re.search(r"cost: \$0\.\d{4}", out)


def test_custom_tool(tmp_path: Path) -> None:
    out = run_example("02_custom_tool.py", tmp_path)
    words = (EXAMPLES / "_offline.py").read_text().lower().split()
    common = max(set(words), key=words.count)
    assert f"tool said: _offline.py: {len(words)} words; the most common is {common!r}" in out
    assert "'ignore_case': {'type': 'boolean'" in out and "'required': ['path']" in out


def test_tool_class(tmp_path: Path) -> None:
    out = run_example("03_tool_class.py", tmp_path)
    assert "[Notes error] add needs the text of the note" in out
    assert "[Notes] 1. buy milk\n2. call Ada" in out
    assert 'on disk: ["buy milk", "call Ada"]' in out


@pytest.mark.local_model
def test_openai_compatible_endpoint(tmp_path: Path) -> None:
    out = run_example("04_openai_compatible.py", tmp_path)
    assert re.search(r"openai-compat/smollm2 at http://127\.0\.0\.1:\d+/v1 answered: \S", out)


def test_reviewer_subagent(tmp_path: Path) -> None:
    out = run_example("05_reviewer_subagent.py", tmp_path)
    assert "[AgentSpawn] reviewer (" in out and "Verdict: one bug." in out
    assert "the reviewer read 2 lines, the first: '     1\\tdef average(numbers):'" in out
    own, total = map(float, re.findall(r"\$(\d+\.\d+)", out.split("spent: ")[1]))
    assert total > own > 0  # the reviewer's spend is in main's total


def test_peers_under_one_budget(tmp_path: Path) -> None:
    out = run_example("06_peers.py", tmp_path)
    assert "critic got from writer: sagent: one agent runtime, every provider." in out
    assert "writer got from critic: Good: short and concrete." in out
    assert "main got from writer: [idle] Final tagline, after the critique" in out
    spent = float(re.search(r"the tree spent \$(\d+\.\d+) of its \$0\.50 budget", out).group(1))
    assert 0 < spent < 0.5


def test_sequential_pattern(tmp_path: Path) -> None:
    out = run_example("09_sequential.py", tmp_path)
    assert "[writer] sagent is an agent runtime" in out and "[editor] sagent: one agent runtime" in out
    assert "answer: Approved: sagent: one agent runtime, every provider." in out
    by_steps, in_tree = map(float, re.findall(r"\$(\d+\.\d+)", out.split("spent: ")[1]))
    assert by_steps == in_tree > 0  # the steps' spend is the lead's tree's, once
    assert "ok: 4 sessions" in out and "6 handoffs sealed in both logs" in out


def test_parallel_pattern(tmp_path: Path) -> None:
    out = run_example("10_parallel.py", tmp_path)
    assert "[security] Blocker: an API key is hard-coded" in out and "[style] Nit: api_key is unused." in out
    assert "verdict: Request changes: remove the hard-coded key" in out
    assert re.search(r"spent: \$0\.\d{4} for 4 agents", out)


def test_triage_pattern(tmp_path: Path) -> None:
    out = run_example("11_triage.py", tmp_path)
    assert "'I was charged twice this month.' -> billing (a question about a charge)" in out
    assert "  [billing] You were charged twice" in out
    assert "-> support (a failing command)\n  [support] Run `uv sync` first" in out


def test_handoff_pattern(tmp_path: Path) -> None:
    out = run_example("12_handoff.py", tmp_path)
    assert "path: desk -> returns" in out
    assert "[order_status result] order 42: delivered on Monday, 2 items, $60" in out
    assert out.index("[desk] I am passing you") < out.index("[returns] I have started a $60 refund")
    assert "answer: I have started a $60 refund for order 42" in out


@pytest.mark.local_model
def test_stream_json_consumer(tmp_path: Path) -> None:
    out = run_example("07_stream_json.py", tmp_path, timeout=300)
    assert re.search(r"session \S+ on smollm2 with \d+ tools", out)
    assert "result: success" in out and "system/init x1" in out and "result/success x1" in out
    assert out.rstrip().endswith("exit code: 0")


@pytest.mark.local_model
def test_claude_agent_sdk_program(tmp_path: Path) -> None:
    out = run_example("08_claude_agent_sdk.py", tmp_path, timeout=300)
    assert re.search(r"sagent \S+ on smollm2", out)
    assert out.count("result: success, ") == 2
