"""SelfHosted as a user runs it: `sagent -p` on the tiny snapshot, its errors, `sagent providers`, and a
session that moves from another provider to it and back, keeping its history."""

from __future__ import annotations

import json
import os
from pathlib import Path

from sagent.agent.agent import Agent
from sagent.providers.selfhosted import SelfHostedModel
from sagent.providers.selfhosted_chat import render_prompt
from sagent.types import AssistantMessage
from tests.cli.test_headless import records, run_sagent
from tests.fakes import openai_chat_server as chat
from tests.providers.dialects import OPENAI_COMPAT
from tests.selfhosted.tiny_hf import forcing


def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data"), "HF_HUB_OFFLINE": "1"}


def test_the_cli_streams_a_local_answer_capped_by_max_tokens_at_no_cost(snapshot: Path, tmp_path: Path) -> None:
    args = ["-p", "say something", "--provider", "SelfHosted", "--model", f"{snapshot}+cpu", "--max-tokens", "6"]
    args += ["--output-format", "stream-json", "--include-partial-messages", "--tools", "none"]
    out = run_sagent(args, env(tmp_path), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr and "Loading weights" not in out.stderr
    lines = records(out.stdout)
    init = next(r for r in lines if r["type"] == "system")
    assert init["model"] == f"{snapshot}+cpu"
    deltas = [r["event"] for r in lines if r["type"] == "stream_event"]
    assert deltas, "the answer streamed in deltas"
    result = lines[-1]
    assert result["type"] == "result" and not result["is_error"]
    usage = result["modelUsage"][f"{snapshot}+cpu"]
    assert 0 < usage["outputTokens"] <= 6 and usage["inputTokens"] > 0
    assert usage["costUSD"] == 0 and usage["priced"] is True and result["total_cost_usd"] == 0
    assert "unpriced_models" not in result


def test_a_bad_spec_is_one_line_and_a_usage_exit(snapshot: Path, tmp_path: Path) -> None:
    for spec, message in (
        (f"{snapshot}+gpu", "unknown suffix 'gpu'"),
        (f"{snapshot}+cpu+cuda", "gives the device twice"),
    ):
        out = run_sagent(["-p", "hi", "--provider", "selfhosted", "--model", spec], env(tmp_path), cwd=tmp_path)
        assert out.returncode != 0 and "Traceback" not in out.stderr
        assert message in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr
    out = run_sagent(["-p", "hi", "--provider", "selfhosted"], env(tmp_path), cwd=tmp_path)
    assert out.returncode != 0 and "needs --model" in out.stderr and "Traceback" not in out.stderr


def test_sagent_providers_lists_selfhosted(tmp_path: Path) -> None:
    out = run_sagent(["providers"], env(tmp_path), cwd=tmp_path)
    assert out.returncode == 0
    row = next(line for line in out.stdout.splitlines() if line.startswith("selfhosted"))
    assert "HuggingFace" in row and "REPO_OR_FOLDER+DEVICE+DTYPE" in row


async def test_a_session_moves_to_selfhosted_and_back_keeping_its_history(snapshot: Path, tmp_path: Path) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(snapshot)
    local_answer = "The tiny model says hello."
    with chat.FakeChat([chat.text_chunks("Remote says the sky is blue."), chat.text_chunks("Both seen.")]) as fake:
        agent = Agent(OPENAI_COMPAT.model(fake.url), cwd=tmp_path, tools=[])
        [e async for e in agent.run("What colour is the sky?")]
        local = SelfHostedModel(f"{snapshot}+cpu", generation={"logits_processor": forcing(tokenizer, local_answer)})
        agent.switch_model(local)
        [e async for e in agent.run("And what does the local model say?")]
        prompt = render_prompt(tokenizer, agent.request())
        agent.switch_model(OPENAI_COMPAT.model(fake.url))
        [e async for e in agent.run("Summarise.")]
        await agent.aclose()
        bodies = fake.bodies()
    # The local model saw the remote turn; the remote one then saw the local turn, in order.
    assert "What colour is the sky?" in prompt and "Remote says the sky is blue." in prompt
    last = json.dumps(bodies[-1]["messages"])
    order = ["What colour is the sky?", "Remote says the sky is blue.", local_answer, "Summarise."]
    assert all(text in last for text in order)
    assert [last.index(text) for text in order] == sorted(last.index(text) for text in order)
    answers = [m for m in agent.history if isinstance(m, AssistantMessage)]
    assert [m.provider for m in answers] == ["moonshot", "selfhosted", "moonshot"]
    assert local.loaded is None  # closing the agent gave the weights back
