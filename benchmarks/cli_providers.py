"""What a subscription CLI costs per round: the same tool task on the Anthropic API and on AnthropicCLI, and
on the OpenAI API and on OpenAISubscription (Codex).

Each pair runs against the provider's fake server on 127.0.0.1, so only sagent and the CLI are measured: ROUNDS
tool rounds (Read through sagent's tools, over the MCP bridge for the CLI) then a final answer. Printed:
the CLI's start-up (agent start to the model's first request) and the time per tool round for each
provider; target: the CLI adds less than ROUND_EXTRA_MS per round over the API. Skipped (with the reason)
when the `claude` or `codex` binary is not installed (.ci/run puts them in .ci/node when npm is present).

    uv run python benchmarks/cli_providers.py
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# Run as a script, this folder comes first on the path, and its mcp.py would hide the MCP SDK the bridge uses.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "benchmarks"]

from sagent.agent.agent import Agent  # noqa: E402
from sagent.events import Result  # noqa: E402
from sagent.providers.base import Model  # noqa: E402
from sagent.tools import builtin_tools  # noqa: E402
from tests.fakes.anthropic_server import FakeAnthropic, Step, text_response, tool_use_response  # noqa: E402
from tests.fakes.sse_server import FakeServer  # noqa: E402

ROUNDS = 8
ROUND_EXTRA_MS = 250.0
LOCAL = ROOT / ".ci" / "node" / "node_modules" / ".bin" / "claude"


def claude_binary() -> str | None:
    """The `claude` CLI the tests use: the pinned one in .ci/node, else one on PATH."""
    return str(LOCAL) if LOCAL.exists() else shutil.which("claude")


async def timed_task(model: Model, fake: FakeServer, cwd: Path) -> tuple[float, float]:
    """(ms from start to the first request, ms per tool round after it) for one run of the task: ROUNDS
    Reads of a.txt in `cwd` and a final answer, as `fake` is scripted (every CLI benchmark runs this one)."""
    agent = Agent(model, tools=builtin_tools(fleet=False), cwd=cwd)
    start = time.perf_counter()
    first: list[float] = []

    async def watch() -> None:  # the moment the server sees the first request
        while not fake.requests:
            await asyncio.sleep(0.001)
        first.append(time.perf_counter())

    watcher = asyncio.create_task(watch())
    try:
        async for event in agent.run("read a.txt several times"):
            if isinstance(event, Result) and (event.is_error or event.num_turns < ROUNDS):
                raise RuntimeError(f"the task did not run its {ROUNDS} rounds: {event.subtype} {event.text}")
    finally:
        await agent.aclose()
        watcher.cancel()
    end = time.perf_counter()
    began = first[0] if first else end
    return (began - start) * 1000, (end - began) * 1000 / ROUNDS


def _steps(prefix: str) -> list[Step]:
    return [*(tool_use_response([(f"{prefix}Read", {"path": "a.txt"})]) for _ in range(ROUNDS)), text_response("ok")]


def measure(provider: str, binary: str | None, cwd: Path) -> tuple[float, float]:
    """(start-up ms, ms per round) of the task on `provider` (`anthropic` or `anthropic-cli`)."""
    from sagent.providers.anthropic import AnthropicModel
    from sagent.providers.cli_backends.claude import ClaudeCLIModel

    with FakeAnthropic(_steps("mcp__sagent__" if provider == "anthropic-cli" else "")) as fake:
        model: Model
        if provider == "anthropic-cli":
            model = ClaudeCLIModel("claude-sonnet-4-6", api_key="test", base_url=fake.url, binary=binary, cwd=cwd)
        else:
            model = AnthropicModel("claude-sonnet-4-6", api_key="test", base_url=fake.url)
        return asyncio.run(timed_task(model, fake, cwd))


def report(name: str, value: float, unit: str, target: float) -> bool:
    ok = value < target
    print(f"{name:<52} {value:>9.2f} {unit:<3} target < {target:g} {unit:<3} {'ok' if ok else 'MISSED'}")
    return ok


def cli_provider_figures() -> list[bool]:
    """Print the figures of every CLI provider; [] for one whose CLI is missing (skipped)."""
    return claude_figures() + codex_figures()


def claude_figures() -> list[bool]:
    """Print the figures; [] (skipped) without the CLI."""
    binary = claude_binary()
    if binary is None:
        print("subscription CLIs: skipped (no `claude` binary; .ci/run installs it when npm is present)")
        return []
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        saved = {k: os.environ.get(k) for k in ("HOME", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC")}
        os.environ["HOME"] = str(home)  # the CLI's own config goes here, not the user's
        os.environ["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"
        try:
            cwd = Path(tmp)
            (cwd / "a.txt").write_text("alpha\n")
            measure("anthropic", None, cwd)  # warm imports
            api_start, api_round = measure("anthropic", None, cwd)
            cli_start, cli_round = measure("anthropic-cli", binary, cwd)
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
    print(f"{'start to first request: anthropic API → AnthropicCLI':<52} {api_start:>9.0f} → {cli_start:.0f} ms")
    print(f"{f'per tool round ({ROUNDS} rounds): API → AnthropicCLI':<52} {api_round:>9.1f} → {cli_round:.1f} ms")
    return [report("AnthropicCLI overhead per tool round over the API", cli_round - api_round, "ms", ROUND_EXTRA_MS)]


CODEX = ROOT / ".ci" / "node" / "node_modules" / ".bin" / "codex"


def _codex_measure(provider: str, binary: str | None, cwd: Path) -> tuple[float, float]:
    """(start-up ms, ms per round) of the task on `openai` or `openai-subscription`."""
    from sagent.providers.cli_backends.codex import CodexCLIModel
    from sagent.providers.openai_responses import OpenAIModel
    from tests.fakes.openai_responses_server import FakeResponses, responses_text, responses_tools

    on_cli = provider == "openai-subscription"
    namespace = "mcp__sagent" if on_cli else None
    steps = [responses_tools([("Read", {"path": "a.txt"})], namespace=namespace) for _ in range(ROUNDS)]
    with FakeResponses([*steps, responses_text("ok")]) as fake:
        model: Model
        if on_cli:
            model = CodexCLIModel("gpt-5.4", api_key="test", base_url=fake.url, binary=binary, cwd=cwd)
        else:
            model = OpenAIModel("gpt-5.4", api_key="test", base_url=fake.url)
        return asyncio.run(timed_task(model, fake, cwd))


def codex_figures() -> list[bool]:
    """OpenAISubscription beside the OpenAI API; [] (skipped) without the `codex` binary."""
    binary = str(CODEX) if CODEX.exists() else shutil.which("codex")
    if binary is None:
        print("OpenAISubscription: skipped (no `codex` binary; .ci/run installs it when npm is present)")
        return []
    with tempfile.TemporaryDirectory() as tmp:
        saved = os.environ.get("CODEX_HOME")
        os.environ["CODEX_HOME"] = str(Path(tmp) / "codex-home")  # Codex's own files go here, not the user's
        Path(os.environ["CODEX_HOME"]).mkdir()
        try:
            cwd = Path(tmp)
            (cwd / "a.txt").write_text("alpha\n")
            _codex_measure("openai", None, cwd)  # warm imports
            api_start, api_round = _codex_measure("openai", None, cwd)
            cli_start, cli_round = _codex_measure("openai-subscription", binary, cwd)
        finally:
            if saved is None:
                os.environ.pop("CODEX_HOME", None)
            else:
                os.environ["CODEX_HOME"] = saved
    print(f"{'start to first request: openai API → OpenAISubscription':<52} {api_start:>9.0f} → {cli_start:.0f} ms")
    print(f"{f'per tool round ({ROUNDS} rounds): API → OpenAISubscription':<52} {api_round:>9.1f} → {cli_round:.1f} ms")
    extra = cli_round - api_round
    return [report("OpenAISubscription overhead per tool round over the API", extra, "ms", ROUND_EXTRA_MS)]


if __name__ == "__main__":
    sys.exit(0 if all(cli_provider_figures()) else 1)
