"""What a long coding session sends, and how much of it the prompt cache serves.

A 50-turn coding session (list the project, then for each module: read it, grep it, edit it, check it
with Bash) runs through the Anthropic SDK against the fake Messages server, whose prompt cache follows
Anthropic's published rules (tests/fakes/anthropic_cache.py). The real tools run on a real project, with
sagent's real system prompt and tool set, so the requests are what a user's would be. Then the session
is compacted, and the context before and after is compared.

    uv run python benchmarks/context.py
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sagent.agent.agent import Agent  # noqa: E402
from sagent.agent.prompt import coding_system_prompt  # noqa: E402
from sagent.agent.session import SessionLog  # noqa: E402
from sagent.providers.anthropic import AnthropicModel  # noqa: E402
from sagent.providers.catalog import cost_of  # noqa: E402
from sagent.tools import builtin_tools  # noqa: E402
from sagent.types import ToolResult, Usage  # noqa: E402
from tests.fakes.anthropic_cache import PromptCache  # noqa: E402
from tests.fakes.anthropic_server import FakeAnthropic, Reply, text_response  # noqa: E402

TURNS = 50
MODULES = 12
MODEL = "claude-sonnet-4-6"
SUMMARY = """## Goal
Make every `scale_*` function in the `shapes` package multiply by the factor instead of adding it.
## Constraints and preferences
Keep each module's style; check each module compiles after its edit.
## Decisions
Edit the one wrong line per module with Edit rather than rewriting files.
## Progress
Fixed and compiled: {done}.
## Errors and fixes
None.
## User messages
> Fix the scale functions in every module of shapes/: they add the factor instead of multiplying.
## Files
Read and modified: {files}.
## Next step
Run the whole test suite."""


def make_project(root: Path) -> None:
    package = root / "shapes"
    package.mkdir(parents=True)
    for m in range(MODULES):
        lines = [f'"""Shapes, part {m}: areas, perimeters and scaling."""', ""]
        for f in range(14):
            lines += [
                f"def area_{m}_{f}(width, height):",
                f'    """The area of shape {f} in family {m}, in square units."""',
                "    return width * height",
                "",
                f"def scale_{m}_{f}(length, factor):",
                f"    return length + factor  # shape {f}",
                "",
            ]
        (package / f"mod_{m:02d}.py").write_text("\n".join(lines))


def script() -> list[dict[str, Any]]:
    """The tool calls of the session, one response each: 49 of them, then the answer."""
    calls: list[dict[str, Any]] = [{"name": "Glob", "input": {"pattern": "shapes/*.py"}}]
    m = 0
    while len(calls) < TURNS - 1:
        path = f"shapes/mod_{m:02d}.py"
        calls += [
            {"name": "Read", "input": {"path": path}},
            {"name": "Grep", "input": {"pattern": f"def scale_{m}_", "path": "shapes"}},
            {
                "name": "Edit",
                "input": {"path": path, "old_string": "length + factor  # shape 3", "new_string": "length * factor"},
            },
            {"name": "Bash", "input": {"command": f"python3 -m py_compile {path} && echo compiled {path}"}},
        ]
        m += 1
    return calls[: TURNS - 1]


@dataclass
class Coder:
    calls: list[dict[str, Any]]
    turn: int = 0

    def __call__(self, request: dict[str, Any]) -> Reply:
        last = request["body"]["messages"][-1]["content"]
        if any("write a summary of the conversation above" in b.get("text", "") for b in last):
            done = sorted({c["input"]["path"] for c in self.calls if c["name"] == "Edit"})
            return text_response(SUMMARY.format(done=", ".join(done), files=", ".join(done)), output_tokens=400)
        if self.turn >= len(self.calls):
            return text_response("Every scale function now multiplies; each module compiles.", output_tokens=40)
        call = self.calls[self.turn]
        self.turn += 1
        block = {"type": "tool_use", "id": f"toolu_{self.turn:03d}", **call}
        thought = {"type": "text", "text": f"Step {self.turn}: {call['name']} next."}
        return Reply([thought, block], "tool_use", {"output_tokens": 60})


@dataclass
class Figures:
    requests: int
    input_tokens: int  # every prompt token sent, cached or not
    cached_share_from_turn_3: float
    cost_usd: float
    cost_without_cache_usd: float
    before_compaction: int
    after_compaction: int
    after_compaction_cached_share: float


def prompt_tokens(usage: dict[str, int]) -> int:
    return usage["input_tokens"] + usage["cache_read_input_tokens"] + usage["cache_creation_input_tokens"]


async def run_session(folder: Path) -> Figures:
    project = folder / "project"
    make_project(project)
    calls = script()
    with FakeAnthropic([Coder(calls)] * (TURNS + 4), cache=PromptCache()) as fake:
        model = AnthropicModel(MODEL, api_key="benchmark", base_url=fake.url)
        agent = Agent(
            model,
            system=coding_system_prompt(project),
            tools=builtin_tools(),
            cwd=project,
            session=SessionLog.create(project, {}),
        )
        prompt = "Fix the scale functions in every module of shapes/: they add the factor instead of multiplying."
        async for _ in agent.run(prompt):
            pass
        session = list(fake.requests)
        failed = [m.text for m in agent.history if isinstance(m, ToolResult) and m.is_error]
        assert not failed, f"the scripted session's tool calls failed: {failed}"
        before = agent.context_tokens
        compacted = await agent.compact()
        assert compacted is not None
        after = agent.context_tokens
        async for _ in agent.run("Now run the whole test suite."):
            pass
        next_request = fake.requests[-1]["usage"]
        await agent.aclose()
    usages = [r["usage"] for r in session]
    later = usages[2:]
    sent = sum(prompt_tokens(u) for u in usages)
    cached = [
        Usage(u["input_tokens"], u["output_tokens"], u["cache_read_input_tokens"], u["cache_creation_input_tokens"])
        for u in usages
    ]
    cost = sum(cost_of(MODEL, u).total for u in cached)
    plain = sum(cost_of(MODEL, Usage(prompt_tokens(u), u["output_tokens"])).total for u in usages)
    read_later = sum(u["cache_read_input_tokens"] for u in later)
    return Figures(
        requests=len(usages),
        input_tokens=sent,
        cached_share_from_turn_3=read_later / sum(prompt_tokens(u) for u in later),
        cost_usd=cost,
        cost_without_cache_usd=plain,
        before_compaction=before,
        after_compaction=after,
        after_compaction_cached_share=next_request["cache_read_input_tokens"] / prompt_tokens(next_request),
    )


def context_figures() -> Figures:
    with tempfile.TemporaryDirectory() as tmp:
        return asyncio.run(run_session(Path(tmp)))


if __name__ == "__main__":
    import os

    with tempfile.TemporaryDirectory() as data:
        os.environ["XDG_DATA_HOME"] = data
        print(json.dumps(context_figures().__dict__, indent=2))
