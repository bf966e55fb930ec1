"""What the Gemini CLI costs per round: the same tool task on the Gemini API (`google`) and on GoogleCLI.

Both run against the fake Gemini server on 127.0.0.1, so only sagent and the CLI are measured: ROUNDS tool
rounds (Read through sagent's tools, over the MCP bridge for the CLI) then a final answer. Printed: the
CLI's start-up (agent start to the model's first request) and the time per tool round for each provider;
target: the CLI adds less than ROUND_EXTRA_MS per round over the API. Skipped (with the reason) when the
`gemini` binary is not installed (.ci/run puts it in .ci/node when npm is present).

    uv run python benchmarks/cli_gemini.py
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# Run as a script, this folder comes first on the path, and its mcp.py would hide the MCP SDK the bridge uses.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "benchmarks"]

from benchmarks.cli_providers import ROUND_EXTRA_MS, ROUNDS, report, timed_task  # noqa: E402
from sagent.providers.base import Model  # noqa: E402
from tests.fakes.gemini_server import FakeGemini, GeminiReply, gemini_text, gemini_tools  # noqa: E402

MODEL = "gemini-2.5-flash"
LOCAL = ROOT / ".ci" / "node" / "node_modules" / ".bin" / "gemini"
PRIVATE = ("HOME", "GEMINI_CLI_HOME", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL")


def gemini_binary() -> str | None:
    """The `gemini` CLI the tests use: the pinned one in .ci/node, else one on PATH."""
    return str(LOCAL) if LOCAL.exists() else shutil.which("gemini")


def _steps(prefix: str) -> list[GeminiReply]:
    return [*(gemini_tools([(f"{prefix}Read", {"path": "a.txt"})]) for _ in range(ROUNDS)), gemini_text("ok")]


def measure(provider: str, binary: str | None, cwd: Path) -> tuple[float, float]:
    """(start-up ms, ms per round) of the task on `provider` (`google` or `google-cli`)."""
    from sagent.providers.cli_backends.gemini import GeminiCLIModel
    from sagent.providers.google import GoogleModel

    with FakeGemini(_steps("mcp_sagent_" if provider == "google-cli" else "")) as fake:
        model: Model
        if provider == "google-cli":
            model = GeminiCLIModel(MODEL, api_key="test", base_url=fake.url, binary=binary)
        else:
            model = GoogleModel(MODEL, api_key="test", base_url=fake.url)
        return asyncio.run(timed_task(model, fake, cwd))


def gemini_cli_figures() -> list[bool]:
    """Print the figures; [] (skipped) without the CLI."""
    binary = gemini_binary()
    if binary is None:
        print("GoogleCLI: skipped (no `gemini` binary; .ci/run installs it when npm is present)")
        return []
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        saved = {k: os.environ.get(k) for k in PRIVATE}
        for key in PRIVATE:
            os.environ.pop(key, None)
        os.environ["HOME"] = os.environ["GEMINI_CLI_HOME"] = str(home)  # the CLI's state goes here, not the user's
        try:
            cwd = Path(tmp)
            (cwd / "a.txt").write_text("alpha\n")
            measure("google", None, cwd)  # warm imports
            api_start, api_round = measure("google", None, cwd)
            cli_start, cli_round = measure("google-cli", binary, cwd)
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
    print(f"{'start to first request: google API → GoogleCLI':<52} {api_start:>9.0f} → {cli_start:.0f} ms")
    print(f"{f'per tool round ({ROUNDS} rounds): API → GoogleCLI':<52} {api_round:>9.1f} → {cli_round:.1f} ms")
    return [report("GoogleCLI overhead per tool round over the API", cli_round - api_round, "ms", ROUND_EXTRA_MS)]


if __name__ == "__main__":
    sys.exit(0 if all(gemini_cli_figures()) else 1)
