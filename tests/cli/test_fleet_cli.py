"""A fleet from the command line: the main agent spawns two workers that message each other, against
the fake Anthropic server, and the JSON result counts every agent's spend."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.cli.test_headless import env_for, run_sagent
from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response

# claude-sonnet-4-6: $3 per million input tokens, $15 per million output; each fake response is 100 in, 20 out.
PER_RESPONSE = 100 * 3 / 1e6 + 20 * 15 / 1e6


def label_of(request: dict) -> str:
    system = request["body"].get("system") or ""
    text = system if isinstance(system, str) else " ".join(block.get("text", "") for block in system)
    found = re.search(r'You are the sub-agent "([^"]+)"', text)
    return found.group(1) if found else "main"


def texts_sent(request: dict) -> str:
    return json.dumps(request["body"]["messages"])


def test_two_workers_message_each_other_and_the_result_counts_every_response(tmp_path: Path) -> None:
    scripts = {
        "main": [
            tool_use_response(
                [
                    ("AgentSpawn", {"prompt": "Ask w2 which port the server uses.", "label": "w1", "persistent": True}),
                    ("AgentSpawn", {"prompt": "Answer questions about the server.", "label": "w2", "persistent": True}),
                ]
            ),
            text_response("Waiting for w1 and w2."),
            *[text_response("Noted.") for _ in range(6)],
        ],
        "w1": [
            tool_use_response([("AgentSend", {"to": "w2", "message": "Which port does the server use?"})]),
            text_response("Asked w2."),
            text_response("The server uses port 8080."),
            text_response("Nothing more."),
        ],
        "w2": [
            text_response("Ready for questions."),
            tool_use_response([("AgentSend", {"to": "w1", "message": "Port 8080."})]),
            text_response("Answered w1."),
            text_response("Nothing more."),
        ],
    }
    with FakeAnthropic(scripts=scripts, route=label_of) as fake:
        done = run_sagent(
            [
                "-p",
                "Find the server's port with two workers.",
                "--output-format",
                "json",
                "--model",
                "claude-sonnet-4-6",
            ],
            env_for(fake, tmp_path),
            cwd=tmp_path,
        )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    by_agent = {label: [r for r in fake.requests if label_of(r) == label] for label in scripts}
    # The workers talked: w2 got w1's question, and w1 got w2's answer, each naming its sender.
    assert any("[message from w1]\\nWhich port does the server use?" in texts_sent(r) for r in by_agent["w2"])
    assert any("[message from w2]\\nPort 8080." in texts_sent(r) for r in by_agent["w1"])
    # main waited for both workers: the last thing it heard included w1's finding.
    assert "The server uses port 8080." in texts_sent(by_agent["main"][-1])
    assert result["subtype"] == "success" and result["is_error"] is False
    # The total is every response of every agent, and the per-model table says the same.
    assert len(fake.requests) == sum(len(v) for v in by_agent.values()) >= 8
    assert result["total_cost_usd"] == pytest.approx(len(fake.requests) * PER_RESPONSE)
    usage = result["modelUsage"]["claude-sonnet-4-6"]
    assert usage["costUSD"] == pytest.approx(result["total_cost_usd"])
    assert usage["inputTokens"] == 100 * len(fake.requests)
