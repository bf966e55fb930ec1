"""The official Claude Agent SDK for Python, pointed at sagent: a `cli_path` wrapper that runs
`python -m sagent` on one of the fake providers, and the three providers the SDK tests run on.

    with provider.fake(steps) as fake:
        options = ClaudeAgentOptions(cli_path=cli(fake, provider, tmp_path), cwd=project)
        async for message in query(prompt="hi", options=options): ...
"""

from __future__ import annotations

import json
import shlex
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.fakes import anthropic_server as anth
from tests.fakes import gemini_server as gem
from tests.fakes import openai_responses_server as resp


@dataclass(frozen=True)
class Provider:
    """One provider's fake server and how sagent is started on it."""

    name: str
    fake: Callable[[list[Any]], Any]
    text: Callable[[str], Any]  # a step: the model answers `text`
    tools: Callable[[list[tuple[str, dict[str, Any]]]], Any]  # a step: the model calls these tools
    args: tuple[str, ...]
    keys: dict[str, str]
    model: str

    def __str__(self) -> str:
        return self.name


ANTHROPIC = Provider(
    "anthropic",
    anth.FakeAnthropic,
    anth.text_response,
    anth.tool_use_response,
    ("--provider", "anthropic"),
    {"ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests-0001"},
    "claude-sonnet-4-6",
)
OPENAI = Provider(
    "openai",
    resp.FakeResponses,
    resp.responses_text,
    resp.responses_tools,
    ("--provider", "openai"),
    {"OPENAI_API_KEY": "sk-test"},
    "gpt-5.4",
)
GEMINI = Provider(
    "gemini",
    gem.FakeGemini,
    gem.gemini_text,
    gem.gemini_tools,
    ("--provider", "google"),
    {"GEMINI_API_KEY": "g-test"},
    "gemini-3-flash-preview",
)
PROVIDERS = [ANTHROPIC, OPENAI, GEMINI]


def cli(fake: Any, provider: Provider, tmp_path: Path, *extra: str) -> str:
    """A script the SDK runs as its CLI: sagent on `fake`, with the SDK's own flags after ours."""
    script = tmp_path / f"sagent-{provider.name}"
    env = {**provider.keys, "XDG_DATA_HOME": str(tmp_path / "data")}
    exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items())
    args = " ".join(shlex.quote(a) for a in (*provider.args, "--base-url", fake.url, *extra))
    script.write_text(f'#!/bin/sh\n{exports}exec {shlex.quote(sys.executable)} -m sagent {args} "$@"\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


def sent_text(bodies: list[Any]) -> str:
    """Every request the fake received, as one text to search."""
    return json.dumps(bodies, ensure_ascii=False)
