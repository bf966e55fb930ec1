"""Resume vs replay vs prompt caching, on the fake Responses server: a 32-turn coding session (each turn a
question, a Read of a 4 kB file, an answer) run twice, once sending the whole history each request (replay,
sagent's default) and once resuming the stored response (`previous_response_id`, only new items). Tokens
are estimated from what was sent (4 characters a token, the instructions and tool schemas included); the
caching column is the replayed request as billed with the repeated prefix read from the prompt cache
(cached input at a tenth of the price), which saves cost but not upload. The same session then runs on the
fake Gemini server: `streamGenerateContent` (replay) against the Interactions API
(`previous_interaction_id`, only new steps).

    uv run python benchmarks/resume.py
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sagent.agent.agent import Agent  # noqa: E402
from sagent.providers.google import GoogleModel  # noqa: E402
from sagent.providers.google_interactions import ResumingGoogleModel  # noqa: E402
from sagent.providers.openai_responses import OpenAIModel  # noqa: E402
from sagent.providers.responses_resume import ResumingOpenAIModel  # noqa: E402
from sagent.tools import Read  # noqa: E402
from tests.fakes.gemini_server import FakeGemini, gemini_text, gemini_tools  # noqa: E402
from tests.fakes.openai_responses_server import FakeResponses, responses_text, responses_tools  # noqa: E402

TURNS = 32
SHOWN = (1, 2, 8, 16, 32)
"""The turns the table shows (the seed's table: tokens sent per turn at 8, 16 and 32 turns)."""
CACHED_PRICE = 0.1


SENT = ("input", "instructions", "tools", "contents", "systemInstruction", "system_instruction")
"""What a request carries of the conversation, the instructions and the tools, in each API's spelling."""


def tokens(body: dict) -> int:
    sent = {k: body[k] for k in SENT if k in body}
    return len(json.dumps(sent)) // 4


async def session(resume: bool, folder: Path, google: bool = False) -> tuple[list[int], list[int]]:
    """Estimated input tokens sent per turn (both requests of the turn), and per request."""
    for n in range(TURNS):
        (folder / f"m{n}.py").write_text(f"def f{n}(x):\n    return x * {n}  # a line of code\n" * 50)
    steps: list = []
    for n in range(TURNS):
        if google:
            steps += [gemini_tools([("Read", {"path": f"m{n}.py"})]), gemini_text(f"m{n}.py multiplies by {n}.")]
        else:
            steps += [responses_tools([("Read", {"path": f"m{n}.py"})]), responses_text(f"m{n}.py multiplies by {n}.")]
    with FakeGemini(steps) if google else FakeResponses(steps) as fake:
        if google:
            kind: type = ResumingGoogleModel if resume else GoogleModel
            model = kind("gemini-3-flash-preview", api_key="bench", base_url=fake.url)
        else:
            kind = ResumingOpenAIModel if resume else OpenAIModel
            model = kind("gpt-5.4", api_key="sk-bench", base_url=fake.url)
        agent = Agent(model, tools=[Read()], cwd=folder, system="You are a careful engineer. " * 40)
        for n in range(TURNS):
            async for _ in agent.run(f"what does m{n}.py do?"):
                pass
        await agent.aclose()
        bodies = fake.bodies()
    per_request = [tokens(b) for b in bodies]
    return [per_request[2 * n] + per_request[2 * n + 1] for n in range(TURNS)], per_request


def table() -> tuple[int, int, int]:
    with tempfile.TemporaryDirectory() as folder:
        replayed, replay_requests = asyncio.run(session(False, Path(folder)))
        resumed, _ = asyncio.run(session(True, Path(folder)))
    # Caching: each replayed request's prefix (the previous request's input) is read from the cache.
    cached_requests = [replay_requests[0]] + [
        (now - before) + CACHED_PRICE * before for before, now in itertools.pairwise(replay_requests)
    ]
    cached = [round(cached_requests[2 * n] + cached_requests[2 * n + 1]) for n in range(TURNS)]
    print("input tokens (estimated) sent in a turn, and in the session up to it: replay, resume, replay billed")
    print("with caching")
    print(f"{'turn':>4}  {'replay':>8}  {'resume':>8}  {'caching':>8}   ", end="")
    print(f"{'replay, all':>12}  {'resume, all':>12}  {'saved':>6}")
    for turn in SHOWN:
        n = turn - 1
        upto_replay, upto_resume = sum(replayed[:turn]), sum(resumed[:turn])
        saved = 1 - upto_resume / upto_replay
        print(
            f"{turn:>4}  {replayed[n]:>8,}  {resumed[n]:>8,}  {cached[n]:>8,}   {upto_replay:>12,}  {upto_resume:>12,}"
            f"  {saved:>6.0%}"
        )
    print(
        "resume sends only the new items (plus the instructions and tool schemas, which are not carried over);\n"
        "the server still reads the whole conversation, so resumed input is billed like replayed input, with\n"
        "the same prompt caching: resume saves upload and request size, caching saves cost."
    )
    google_table()
    return sum(replayed), sum(resumed), sum(cached)


def google_table() -> tuple[int, int]:
    """The same session on Gemini: replay (`streamGenerateContent`) against resume (the Interactions API)."""
    with tempfile.TemporaryDirectory() as folder:
        replayed, _ = asyncio.run(session(False, Path(folder), google=True))
        resumed, _ = asyncio.run(session(True, Path(folder), google=True))
    print()
    print("the same session on Gemini: streamGenerateContent (replay) against the Interactions API (resume)")
    print(f"{'turn':>4}  {'replay':>8}  {'resume':>8}   {'replay, all':>12}  {'resume, all':>12}  {'saved':>6}")
    for turn in SHOWN:
        n = turn - 1
        upto_replay, upto_resume = sum(replayed[:turn]), sum(resumed[:turn])
        print(
            f"{turn:>4}  {replayed[n]:>8,}  {resumed[n]:>8,}   {upto_replay:>12,}  {upto_resume:>12,}"
            f"  {1 - upto_resume / upto_replay:>6.0%}"
        )
    return sum(replayed), sum(resumed)


if __name__ == "__main__":
    table()
