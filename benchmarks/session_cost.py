"""What a 30-round session costs on Anthropic's prices with its prompt cache, and how big each request is.

A real `sagent -p` process (default settings: every tool, the sandbox on) runs a task of ROUNDS tool rounds,
one Bash `echo` each, then answers, against the fake Anthropic server with a fresh simulated prompt cache
(tests/fakes/anthropic_cache.py: Anthropic's published rules, four characters a token). The cost is sagent's
own (`sagent.providers.catalog.cost_of`) at Sonnet's prices, summed over the requests' reported usage.

    uv run python benchmarks/session_cost.py

Prints, each next to its target where it has one (exit 1 when one is missed):
- the session's cost (target: below pi's on the same task: $0.040 in `benchmarks/peers.py`'s side-by-side
  run on this machine, $0.051 in the issue's),
- the share of input tokens read from the cache from the third request on (target: at least 95%),
- bytes per request (the first and the median), and the tokens of the first request's tool schemas, its
  system prompt and the rest.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sagent.providers.catalog import cost_of  # noqa: E402
from sagent.types import Usage  # noqa: E402
from tests.fakes.anthropic_cache import PromptCache  # noqa: E402
from tests.fakes.anthropic_server import FakeAnthropic, Reply, text_response  # noqa: E402

ROUNDS = 30
MODEL = "claude-sonnet-4-6"
COST_TARGET_USD = 0.040  # pi on the same task, in benchmarks/peers.py's side-by-side run here (the issue: $0.051)
CACHED_SHARE_TARGET = 0.95


def _echo(n: int) -> Reply:
    block = {"type": "tool_use", "id": f"toolu_echo{n:03d}", "name": "Bash", "input": {"command": f"echo round {n}"}}
    return Reply([block], "tool_use", {"input_tokens": 100, "output_tokens": 20})


def _sagent() -> list[str]:
    exe = shutil.which("sagent", path=str(Path(sys.executable).parent)) or shutil.which("sagent")
    return [exe] if exe else [sys.executable, "-m", "sagent.cli.main"]


def _env(data: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
    env.update({"ANTHROPIC_API_KEY": "test", "XDG_DATA_HOME": str(data), "XDG_CONFIG_HOME": str(data / "config")})
    return env


def run_session(cwd: Path) -> list[dict[str, Any]]:
    """The requests of one session (their bodies, sizes and the cache's usage)."""
    steps = [_echo(n) for n in range(ROUNDS)] + [text_response("done")]
    with FakeAnthropic(steps, cache=PromptCache()) as fake:
        fake.keep_alive = True
        command = [*_sagent(), "-p", "echo something, round after round", "--model", MODEL, "--base-url", fake.url]
        command += ["--output-format", "json"]
        done = subprocess.run(command, cwd=cwd, env=_env(cwd / "data"), capture_output=True, text=True)
        requests = list(fake.requests)
    if done.returncode != 0 or len(requests) != ROUNDS + 1 or '"is_error": false' not in done.stdout:
        raise SystemExit(f"the run failed (exit {done.returncode}): {done.stdout}{done.stderr}")
    for n, request in enumerate(requests[1:]):
        result = request["body"]["messages"][-1]["content"][0]
        text = json.dumps(result.get("content"))
        if result.get("type") != "tool_result" or result.get("is_error") or f"round {n}" not in text:
            raise SystemExit(f"round {n}'s Bash call did not answer its echo: {result}")
    return requests


def _tokens(value: Any, role: str) -> int:
    """Tokens as the fake cache counts them: a block's JSON, four characters a token."""
    return (len(role + json.dumps(value, sort_keys=True, ensure_ascii=False)) + 3) // 4


@dataclass
class SessionFigures:
    requests: int
    tools_offered: int
    cost_usd: float
    cached_share_from_request_3: float
    sizes: list[int]  # bytes of each request's body
    tool_tokens: int  # of the first request's tool schemas
    system_tokens: int  # of its system prompt
    prompt_tokens: int  # of every request, cached or not


def session_figures() -> SessionFigures:
    with tempfile.TemporaryDirectory() as tmp:
        requests = run_session(Path(tmp))
    usages = [
        Usage(u["input_tokens"], u["output_tokens"], u["cache_read_input_tokens"], u["cache_creation_input_tokens"])
        for u in (r["usage"] for r in requests)
    ]
    later = usages[2:]
    prompt = sum(u.input_tokens + u.cache_read_tokens + u.cache_write_tokens for u in later)
    first = requests[0]["body"]
    system = first.get("system") or []
    return SessionFigures(
        requests=len(requests),
        tools_offered=len(first["tools"]),
        cost_usd=sum(cost_of(MODEL, u).total for u in usages),
        cached_share_from_request_3=sum(u.cache_read_tokens for u in later) / prompt,
        sizes=[int(r["headers"].get("Content-Length") or r["headers"]["content-length"]) for r in requests],
        tool_tokens=sum(_tokens({k: v for k, v in t.items() if k != "cache_control"}, "tool") for t in first["tools"]),
        system_tokens=sum(_tokens({k: v for k, v in b.items() if k != "cache_control"}, "system") for b in system),
        prompt_tokens=sum(u.input_tokens + u.cache_read_tokens + u.cache_write_tokens for u in usages),
    )


def main() -> int:
    f = session_figures()
    print(f"a {ROUNDS}-round session (one Bash echo a round), {MODEL} prices, a fresh prompt cache:")
    print(f"  requests: {f.requests}   tools offered: {f.tools_offered}")
    cost_ok = f.cost_usd < COST_TARGET_USD
    share_ok = f.cached_share_from_request_3 >= CACHED_SHARE_TARGET
    print(f"  cost                                {f.cost_usd:>9.4f} $   target < {COST_TARGET_USD} $  {_ok(cost_ok)}")
    target = f"target >= {CACHED_SHARE_TARGET:.0%}"
    print(f"  read from cache, 3rd request on     {f.cached_share_from_request_3:>9.1%}     {target}   {_ok(share_ok)}")
    sizes = f.sizes
    print(f"  bytes per request: first {sizes[0]:,}, median {statistics.median(sizes):,.0f}, last {sizes[-1]:,}")
    print(f"  first request's tokens: tool schemas {f.tool_tokens:,}, system prompt {f.system_tokens:,}")
    print(f"  prompt tokens of the session: {f.prompt_tokens:,}")
    print("  command: uv run python benchmarks/session_cost.py")
    return 0 if cost_ok and share_ok else 1


def _ok(ok: bool) -> str:
    return "ok" if ok else "MISSED"


if __name__ == "__main__":
    sys.exit(main())
