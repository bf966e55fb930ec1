"""SelfHosted on the CPU: load time and tokens per second of the tiny test model, and memory per agent when
several agents share one loaded model.

The model is the tests' tiny random Llama (tests/selfhosted/tiny_hf.py: 2 layers, 64 wide, a few MB),
built in a temporary folder. A real model's figures scale with its size and the hardware; these show what
sagent itself adds: the load path, the streaming bridge (a generate thread feeding the event loop), and the
cost of one more agent on weights already loaded.

    uv run python benchmarks/selfhosted.py      # needs the selfhosted extra
"""

from __future__ import annotations

import asyncio
import gc
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

AGENTS = 8
TOKENS = 256
Row = tuple[str, float, str, float, bool]


def rss_mib() -> float:
    """This process's resident memory now, in MiB (Linux /proc)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


COLD_LOAD = """
import sys, time
started = time.perf_counter()
from sagent.providers.selfhosted_load import acquire
from sagent.providers.selfhosted_spec import parse_spec
acquire(parse_spec(sys.argv[1]))
print(time.perf_counter() - started)
"""


def cold_load(spec: str) -> tuple[float, float]:
    """Seconds from a fresh interpreter to a loaded model (torch and transformers imported, files read):
    wall time, and the CPU time the process used (steadier on a busy machine)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([sys.executable, "-c", COLD_LOAD, spec], capture_output=True, text=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return float(out.stdout.strip().splitlines()[-1]), cpu


async def _figures(folder: Path) -> list[Row]:
    import torch

    from sagent.agent.agent import Agent
    from sagent.events import ResponseComplete, TextDelta
    from sagent.providers.selfhosted import SelfHostedModel
    from sagent.types import ModelRequest, UserMessage

    # A model this small runs fastest on one thread; on a shared machine, more threads only contend.
    torch.set_num_threads(1)
    spec = f"{folder}+cpu"
    cold, cold_cpu = cold_load(spec)
    again = SelfHostedModel(spec, generation={"min_new_tokens": TOKENS, "do_sample": False})
    started = time.perf_counter()
    loaded = await again.load()
    warm = time.perf_counter() - started

    request = ModelRequest("You are terse.", (UserMessage.of("Count."),), max_tokens=TOKENS)
    [e async for e in again.stream(ModelRequest("", (UserMessage.of("warm up"),), max_tokens=TOKENS))]
    started = time.perf_counter()
    first_token = 0.0
    output = 0
    async for event in again.stream(request):
        if isinstance(event, TextDelta) and not first_token:
            first_token = time.perf_counter() - started
        if isinstance(event, ResponseComplete):
            output = event.message.usage.output_tokens
    rate = output / (time.perf_counter() - started)
    # The floor: the same generation by `generate` alone, with no streamer, thread or parsing.
    inputs = loaded.tokenizer("Count.", return_tensors="pt")
    started = time.perf_counter()
    out = loaded.model.generate(**inputs, max_new_tokens=TOKENS, min_new_tokens=TOKENS, do_sample=False)
    bare = (out.shape[-1] - inputs["input_ids"].shape[-1]) / (time.perf_counter() - started)
    weights = sum(p.numel() * p.element_size() for p in loaded.model.parameters()) / 2**20

    gc.collect()
    before = rss_mib()
    agents = [Agent(SelfHostedModel(spec, max_tokens=16), tools=[], cwd=folder) for _ in range(AGENTS)]
    for agent in agents:
        [e async for e in agent.run("hi")]  # each joins the loaded weights and generates once
    gc.collect()
    per_agent = (rss_mib() - before) / AGENTS
    shared = {id(a.model.loaded) for a in agents if isinstance(a.model, SelfHostedModel)}
    for agent in agents:
        await agent.aclose()
    await again.aclose()
    print(
        f"tiny model: {weights:.1f} MiB of weights, {output} tokens streamed at {rate:.0f} tokens/s "
        f"(generate alone: {bare:.0f} tokens/s), {AGENTS} agents on {len(shared)} loaded copy; "
        f"a fresh process loaded it in {cold:.1f} s of wall time"
    )
    return [
        ("SelfHosted: load in a fresh process, CPU time (torch import too)", cold_cpu, "s", 15.0, False),
        ("SelfHosted: load with torch already imported", warm, "s", 1.0, False),
        ("SelfHosted: first token of a streamed response", first_token * 1000, "ms", 200.0, False),
        (f"SelfHosted: tokens per second, tiny model, CPU ({TOKENS} tokens)", rate, "tok", 50.0, True),
        ("SelfHosted: streamed rate as a share of generate alone", 100 * rate / bare, "%", 80.0, True),
        (f"SelfHosted: memory per agent, {AGENTS} sharing one model", per_agent, "MiB", 2.0, False),
    ]


def selfhosted_figures() -> list[Row] | None:
    """The figures, or None without the selfhosted extra."""
    if importlib.util.find_spec("torch") is None or importlib.util.find_spec("transformers") is None:
        return None
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from tests.selfhosted.tiny_hf import build_snapshot

    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("XDG_DATA_HOME", tmp)
        folder = build_snapshot(Path(tmp) / "tiny")
        return asyncio.run(_figures(folder))


def main(report: Callable[..., bool] | None = None) -> int:
    rows = selfhosted_figures()
    if rows is None:
        print("SelfHosted: skipped, the selfhosted extra is not installed (uv sync --extra selfhosted)")
        return 0
    if report is None:
        from benchmarks.run import report
    results = [report(name, value, unit, target, at_least=at_least) for name, value, unit, target, at_least in rows]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
