"""A `sagent --input-format stream-json --output-format stream-json` process driven as a client drives it,
against any provider's fake: lines written on its stdin while it works, its records read back.

    provider = PROVIDERS["anthropic"]
    with provider.server(Routes(provider, main=[...], helper=[...]).steps()) as fake:
        with StreamSession(provider, fake, tmp_path) as session:
            session.write("first")
            ...
            recs = session.finish()

`Routes` answers each request from the script of the agent that sent it (the main agent, or a sub-agent by
its label), so a sub-agent's requests and the main agent's may interleave. A step may be `Hold(step, until)`:
its answer waits (in the fake's thread, the connection held open) until `until()` holds, at most
`HOLD_LIMIT` seconds; `held.released_by_condition` says which ended the wait."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.fakes import anthropic_server as anth
from tests.fakes import gemini_server as gem
from tests.fakes import openai_chat_server as chat

HOLD_LIMIT = 40.0  # seconds: long enough for any slow machine, short enough for a failing test to end
USAGE = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}


@dataclass(frozen=True)
class Provider:
    name: str
    server: Callable[..., Any]
    text: Callable[[str], Any]
    tools: Callable[[list[tuple[str, dict[str, Any]]]], Any]
    args: tuple[str, ...]
    keys: dict[str, str]


PROVIDERS = {
    "anthropic": Provider(
        "anthropic",
        anth.FakeAnthropic,
        anth.text_response,
        anth.tool_use_response,
        ("--model", "claude-sonnet-4-6"),
        {"ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests-0001"},
    ),
    "openai-chat": Provider(
        "openai-chat",
        chat.FakeChat,
        lambda text: chat.text_chunks(text, USAGE),
        lambda calls: chat.tool_chunks([(name, json.dumps(args)) for name, args in calls], USAGE),
        ("--provider", "moonshot"),
        {"MOONSHOT_API_KEY": "mk-test"},
    ),
    "gemini": Provider(
        "gemini",
        gem.FakeGemini,
        gem.gemini_text,
        gem.gemini_tools,
        ("--model", "gemini-3-flash-preview"),
        {"GEMINI_API_KEY": "g-test"},
    ),
}


def strings(value: Any) -> list[str]:
    """Every string in a request body, however the provider nests it."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def label_of(request: dict[str, Any]) -> str:
    """The label of the agent that sent the request: a sub-agent's system prompt names it; else main."""
    for text in strings(request["body"]):
        found = re.search(r'You are the sub-agent "([^"]+)"', text)
        if found:
            return found.group(1)
    return "main"


def carries(request: dict[str, Any], marker: str) -> bool:
    """Whether the request's messages hold `marker` (the system prompt aside: it never holds user input)."""
    return any(marker in text for text in strings(request["body"]))


@dataclass
class Hold:
    """Answer with `step` once `until()` holds (checked every 20 ms), or after HOLD_LIMIT seconds."""

    step: Any
    until: Callable[[], bool]
    released_by_condition: bool | None = None

    def __call__(self, request: dict[str, Any]) -> Any:
        deadline = time.monotonic() + HOLD_LIMIT
        while not self.until() and time.monotonic() < deadline:
            time.sleep(0.02)
        self.released_by_condition = self.until()
        return self.step


@dataclass
class Routes:
    """Per-agent scripts: each request takes the next step of its sender's script."""

    scripts: dict[str, list[Any]]
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __init__(self, **scripts: list[Any]) -> None:
        self.scripts = {label: list(steps) for label, steps in scripts.items()}
        self.lock = threading.Lock()

    def answer(self, request: dict[str, Any]) -> Any:
        with self.lock:
            script = self.scripts.get(label_of(request), [])
            step = script.pop(0) if script else None
        if step is None:
            return None  # the fake answers 500: no step left
        return step(request) if callable(step) else step

    def steps(self, count: int = 40) -> list[Any]:
        return [self.answer] * count


def line(text: str) -> str:
    return json.dumps({"type": "user", "message": {"role": "user", "content": text}})


def wait_until(condition: Callable[[], bool], limit: float = 60.0) -> bool:
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


class StreamSession:
    """sagent with stream-json in and out, its records read as they come (in a thread)."""

    def __init__(self, provider: Provider, fake: Any, tmp_path: Path, *extra: str) -> None:
        cwd = tmp_path / "project"
        cwd.mkdir(exist_ok=True)
        self.cwd = cwd
        env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data"), **provider.keys}
        command = [sys.executable, "-m", "sagent.cli.main", *("--input-format", "stream-json")]
        command += [*("--output-format", "stream-json"), *provider.args, "--base-url", fake.url, *extra]
        self.proc = subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.records: list[dict[str, Any]] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            if raw.strip():
                self.records.append(json.loads(raw))

    def write(self, text: str, newline: bool = True) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((line(text) + ("\n" if newline else "")).encode())
        self.proc.stdin.flush()

    def write_raw(self, data: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data.encode())
        self.proc.stdin.flush()

    def results(self) -> list[dict[str, Any]]:
        return [r for r in self.records if r.get("type") == "result"]

    def finish(self, limit: float = 90.0) -> tuple[int, str]:
        """Close stdin and wait for the process: its exit code and stderr."""
        assert self.proc.stdin is not None
        if not self.proc.stdin.closed:
            self.proc.stdin.close()
        code = self.proc.wait(timeout=limit)
        self._reader.join(timeout=10)
        assert self.proc.stderr is not None
        return code, self.proc.stderr.read().decode(errors="replace")

    def __enter__(self) -> StreamSession:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
