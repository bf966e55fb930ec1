"""`sagent -p` in a subprocess against the fake Anthropic server, as a user (or a pipeline) runs it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic, fault_429, text_response, tool_use_response

TEST_SCRIPT = "from calc import add\nassert add(2, 3) == 5, 'add is wrong'\nprint('tests pass')\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (root / "test_calc.py").write_text(TEST_SCRIPT)
    return root


def env_for(fake: FakeAnthropic, tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests-0001",
        "ANTHROPIC_BASE_URL": fake.url,
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }


def run_sagent(args: list[str], env: dict[str, str], stdin: str = "", cwd: Path | None = None):
    return subprocess.run(
        [sys.executable, "-m", "sagent.cli.main", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
    )


def records(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def test_a_multi_round_task_reads_edits_and_tests_a_project(project: Path, tmp_path: Path) -> None:
    steps = [
        tool_use_response([("Read", {"path": "calc.py"}), ("Bash", {"command": "python test_calc.py"})]),
        tool_use_response([("Edit", {"path": "calc.py", "old_string": "a - b", "new_string": "a + b"})]),
        tool_use_response([("Bash", {"command": "python test_calc.py"})]),
        text_response("Fixed add(): it subtracted. The tests pass now."),
    ]
    with FakeAnthropic(steps) as fake:
        out = run_sagent(
            ["-p", "fix the failing test", "--output-format", "stream-json", "--cwd", str(project)],
            env_for(fake, tmp_path),
        )
        sent = [r["body"] for r in fake.requests]
    assert out.returncode == 0, out.stderr
    assert (project / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    recs = records(out.stdout)
    assert recs[0]["type"] == "system" and recs[0]["subtype"] == "init" and "Bash" in recs[0]["tools"]
    tool_results = [r["message"]["content"][0] for r in recs if r["type"] == "user"]
    assert "AssertionError: add is wrong" in tool_results[1]["content"] and "exit code 1" in tool_results[1]["content"]
    assert "+    return a + b" in tool_results[2]["content"]
    assert tool_results[3]["content"].strip() == "tests pass" and not tool_results[3]["is_error"]
    result = recs[-1]
    assert result["type"] == "result" and result["subtype"] == "success" and result["is_error"] is False
    assert result["num_turns"] == 4 and result["result"].startswith("Fixed add()")
    # 4 responses of 100 input and 20 output tokens on claude-sonnet-4-6 ($3 / $15 per million).
    assert result["total_cost_usd"] == pytest.approx(4 * (100 * 3 + 20 * 15) / 1e6)
    assert result["usage"]["input_tokens"] == 400
    assert list(result["modelUsage"]) == ["claude-sonnet-4-6"]
    # The model saw the tool results of each round.
    last = sent[-1]["messages"][-1]["content"]
    assert last[0]["type"] == "tool_result" and "tests pass" in json.dumps(last[0]["content"])


def test_text_and_json_output_formats(project: Path, tmp_path: Path) -> None:
    with FakeAnthropic([text_response("plain answer"), fault_429(0), text_response("json answer")]) as fake:
        env = env_for(fake, tmp_path)
        text = run_sagent(["--cwd", str(project)], env, stdin="what is this?")
        as_json = run_sagent(["-p", "again", "--output-format", "json", "--cwd", str(project)], env)
    assert text.returncode == 0 and text.stdout == "plain answer\n"
    assert as_json.returncode == 0
    (record,) = records(as_json.stdout)
    assert record["type"] == "result" and record["result"] == "json answer"
    for key in ("session_id", "num_turns", "usage", "total_cost_usd", "duration_ms", "is_error"):
        assert key in record


def test_exit_codes_for_limits_and_errors(project: Path, tmp_path: Path) -> None:
    loop = [tool_use_response([("List", {})]) for _ in range(3)]
    with FakeAnthropic(loop) as fake:
        rounds = run_sagent(["-p", "x", "--max-tool-rounds", "2", "--cwd", str(project)], env_for(fake, tmp_path))
    assert rounds.returncode == 3 and "2 tool rounds" in rounds.stderr
    pricey = [tool_use_response([("List", {})], input_tokens=1_000_000)]
    with FakeAnthropic(pricey) as fake:
        budget = run_sagent(
            ["-p", "x", "--max-budget-usd", "0.5", "--output-format", "json", "--cwd", str(project)],
            env_for(fake, tmp_path),
        )
    assert budget.returncode == 4
    assert records(budget.stdout)[0]["subtype"] == "error_max_budget_usd"
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data")}
    env.pop("ANTHROPIC_API_KEY", None)
    missing = run_sagent(["-p", "x", "--provider", "anthropic", "--cwd", str(project)], env)
    assert missing.returncode == 2 and "set ANTHROPIC_API_KEY" in missing.stderr  # found before any request


def test_stream_json_input_answers_each_message_in_one_session(project: Path, tmp_path: Path) -> None:
    def line(text: str) -> str:
        return json.dumps({"type": "user", "message": {"role": "user", "content": text}}) + "\n"

    with FakeAnthropic([text_response("one"), text_response("two")]) as fake:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "sagent.cli.main",
                *("--input-format", "stream-json"),
                *("--output-format", "stream-json"),
                "--cwd",
                str(project),
            ],
            env=env_for(fake, tmp_path),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(line("first"))
        proc.stdin.flush()
        seen = []
        while not seen or seen[-1]["type"] != "result":  # the first message is answered while stdin stays open
            seen.append(json.loads(proc.stdout.readline()))
        proc.stdin.write(line("second"))
        proc.stdin.close()
        rest = proc.stdout.read()
        proc.wait(timeout=60)
        err = proc.stderr.read() if proc.stderr else ""
        second = fake.requests[1]["body"]["messages"]
    assert proc.returncode == 0, err
    recs = seen + records(rest)
    answers = [r["message"]["content"][0]["text"] for r in recs if r["type"] == "assistant"]
    assert answers == ["one", "two"]
    assert [r["result"] for r in recs if r["type"] == "result"] == ["one", "two"]
    assert len({r["session_id"] for r in recs}) == 1
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    bad = run_sagent(["--input-format", "stream-json", "--cwd", str(project)], env_for(fake, tmp_path), stdin="nope\n")
    assert bad.returncode == 2 and "bad input" in bad.stderr


def test_a_run_killed_mid_tool_resumes_with_continue(project: Path, tmp_path: Path) -> None:
    marker = project / "started"
    slow = f"touch {marker} && sleep 30"
    with FakeAnthropic([tool_use_response([("Bash", {"command": slow})])]) as fake:
        env = env_for(fake, tmp_path)
        proc = subprocess.Popen(
            [sys.executable, "-m", "sagent.cli.main", "-p", "run the slow thing", "--cwd", str(project)],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 30
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marker.exists(), "the tool never started"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        subprocess.run(["pkill", "-f", slow], check=False)  # the orphaned sleep, in its own group
        fake.add(text_response("picked up where we stopped"))
        resumed = run_sagent(["--continue", "-p", "what happened?", "--cwd", str(project)], env)
        body = fake.requests[1]["body"]
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout == "picked up where we stopped\n"
    messages = body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[0]["content"][0]["text"] == "run the slow thing"
    tool_use = messages[1]["content"][0]
    answer, question = messages[2]["content"]
    assert answer["type"] == "tool_result" and answer["tool_use_id"] == tool_use["id"] and answer["is_error"]
    assert "interrupted" in json.dumps(answer["content"])
    assert question["text"] == "what happened?"
    sessions = list((tmp_path / "data" / "sagent" / "sessions").rglob("*.jsonl"))
    assert len(sessions) == 1
    assert "sk-ant-fake-key-for-tests-0001" not in sessions[0].read_text()
