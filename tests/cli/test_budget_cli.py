"""The budget, the window and numeric flags from the command line, against the fake Anthropic server: what
the server receives proves which requests were sent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_fleet_cli import label_of
from tests.cli.test_headless import env_for, records, run_sagent
from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response

SMALL_RUN = ["--model", "claude-sonnet-4-6", "--system", "Be brief.", "--no-memory", "--ephemeral"]


def sagent_env(fake: FakeAnthropic, tmp_path: Path) -> dict[str, str]:
    return {**env_for(fake, tmp_path), "TMPDIR": str(tmp_path)}


def test_a_budget_runs_exactly_the_calls_that_fit_and_the_total_prints_exactly(tmp_path: Path) -> None:
    # Each response: 100 input and 540 output tokens on claude-sonnet-4-6, $0.0084. Five fit in $0.042
    # exactly; added up as floats the five made 0.041999999999999996, and a sixth call ran.
    rounds = [tool_use_response([("List", {})], input_tokens=100, output_tokens=540) for _ in range(8)]
    with FakeAnthropic(rounds) as fake:
        out = run_sagent(
            [
                "-p",
                "list forever",
                *SMALL_RUN,
                "--tools",
                "List",
                "--max-budget-usd",
                "0.042",
                "--output-format",
                "json",
                "--cwd",
                str(tmp_path),
            ],
            sagent_env(fake, tmp_path),
        )
        sent = len(fake.requests)
    assert out.returncode == 4, out.stderr
    assert sent == 5
    assert '"total_cost_usd": 0.042,' in out.stdout  # printed exactly, not 0.041999999999999996
    (result,) = records(out.stdout)
    assert result["subtype"] == "error_max_budget_usd"
    assert result["modelUsage"]["claude-sonnet-4-6"]["costUSD"] == 0.042


def test_a_request_whose_input_alone_crosses_the_budget_is_never_sent(tmp_path: Path) -> None:
    task = "summarise this log\n" + "2026-11-23 12:00:00 INFO request served in 12 ms\n" * 6_000  # ~75k tokens
    with FakeAnthropic([text_response("never")]) as fake:
        out = run_sagent(
            [*SMALL_RUN, "--max-budget-usd", "0.1", "--output-format", "json", "--cwd", str(tmp_path)],
            sagent_env(fake, tmp_path),
            stdin=task,
        )
        sent = len(fake.requests)
    assert out.returncode == 4, out.stderr
    assert sent == 0
    (result,) = records(out.stdout)
    assert result["subtype"] == "error_max_budget_usd" and "was not sent" in result["result"]
    assert result["total_cost_usd"] == 0


def test_the_automatic_compaction_request_is_not_sent_past_the_budget(tmp_path: Path) -> None:
    task = "w " * 150_000  # about 75,000 tokens: over a 30% threshold, and $0.28 to summarise
    with FakeAnthropic([text_response("## Goal\nsummary"), text_response("done")]) as fake:
        out = run_sagent(
            [
                *SMALL_RUN,
                "--compact-at",
                "0.3",
                "--max-budget-usd",
                "0.2",
                "--output-format",
                "stream-json",
                "--cwd",
                str(tmp_path),
            ],
            sagent_env(fake, tmp_path),
            stdin=task,
        )
        sent = len(fake.requests)
    assert out.returncode == 4, out.stderr
    assert sent == 0
    recs = records(out.stdout)
    assert not [r for r in recs if r.get("subtype") == "compact_boundary"]
    assert recs[-1]["subtype"] == "error_max_budget_usd"


@pytest.mark.parametrize(
    "flag",
    [
        ["--max-budget-usd", "nan"],
        ["--max-budget-usd", "inf"],
        ["--max-budget-usd", "-1"],
        ["--background-after", "nan"],
        ["--background-after", "inf"],
        ["--compact-at", "nan"],
        ["--compact-at", "claude-sonnet-4-6=inf"],
        ["--max-tokens", "nan"],
    ],
)
def test_numeric_flags_refuse_nan_inf_and_negatives(flag: list[str], tmp_path: Path) -> None:
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data"), "ANTHROPIC_API_KEY": "sk-ant-unused"}
    out = run_sagent(["-p", "hi", *flag], env)
    assert out.returncode == 2
    errors = [line for line in out.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and flag[0] in errors[0] and flag[1].split("=")[-1] in errors[0]
    assert "Traceback" not in out.stderr
    assert not (tmp_path / "data").exists()  # refused before any session was made


def test_usage_is_the_sum_of_model_usage_with_a_sub_agent(tmp_path: Path) -> None:
    scripts = {
        "main": [
            tool_use_response([("AgentSpawn", {"prompt": "Count the files.", "label": "c"})]),
            text_response("There are two files.", input_tokens=400, output_tokens=30),
        ],
        "c": [text_response("2 files.", input_tokens=250, output_tokens=7, cache_read_input_tokens=50)],
    }
    with FakeAnthropic(scripts=scripts, route=label_of) as fake:
        out = run_sagent(
            ["-p", "How many files?", "--model", "claude-sonnet-4-6", "--output-format", "json"],
            sagent_env(fake, tmp_path),
            cwd=tmp_path,
        )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    models = result["modelUsage"].values()
    keys = {
        "input_tokens": "inputTokens",
        "output_tokens": "outputTokens",
        "cache_read_input_tokens": "cacheReadInputTokens",
        "cache_creation_input_tokens": "cacheCreationInputTokens",
    }
    assert result["usage"] == {ours: sum(m[theirs] for m in models) for ours, theirs in keys.items()}
    assert result["usage"]["input_tokens"] == 100 + 400 + 250 and result["usage"]["cache_read_input_tokens"] == 50
    assert result["total_cost_usd"] == sum(m["costUSD"] for m in models)


def test_fifty_megabytes_on_stdin_is_cut_to_fit_the_window_and_kept_whole_while_the_run_lasts(tmp_path: Path) -> None:
    lines = [f"line {n:08d} of a very large log\n" for n in range(1_600_000)]  # 51 MB
    data = "".join(lines)
    assert len(data) > 50 * 2**20
    with FakeAnthropic([text_response("The log repeats one line.")]) as fake:
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "sagent.cli.main",
                "-p",
                "What is in this log?",
                *SMALL_RUN,
                "--output-format",
                "json",
                "--cwd",
                str(tmp_path),
            ],
            input=data.encode(),
            capture_output=True,
            env=sagent_env(fake, tmp_path),
            timeout=120,
        )
        bodies = fake.bodies()
    assert out.returncode == 0, out.stderr.decode()
    (body,) = bodies
    sent = json.dumps(body)
    # claude-sonnet-4-6 holds 200,000 tokens: the request stays well within it (at 4 characters a token).
    assert len(sent) < 200_000 * 4 * 0.6
    assert lines[0].strip() in sent and lines[-1].strip() in sent and lines[800_000].strip() not in sent
    notes = [line for line in out.stderr.decode().splitlines() if "standard input" in line]
    assert len(notes) == 1
    kept = Path(notes[0].rsplit(" ", 1)[-1])
    assert f"The whole input is in {kept}" in sent and "characters were cut here" in sent
    # The copy is private and whole while the run lasts (tests/security/test_robust_stdin.py watches it
    # live), and gone once the run ends: a 50 MB input must not stay behind in $TMPDIR.
    assert kept.parent == tmp_path and not kept.exists()
    assert not list(tmp_path.glob("sagent-stdin-*"))
