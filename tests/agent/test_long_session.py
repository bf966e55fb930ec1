"""Long sessions against the fake Anthropic server with its prompt cache simulated: automatic compaction
(pruning first, then a checked summary), cache breakpoints, and recovery from "prompt is too long"."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from sagent.agent.agent import Agent
from sagent.agent.compaction import COMPACT_PREFIX, CompactionPolicy
from sagent.agent.session import SessionLog
from sagent.events import Compacted, ContextPruned, Result, TurnFinished
from sagent.providers.anthropic import AnthropicModel
from sagent.tools.files import Read
from tests.fakes.anthropic_cache import PromptCache
from tests.fakes.anthropic_server import FakeAnthropic, Fault, Reply, text_response

CODEWORD = "PELICAN-42"
WINDOW = 16_000
SUMMARY_ASK = "write a summary of the conversation above"


@pytest.fixture(autouse=True)
def data_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))


def texts(body: dict[str, Any]) -> list[str]:
    """Every text the request carries, tool results included."""
    out = []
    for message in body["messages"]:
        for block in message["content"]:
            if block.get("type") == "text":
                out.append(block["text"])
            elif block.get("type") == "tool_result":  # its content: a string, or a list of blocks
                content = block["content"]
                out += [content] if isinstance(content, str) else [b.get("text", "") for b in content]
    return out


def last_user_text(body: dict[str, Any]) -> str:
    turn = body["messages"][-1]
    return "\n".join(b.get("text", "") for b in turn["content"] if b.get("type") == "text")


class Reader:
    """A fake model that reads `files` files one response at a time, writes a summary when asked (one
    that forgets the user's words, as a careless model would), and answers the codeword question from
    whatever the request it receives still holds."""

    def __init__(self, files: int) -> None:
        self.files = files
        self.read = 0
        self.summaries = 0

    def __call__(self, request: dict[str, Any]) -> Reply:
        body = request["body"]
        asked = last_user_text(body)
        if SUMMARY_ASK in asked:
            self.summaries += 1
            progress = f"Read up to file_{self.read - 1:03d}."
            return text_response(f"## Goal\nRead the files.\n## Progress\n{progress}\n## Next step\nGo on.")
        if "What was the codeword?" in asked:
            found = re.findall(r"the codeword is (\S+?)\.", "\n".join(texts(body)))
            return text_response(f"The codeword is {found[0]}." if found else "I do not know the codeword.")
        if self.read < self.files:
            self.read += 1
            path = f"file_{self.read - 1:03d}.txt"
            call = {"type": "tool_use", "id": f"toolu_r{self.read:03d}", "name": "Read", "input": {"path": path}}
            return Reply([call], "tool_use", {"output_tokens": 30})
        return text_response("I have read every file.")


def project(tmp_path: Path, files: int) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    for n in range(files):
        lines = [f"def function_{n}_{i}(value):  # part {i} of file {n}" for i in range(28)]
        (root / f"file_{n:03d}.txt").write_text("\n".join(lines) + "\n")
    return root


async def test_a_200_turn_session_compacts_twice_and_still_knows_the_first_message(tmp_path) -> None:
    files = 198
    root = project(tmp_path, files)
    reader = Reader(files)
    cache = PromptCache()
    with FakeAnthropic([reader] * 400, cache=cache) as fake:
        model = AnthropicModel("fake-small", api_key="test", base_url=fake.url)
        agent = Agent(
            model,
            system="You read files for the user.",
            tools=[Read()],
            cwd=root,
            session=SessionLog.create(root, {}),
            compaction=CompactionPolicy(threshold=0.5, window=WINDOW),
        )
        events = [e async for e in agent.run(f"Remember this: the codeword is {CODEWORD}. Then read every file.")]
        events += [e async for e in agent.run("What was the codeword?")]
        await agent.aclose()
    turns = [e for e in events if isinstance(e, TurnFinished)]
    assert len(turns) == files + 2  # 200 turns of the conversation, summaries aside
    assert turns[-1].message.text == f"The codeword is {CODEWORD}."
    assert [e.subtype for e in events if isinstance(e, Result)] == ["success", "success"]

    compactions = [e for e in events if isinstance(e, ContextPruned | Compacted)]
    summaries = [e for e in compactions if isinstance(e, Compacted)]
    assert len(compactions) >= 4 and len(summaries) >= 2  # the threshold was crossed again and again
    assert all(e.trigger == "auto" for e in summaries) and reader.summaries == len(summaries)
    # Pruning comes first: every summary follows a pruning of the same compaction.
    for summary in summaries:
        assert isinstance(compactions[compactions.index(summary) - 1], ContextPruned)
    # The model's summaries forgot the user's words; the check put them back, verbatim.
    assert all(any("user message" in r for r in e.repaired) for e in summaries)
    assert f"the codeword is {CODEWORD}" in summaries[-1].summary.text

    bodies = [r["body"] for r in fake.requests if SUMMARY_ASK not in last_user_text(r["body"])]
    final = bodies[-1]
    assert final["messages"][0]["content"][0]["text"].startswith(COMPACT_PREFIX)
    # No request ever outgrew the window; each kept its breakpoints on the prefix and the newest turns.
    for request in fake.requests:
        assert sum(request["usage"].values()) - request["usage"]["output_tokens"] < WINDOW
    for body in bodies:
        assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
        assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
        assert "cache_control" in body["messages"][-1]["content"][-1]
    read = sum(r["usage"]["cache_read_input_tokens"] for r in fake.requests[2:])
    total = sum(sum(r["usage"].values()) - r["usage"]["output_tokens"] for r in fake.requests[2:])
    assert read / total > 0.6  # most of every request came from the cache, compactions notwithstanding


async def test_pruning_that_frees_enough_needs_no_summary(tmp_path) -> None:
    root = project(tmp_path, 20)
    reader = Reader(20)
    with FakeAnthropic([reader] * 40, cache=PromptCache()) as fake:
        model = AnthropicModel("fake-small", api_key="test", base_url=fake.url)
        agent = Agent(model, tools=[Read()], cwd=root, compaction=CompactionPolicy(threshold=0.5, window=WINDOW))
        events = [e async for e in agent.run("read every file")]
        await agent.aclose()
    pruned = [e for e in events if isinstance(e, ContextPruned)]
    assert pruned and not any(isinstance(e, Compacted) for e in events) and reader.summaries == 0
    first = pruned[0]
    assert first.tokens_after < first.tokens_before
    stub = first.results[0].content[0].text
    assert stub.startswith("[output pruned to save context;") and '"path": "file_000.txt"' in stub
    # The next request carried the stub instead of the file's text.
    after = next(r["body"] for r in fake.requests if stub in texts(r["body"]))
    assert not any("function_0_0(" in t for t in texts(after))


async def test_a_prompt_too_long_answer_compacts_and_sends_again(tmp_path) -> None:
    too_long = Fault(400, "invalid_request_error", "prompt is too long: 212000 tokens > 200000 maximum")
    steps = [
        text_response("The parser is in src/parse.py."),
        too_long,
        text_response("## Goal\nFind the parser.\n## Next step\nFix it."),
        text_response("Fixed."),
    ]
    with FakeAnthropic(steps) as fake:
        agent = Agent(AnthropicModel("claude-sonnet-4-6", api_key="test", base_url=fake.url), cwd=tmp_path)
        await agent.ask("where is the parser?")
        events = [e async for e in agent.run("now fix it")]
        await agent.aclose()
    compacted = next(e for e in events if isinstance(e, Compacted))
    assert compacted.trigger == "overflow" and compacted.replaced == 3
    assert events[-1].subtype == "success" and events[-1].text == "Fixed."
    summary_ask, again = fake.requests[2]["body"], fake.requests[3]["body"]
    assert SUMMARY_ASK in last_user_text(summary_ask)
    sent = texts(again)
    assert len(again["messages"]) == 1 and sent[0].startswith(COMPACT_PREFIX)
    assert "> where is the parser?" in sent[0] and "> now fix it" in sent[0]


async def test_a_provider_that_keeps_refusing_ends_the_run_with_the_error(tmp_path) -> None:
    too_long = Fault(400, "invalid_request_error", "prompt is too long: 212000 tokens > 200000 maximum")
    summary = text_response("## Goal\nFind the parser.")
    with FakeAnthropic([text_response("ok"), too_long, summary, too_long, summary, too_long]) as fake:
        agent = Agent(AnthropicModel("claude-sonnet-4-6", api_key="test", base_url=fake.url), cwd=tmp_path)
        await agent.ask("hello")
        events = [e async for e in agent.run("again")]
        await agent.aclose()
    assert len([e for e in events if isinstance(e, Compacted)]) == 2
    assert events[-1].subtype == "error_during_execution" and "context too long" in events[-1].text
