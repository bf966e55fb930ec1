"""`--advisor` and the settings' `advisor` from the command line, against the fake Anthropic server: the
executor (Haiku) asks, the advisor (Opus) answers, and the cost tables split the two roles."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sagent.advisor import advisor_target
from tests.cli.test_headless import env_for, records, run_sagent
from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response

pytestmark = pytest.mark.usefixtures("trust_tmp_path")  # the project files written here apply

RUN = ["--model", "claude-haiku-4-5", "--system", "Be brief.", "--no-memory", "--ephemeral", "--tools", "List"]


def test_advisor_flag_splits_cost_by_role_and_records_the_consultation(tmp_path: Path) -> None:
    steps = [
        tool_use_response([("Advisor", {"question": "which file first?"})]),
        text_response("Read main.py first.", input_tokens=2000, output_tokens=300),
        text_response("Start with main.py."),
    ]
    # An endpoint without Anthropic's server-side advisor: sagent consults the advisor itself.
    with FakeAnthropic(steps, advisor_pairs=set()) as fake:
        out = run_sagent(
            [
                "-p",
                "fix it",
                *RUN,
                "--advisor",
                "claude-opus-4-7",
                "--output-format",
                "stream-json",
                "--cwd",
                str(tmp_path),
            ],
            env_for(fake, tmp_path),
        )
        bodies = fake.bodies()[1:]  # the first offered the server-side advisor and was refused
    assert out.returncode == 0, out.stderr
    assert [b["model"] for b in bodies] == ["claude-haiku-4-5", "claude-opus-4-7", "claude-haiku-4-5"]
    assert "Advisor" in [t["name"] for t in bodies[0]["tools"]]
    assert [t["name"] for t in bodies[1]["tools"]] == ["advice"]  # only its structured answer: it never acts
    lines = records(out.stdout)
    consulted = next(r for r in lines if r.get("subtype") == "advisor_consulted")
    assert consulted["trigger"] == "tool" and consulted["native"] is False
    assert consulted["usage"]["input_tokens"] == 2000 and consulted["cost_usd"] > 0
    result = lines[-1]
    usage = result["modelUsage"]
    assert set(usage) == {"claude-haiku-4-5", "advisor/claude-opus-4-7"}
    assert usage["advisor/claude-opus-4-7"]["inputTokens"] == 2000
    assert result["total_cost_usd"] == pytest.approx(sum(m["costUSD"] for m in usage.values()))
    assert result["result"] == "Start with main.py."  # the executor's words, not the advisor's


def test_advisor_from_a_settings_file_and_a_bad_advisor_in_one_line(tmp_path: Path) -> None:
    (tmp_path / ".sagent").mkdir()
    (tmp_path / ".sagent" / "settings.json").write_text(json.dumps({"advisor": "anthropic:claude-opus-4-7"}))
    steps = [tool_use_response([("Advisor", {"question": "?"})]), text_response("hint"), text_response("done")]
    with FakeAnthropic(steps, advisor_pairs=set()) as fake:
        out = run_sagent(["-p", "go", *RUN, "--output-format", "json"], env_for(fake, tmp_path), cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        assert fake.bodies()[2]["model"] == "claude-opus-4-7"
    env = {k: v for k, v in env_for(fake, tmp_path).items() if k != "OPENAI_API_KEY"}
    bad = run_sagent(["-p", "go", *RUN, "--advisor", "gpt-5.4"], env, cwd=tmp_path)
    assert bad.returncode != 0 and "--advisor gpt-5.4" in bad.stderr and "Traceback" not in bad.stderr


def test_advisor_names() -> None:
    assert advisor_target("claude-opus-4-7") == (None, "claude-opus-4-7")
    assert advisor_target("Anthropic:claude-opus-4-7") == ("anthropic", "claude-opus-4-7")
    assert advisor_target("LlamaCpp") == ("local", None)
    assert advisor_target("local:/m/q.gguf") == ("local", "/m/q.gguf")
    assert advisor_target("owner/model:free") == (None, "owner/model:free")
