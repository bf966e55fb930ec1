"""Malformed Gemini payloads are retried by the retry policy like any malformed response, and a run that
gets nothing else ends with one clear line: no raw Python error text, no traceback on stderr. A good answer
after a malformed one is used."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from sagent.events import ResponseComplete
from sagent.providers.base import RetryPolicy, stream_with_retry
from sagent.providers.faults import MalformedResponseError
from sagent.providers.google import GoogleModel
from sagent.types import ModelRequest, UserMessage
from tests.cli.test_headless import run_sagent
from tests.fakes import gemini_server as gem
from tests.fakes.sse_server import Stream

# Payloads that are not Gemini responses: not JSON, JSON of the wrong shape at every level.
MALFORMED: dict[str, Any] = {
    "not-json": "not json{",
    "truncated-json": '{"candidates": [{"content": {"parts": [{"text": "hel',
    "candidates-a-number": {"candidates": 5},
    "parts-a-string": {"candidates": [{"content": {"parts": "x"}}]},
    "content-a-list": {"candidates": [{"content": [1, 2]}]},
    "usage-a-string": {
        "candidates": [{"content": {"parts": [{"text": "a"}]}}],
        "usageMetadata": {"promptTokenCount": "many"},
    },
    "call-args-a-string": {"candidates": [{"content": {"parts": [{"functionCall": {"name": "Read", "args": "x"}}]}}]},
}
ATTEMPTS = 5  # the first try and the retry policy's four retries


def env(tmp_path: Path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return {**clean, "GEMINI_API_KEY": "k", "XDG_DATA_HOME": str(tmp_path / "data")}


def run(tmp_path: Path, fake: gem.FakeGemini) -> Any:
    args = ["-p", "hi", "--provider", "google", "--no-memory", "--output-format", "json", "--base-url", fake.url]
    return run_sagent(args, env(tmp_path), cwd=tmp_path)


FAST = RetryPolicy(base_delay=0.001)


async def ask(fake: gem.FakeGemini) -> str:
    model = GoogleModel("gemini-3-flash-preview", api_key="k", base_url=fake.url)
    request = ModelRequest("Be brief.", (UserMessage.of("hi"),))
    try:
        async for event in stream_with_retry(model, request, FAST):
            if isinstance(event, ResponseComplete):
                return event.message.text
    finally:
        await model.aclose()
    raise AssertionError("no answer")


@pytest.mark.parametrize("payload", list(MALFORMED.values()), ids=list(MALFORMED))
def test_malformed_payloads_are_retried_by_the_policy_then_raise_one_clear_error(payload: Any) -> None:
    with gem.FakeGemini([Stream([(None, payload)]) for _ in range(ATTEMPTS + 1)]) as fake:
        with pytest.raises(MalformedResponseError) as raised:
            asyncio.run(ask(fake))
        assert len(fake.requests) == ATTEMPTS  # retried as the policy says, then given up
    message = raised.value.message
    assert (
        "malformed chunk, not part of a Gemini response" in message and f"gave up after {ATTEMPTS} attempts" in message
    )
    assert raised.value.transient and raised.value.provider == "google"


@pytest.mark.parametrize("name", ["not-json", "parts-a-string"])
def test_the_cli_ends_in_one_clear_line_without_a_traceback(name: str, tmp_path: Path) -> None:
    with gem.FakeGemini([Stream([(None, MALFORMED[name])]) for _ in range(ATTEMPTS + 1)]) as fake:
        out = run(tmp_path, fake)
        sent = len(fake.requests)
    assert out.returncode == 1 and sent == ATTEMPTS
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr  # one line: no traceback, no asyncio noise from unclosed streams
    assert (
        "malformed chunk, not part of a Gemini response" in lines[0]
        and f"gave up after {ATTEMPTS} attempts" in lines[0]
    )
    result = json.loads(out.stdout)
    assert (
        result["subtype"] == "error_during_execution"
        and "malformed chunk, not part of a Gemini response" in result["result"]
    )


def test_a_good_answer_after_malformed_ones_is_used() -> None:
    steps: list[Any] = [
        Stream([(None, MALFORMED["parts-a-string"])]),
        Stream([(None, "not json{")]),
        gem.gemini_text("fine"),
    ]
    with gem.FakeGemini(steps) as fake:
        assert asyncio.run(ask(fake)) == "fine"
        assert len(fake.requests) == 3
