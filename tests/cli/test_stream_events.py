"""`--include-partial-messages` writes the whole stream of each response, as Claude Code does: the Anthropic
Messages event sequence (message_start, each block's start, deltas and stop, message_delta, message_stop)
before the response's `assistant` record, on every provider. Against the fake Anthropic server, the events
are the ones the API itself streamed."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_headless import records, run_sagent
from tests.fakes import anthropic_server as anth
from tests.fakes import gemini_server as gem
from tests.fakes import openai_chat_server as chat

USAGE = {"prompt_tokens": 900, "completion_tokens": 30, "total_tokens": 930}


def responses(lines: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The stream events of each response, up to and with its assistant record."""
    found: list[list[dict[str, Any]]] = []
    for line in lines:
        if line["type"] == "stream_event":
            if line["event"]["type"] == "message_start":
                found.append([])
            found[-1].append(line)
        elif line["type"] == "assistant":
            found[-1].append(line)
    return found


def shape(events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """Each event but the deltas, with its block's index and kind, and each block's streamed text."""
    out: list[tuple[Any, ...]] = []
    texts: dict[int, str] = {}
    for event in events:
        kind = event["type"]
        if kind == "content_block_delta":
            delta = event["delta"]
            texts[event["index"]] = texts.get(event["index"], "") + delta.get(
                "text", delta.get("thinking", delta.get("partial_json", ""))
            )
        elif kind == "content_block_start":
            out.append((kind, event["index"], event["content_block"]["type"]))
        elif kind == "content_block_stop":
            out.append((kind, event["index"], texts.get(event["index"], "")))
        elif kind != "ping":
            out.append((kind,))
    return out


def test_each_response_streams_as_the_anthropic_api_streamed_it(tmp_path: Path) -> None:
    steps = [
        anth.Reply(
            [
                {"type": "thinking", "thinking": "Which file holds it?", "signature": "sig-1"},
                {"type": "text", "text": "I will read it."},
                {"type": "tool_use", "id": "toolu_read01", "name": "Read", "input": {"path": "VERSION"}},
            ],
            "tool_use",
        ),
        anth.text_response("Version 4.2.0."),
    ]
    (tmp_path / "VERSION").write_text("4.2.0\n")
    env = {**os.environ, "ANTHROPIC_API_KEY": "sk-ant-test", "XDG_DATA_HOME": str(tmp_path / "data")}
    args = ["-p", "Which version?", "--output-format", "stream-json", "--include-partial-messages"]
    with anth.FakeAnthropic(steps) as fake:
        out = run_sagent([*args, "--provider", "anthropic", "--base-url", fake.url], env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    streamed = responses(records(out.stdout))
    assert len(streamed) == 2
    for step, response in zip(steps, streamed, strict=True):
        *events, assistant = response
        assert assistant["type"] == "assistant"
        expected = [event for _, event in anth.sse_events(step, "claude")]
        assert shape([e["event"] for e in events]) == shape(expected)
        stop = next(e["event"] for e in events if e["event"]["type"] == "message_delta")
        assert stop["delta"]["stop_reason"] == assistant["message"]["stop_reason"] == step.stop_reason
        assert all(e["session_id"] == assistant["session_id"] and e["uuid"] for e in events)
    tool_start = next(
        e["event"] for e in streamed[0] if e["event"].get("type") == "content_block_start" and e["event"]["index"] == 2
    )
    assert tool_start["content_block"] == {"type": "tool_use", "id": "toolu_read01", "name": "Read", "input": {}}


@pytest.mark.parametrize(
    ("server", "steps", "args", "keys", "blocks"),
    [
        (
            gem.FakeGemini,
            [gem.gemini_tools([("Read", {"path": "VERSION"})], text="Reading."), gem.gemini_text("Version 4.2.0.")],
            ["--model", "gemini-3-flash-preview"],
            {"GEMINI_API_KEY": "g-test"},
            ["text", "tool_use"],
        ),
        (
            chat.FakeChat,
            [chat.tool_chunks([("Read", '{"path": "VERSION"}')], USAGE), chat.text_chunks("Version 4.2.0.", USAGE)],
            ["--provider", "moonshot"],
            {"MOONSHOT_API_KEY": "mk-test"},
            ["tool_use"],
        ),
    ],
    ids=["gemini", "openai-chat"],
)
def test_other_providers_stream_the_same_sequence(server, steps, args, keys, blocks, tmp_path: Path) -> None:
    (tmp_path / "VERSION").write_text("4.2.0\n")
    env = {**os.environ, **keys, "XDG_DATA_HOME": str(tmp_path / "data")}
    flags = ["-p", "Which version?", "--output-format", "stream-json", "--include-partial-messages", *args]
    with server(steps) as fake:
        out = run_sagent([*flags, "--base-url", fake.url], env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    streamed = responses(records(out.stdout))
    assert len(streamed) == 2
    first, second = ([e["event"] for e in response[:-1]] for response in streamed)
    assert shape(first)[0] == ("message_start",) and shape(first)[-2:] == [("message_delta",), ("message_stop",)]
    started = [s for s in shape(first) if s[0] == "content_block_start"]
    assert [(s[1], s[2]) for s in started] == list(enumerate(blocks))
    arguments = next(s[2] for s in shape(first) if s[0] == "content_block_stop" and s[1] == len(blocks) - 1)
    assert json.loads(arguments) == {"path": "VERSION"}  # the tool call's argument deltas, in its own block
    assert shape(second) == [
        ("message_start",),
        ("content_block_start", 0, "text"),
        ("content_block_stop", 0, "Version 4.2.0."),
        ("message_delta",),
        ("message_stop",),
    ]
