"""SelfHosted through the library: a tiny random Llama on the CPU streams, counts, stops and calls tools.

A random model writes nothing useful, so where a test needs a chosen text (a tool call, an answer) a
logits processor forces its tokens; the rest of the path is the real one: `generate` in a thread, the
streamer, the tokenizer's decoding, the chat template and sagent's parser.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from sagent.agent.agent import Agent
from sagent.events import ResponseComplete, TextDelta, ThinkingDelta, ToolFinished
from sagent.providers.base import BadRequestError
from sagent.providers.catalog import cost_of, runs_locally
from sagent.providers.selfhosted import SelfHostedModel
from sagent.providers.selfhosted_chat import render_prompt
from sagent.providers.selfhosted_load import loaded_models
from sagent.tools import builtin_tools
from sagent.types import AssistantMessage, ModelRequest, ToolResult, ToolSpec, Usage, UserMessage
from tests.selfhosted.tiny_hf import forcing, read_config

READ = ToolSpec("Read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})
CALL = '<tool_call>\n{"name": "Read", "arguments": {"path": "a.txt"}}\n</tool_call>'


def only(name: str) -> list[Any]:
    return [t for t in builtin_tools() if t.name == name]


def tokenizer_of(folder: Path) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(folder)


def ask(text: str, **options: Any) -> ModelRequest:
    return ModelRequest("You are terse.", (UserMessage.of(text),), **options)


async def collect(model: SelfHostedModel, request: ModelRequest) -> tuple[list[Any], AssistantMessage]:
    events = [e async for e in model.stream(request)]
    final = events[-1]
    assert isinstance(final, ResponseComplete)
    return events, final.message


async def test_text_streams_in_deltas_with_usage_from_the_tokenizer_and_no_cost(snapshot: Path) -> None:
    tokenizer = tokenizer_of(snapshot)
    answer = "Hello from a tiny model. The file a.txt says hello."
    model = SelfHostedModel(f"{snapshot}+cpu", generation={"logits_processor": forcing(tokenizer, answer)})
    request = ask("hi")
    events, message = await collect(model, request)
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 1 and "".join(deltas) == answer  # streamed as it was made, not at the end
    assert message.text == answer and message.stop_reason == "end_turn"
    prompt_tokens = len(tokenizer(render_prompt(tokenizer, request), add_special_tokens=False)["input_ids"])
    answer_tokens = len(tokenizer.encode(answer, add_special_tokens=False)) + 1  # and the end token
    assert message.usage == Usage(input_tokens=prompt_tokens, output_tokens=answer_tokens)
    assert message.provider == "selfhosted" and message.model == model.name
    assert runs_locally(model.name) and cost_of(model.name, message.usage).total == 0
    assert cost_of(model.name, message.usage).priced  # free, not unpriced
    await model.aclose()


async def test_the_context_window_comes_from_the_config(snapshot: Path, plain_snapshot: Path) -> None:
    for folder in (snapshot, plain_snapshot):
        model = SelfHostedModel(str(folder))
        assert model.context_window == read_config(folder)["max_position_embeddings"]  # before loading
        await model.load()
        assert model.context_window == read_config(folder)["max_position_embeddings"]
        await model.aclose()
    assert (SelfHostedModel(str(snapshot)).context_window, SelfHostedModel(str(plain_snapshot)).context_window) == (
        2048,
        4096,
    )


async def test_max_tokens_caps_the_response(snapshot: Path) -> None:
    tokenizer = tokenizer_of(snapshot)
    long = "def add(a, b):\n    return a + b\n" * 4
    model = SelfHostedModel(f"{snapshot}+cpu", generation={"logits_processor": forcing(tokenizer, long, long)})
    _, capped = await collect(model, ask("code", max_tokens=5))
    assert capped.usage.output_tokens == 5 and capped.stop_reason == "max_tokens"
    assert long.startswith(capped.text) and len(capped.text) < len(long)
    await model.aclose()
    default = SelfHostedModel(f"{snapshot}+cpu", max_tokens=3)  # the constructor's cap when a request has none
    _, free = await collect(default, ask("anything"))
    assert free.usage.output_tokens <= 3
    await default.aclose()


async def test_a_stop_sequence_ends_the_response_before_it(snapshot: Path) -> None:
    tokenizer = tokenizer_of(snapshot)
    text = "alpha beta STOP gamma delta epsilon"
    model = SelfHostedModel(
        f"{snapshot}+cpu", stop=("STOP",), generation={"logits_processor": forcing(tokenizer, text)}
    )
    _, message = await collect(model, ask("go"))
    assert message.text == "alpha beta"
    whole = len(tokenizer.encode(text, add_special_tokens=False)) + 1
    assert message.usage.output_tokens < whole  # generation itself stopped, not only the text
    await model.aclose()


async def test_thinking_streams_as_thinking_when_asked_and_effort_none_turns_it_off(snapshot: Path) -> None:
    tokenizer = tokenizer_of(snapshot)
    thought = "<think>Reading the file first.</think>It says aaa."
    model = SelfHostedModel(f"{snapshot}+cpu", generation={"logits_processor": forcing(tokenizer, thought)})
    events, message = await collect(model, ask("what", effort="low"))
    assert "".join(e.text for e in events if isinstance(e, ThinkingDelta)) == "Reading the file first."
    assert message.text == "It says aaa." and message.content[0].type == "thinking"
    await model.aclose()
    # The template is told: with thinking off (no effort, no budget) it writes the empty think block itself.
    off = render_prompt(tokenizer, ask("what"))
    on = render_prompt(tokenizer, ask("what", thinking_budget=2048))
    assert off.endswith("<think>\n\n</think>\n\n") and not on.endswith("</think>\n\n")


async def test_a_tool_round_through_the_chat_templates_own_format(snapshot: Path, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("file a says aaa\n")
    tokenizer = tokenizer_of(snapshot)
    turns = forcing(tokenizer, CALL, "It says aaa.")
    model = SelfHostedModel(f"{snapshot}+cpu", generation={"logits_processor": turns})
    agent = Agent(model, tools=only("Read"), cwd=tmp_path)
    request = replace_messages(agent.request(), [UserMessage.of("What does a.txt say?")])
    prompt = render_prompt(tokenizer, request)
    assert '"name": "Read"' in prompt and "<tools>" in prompt  # the template rendered the tool schemas
    events = [e async for e in agent.run("What does a.txt say?")]
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert [(f.result.name, f.result.is_error) for f in finished] == [("Read", False)]
    assert "file a says aaa" in finished[0].result.text
    assert agent.history[-1].text == "It says aaa."
    # The second request carried the call and its result in the template's own shape.
    second = render_prompt(tokenizer, replace_messages(agent.request(), agent.history[:-1]))
    assert '<tool_call>\n{"name": "Read", "arguments": {"path": "a.txt"}}\n</tool_call>' in second
    assert "<tool_response>" in second and "file a says aaa" in second
    await agent.aclose()


def replace_messages(request: ModelRequest, messages: Any) -> ModelRequest:
    from dataclasses import replace

    return replace(request, messages=tuple(messages))


async def test_a_template_without_tools_gets_the_text_protocol(plain_snapshot: Path, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("file a says aaa\n")
    tokenizer = tokenizer_of(plain_snapshot)
    prompt = render_prompt(tokenizer, ask("read it", tools=(READ,)))
    assert "## Tools" in prompt and "<tool_call>" in prompt  # the protocol, in the system prompt
    turns = forcing(tokenizer, CALL, "It says aaa.")
    agent = Agent(
        SelfHostedModel(str(plain_snapshot), generation={"logits_processor": turns}),
        tools=only("Read"),
        cwd=tmp_path,
    )
    events = [e async for e in agent.run("What does a.txt say?")]
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert [(f.result.name, f.result.is_error) for f in finished] == [("Read", False)]
    assert agent.history[-1].text == "It says aaa."
    await agent.aclose()


async def test_a_malformed_call_is_an_error_result_and_never_runs(snapshot: Path, tmp_path: Path) -> None:
    tokenizer = tokenizer_of(snapshot)
    broken = '<tool_call>\n{"name": "Write", "arguments": {"path": "x.txt", "content": "no}\n</tool_call>'
    turns = forcing(tokenizer, broken, "Sorry.")
    agent = Agent(
        SelfHostedModel(str(snapshot), generation={"logits_processor": turns}),
        tools=only("Write"),
        cwd=tmp_path,
    )
    events = [e async for e in agent.run("write x.txt")]
    results = [m for m in agent.history if isinstance(m, ToolResult)]
    assert [(r.name, r.is_error) for r in results] == [("Write", True)]
    assert "not JSON" in results[0].text
    assert not (tmp_path / "x.txt").exists()
    assert any(isinstance(e, ToolFinished) for e in events)
    await agent.aclose()


async def test_agents_naming_one_model_share_its_weights_which_are_freed_after_the_last(snapshot: Path) -> None:
    first, second = SelfHostedModel(f"{snapshot}+cpu"), SelfHostedModel(f"{snapshot}+cpu")
    other = SelfHostedModel(f"{snapshot}+cpu+float16")  # another dtype: other weights
    a, b, c = await first.load(), await second.load(), await other.load()
    assert a is b and a.users == 2 and c is not a and c.dtype == "float16"
    await first.aclose()
    assert a in loaded_models() and a.users == 1
    _, message = await collect(second, ask("still here?", max_tokens=2))  # the survivor still runs
    assert message.usage.output_tokens <= 2
    await second.aclose()
    await other.aclose()
    assert a not in loaded_models() and c not in loaded_models() and a.model is None


class CountingSteps:
    """A stopping criterion that counts generation steps and signals the first one."""

    def __init__(self) -> None:
        self.steps = 0
        self.started = threading.Event()

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        import torch

        self.steps += 1
        self.started.set()
        return torch.zeros((input_ids.shape[0],), dtype=torch.bool)


async def test_closing_the_stream_stops_the_generation(snapshot: Path) -> None:
    from transformers import StoppingCriteria

    counter = CountingSteps()

    class Wrapped(StoppingCriteria):  # type: ignore[misc]
        def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
            return counter(input_ids, scores)

    model = SelfHostedModel(
        f"{snapshot}+cpu",
        generation={"stopping_criteria": [Wrapped()], "min_new_tokens": 1500},  # no end token before 1500
    )
    stream = model.stream(ask("talk", max_tokens=1500))
    async for event in stream:
        if isinstance(event, TextDelta):
            break
    await stream.aclose()  # what Esc or a closed agent does to a running stream
    loaded = model.loaded
    assert loaded is not None
    await asyncio.to_thread(loaded.lock.acquire)  # the worker let go of the model: generation ended
    loaded.lock.release()
    assert 0 < counter.steps < 1500
    await model.aclose()


async def test_a_bad_spec_is_a_clear_error_before_anything_loads(snapshot: Path) -> None:
    with pytest.raises(BadRequestError, match="unknown suffix 'gpu'"):
        SelfHostedModel(f"{snapshot}+gpu")
    import torch

    if not torch.cuda.is_available():  # the GPU path itself is checked where a GPU is (docs/selfhosted.md)
        with pytest.raises(BadRequestError, match=r"\+cuda was asked for, but torch sees no CUDA GPU"):
            SelfHostedModel(f"{snapshot}+cuda")
    missing = SelfHostedModel("/nowhere/such-model+cpu")
    with pytest.raises(BadRequestError, match="cannot load '/nowhere/such-model'"):
        await missing.load()


async def test_the_library_class_builds_the_model(snapshot: Path) -> None:
    from sagent.providers import Provider, SelfHosted

    model = SelfHosted().model(f"{snapshot}+cpu")
    assert isinstance(model, SelfHostedModel) and model.spec.device == "cpu"
    assert Provider.named("huggingface") is SelfHosted
    with pytest.raises(BadRequestError, match="needs a model id"):
        SelfHosted().model()


async def test_a_template_that_refuses_the_conversation_is_a_provider_error(snapshot: Path) -> None:
    model = SelfHostedModel(f"{snapshot}+cpu")
    await model.load()
    loaded = model.loaded
    assert loaded is not None
    saved = loaded.tokenizer.chat_template
    loaded.tokenizer.chat_template = "{{ raise_exception('Conversation roles must alternate') }}"
    try:
        with pytest.raises(BadRequestError, match="refused the request: Conversation roles must alternate"):
            await collect(model, ask("hi"))
    finally:
        loaded.tokenizer.chat_template = saved
        await model.aclose()
