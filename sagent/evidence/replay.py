"""Replay: a session's user turns run again, on another model, in a scratch copy of the working tree as it
was when the session started.

    plan = replay_plan(path)                     # the prompts, the recorded tool calls, where it started
    scratch = make_scratch(plan)                 # a git worktree at the recorded commit, else a copy
    new_log = await replay(plan, model, tools, scratch, mode="recorded")

The scratch tree is a `git worktree add --detach` at the commit the session's header records (sessions
started by the CLI in a repository record it), or, without one, a copy of the working directory as it is
now. The original tree is never written. With `mode="recorded"`, a tool call that matches a call of the
original run (same tool, same arguments, in turn) gets the original's result without running; any other
call runs for real in the scratch tree (a served Read also reads the file quietly, so that a later Edit or
Write of it is allowed). With `mode="live"` every call runs. The new run is a session of
its own, in the original's sessions folder, whose header names the session it replays (`replay_of`).

Each user turn is sent with the sampling settings the run manifest recorded for that turn's first request
(`max_tokens`, `effort`, `thinking_budget`; `temperature` too, though sagent itself sets none), unless the
caller overrides them; a log without manifests replays with the model's defaults.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from sagent.agent.session import SessionLog
from sagent.evidence.runstats import read_records
from sagent.lib.json import canonical_json
from sagent.tools.base import Tool, ToolContext, ToolError

ToolMode = Literal["live", "recorded"]
READS_FIRST = frozenset({"Read"})  # tools whose call Edit and Write require before they change a file


class ReplayError(Exception):
    """A session that cannot be replayed as asked (no prompts, no scratch tree could be made)."""


@dataclass(frozen=True, slots=True)
class RecordedCall:
    name: str
    arguments: bytes  # canonical JSON
    text: str
    is_error: bool


@dataclass(slots=True)
class ReplayPlan:
    """What a replay needs from the original log."""

    path: Path
    session: str
    cwd: Path
    prompts: list[str]
    calls: list[RecordedCall] = field(default_factory=list)
    git_root: Path | None = None
    git_commit: str | None = None
    sampling: list[dict[str, Any]] = field(default_factory=list)
    """For each prompt, the sampling settings recorded for its first request (empty when none was)."""


SAMPLING = ("max_tokens", "effort", "thinking_budget", "temperature")
RESTORED = ("max_tokens", "effort", "thinking_budget")  # the ones an agent's settings hold


@dataclass(frozen=True, slots=True)
class Scratch:
    """Where a replay runs: `cwd` inside `root`, made by `how` (`git worktree` or `copy`)."""

    root: Path
    cwd: Path
    how: str


def replay_plan(path: Path) -> ReplayPlan:
    """The user turns and the tool calls of the session at `path` (`SessionCorrupt` when it is damaged)."""
    records = read_records(path)
    header = records[0]
    started: dict[str, dict[str, Any]] = {}
    plan = ReplayPlan(path, str(header.get("session_id", path.stem)), Path(str(header.get("cwd") or ".")), [])
    if isinstance(header.get("git_commit"), str) and isinstance(header.get("git_root"), str):
        plan.git_root, plan.git_commit = Path(header["git_root"]), header["git_commit"]
    for record in records[1:]:
        event = record.get("event") or {}
        kind = event.get("type")
        message = event.get("message") or {}
        if kind == "message_added" and message.get("role") == "user":
            text = "".join(p.get("text", "") for p in message.get("content") or [] if isinstance(p, dict))
            if text:
                plan.prompts.append(text)
                plan.sampling.append({})
        elif record.get("kind") == "manifest" and plan.sampling and not plan.sampling[-1]:
            manifest = record.get("manifest") or {}
            if manifest.get("purpose") == "turn":
                plan.sampling[-1] = {key: manifest.get(key) for key in SAMPLING}
        elif kind == "tool_started":
            started[str(event["call"].get("id"))] = event["call"]
        elif kind == "tool_finished":
            result = event["result"]
            call = started.get(str(result.get("call_id")))
            if call is not None:
                text = "".join(p.get("text", "") for p in result.get("content") or [] if isinstance(p, dict))
                arguments = canonical_json(call.get("arguments") or {})
                plan.calls.append(RecordedCall(str(call.get("name")), arguments, text, bool(result.get("is_error"))))
    if not plan.prompts:
        raise ReplayError(f"session {plan.session} has no user message to replay")
    return plan


def make_scratch(plan: ReplayPlan, parent: Path | None = None) -> Scratch:
    """A scratch tree for `plan`: a detached git worktree at its commit when it has one (and git can make
    it), else a copy of its working directory. Never changes the original files."""
    root = Path(tempfile.mkdtemp(prefix=f"sagent-replay-{plan.session[:15]}-", dir=parent))
    if plan.git_root is not None and plan.git_commit is not None and shutil.which("git"):
        tree = root / "tree"
        made = subprocess.run(
            ["git", "-C", str(plan.git_root), "worktree", "add", "--detach", str(tree), plan.git_commit],
            capture_output=True,
            text=True,
            timeout=120,
        )
        if made.returncode == 0:
            inside = plan.cwd.relative_to(plan.git_root) if plan.cwd.is_relative_to(plan.git_root) else Path()
            return Scratch(tree, tree / inside, "git worktree")
    if not plan.cwd.is_dir():
        raise ReplayError(f"the session's working directory {plan.cwd} is gone and it recorded no commit")
    tree = root / plan.cwd.name
    shutil.copytree(plan.cwd, tree, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    return Scratch(tree, tree, "copy")


class RecordedTool:
    """A tool that answers a call matching one of the original run's (same name and arguments, each
    recorded result served once, in order) with the recorded result, and runs any other call for real."""

    def __init__(self, tool: Tool, calls: list[RecordedCall], served: list[int]) -> None:
        self.tool = tool
        self.name = tool.name
        self.description = tool.description
        self.input_schema = tool.input_schema
        self._calls = calls
        self._served = served  # shared by the tools of one replay: counts of recorded calls served

    def __getattr__(self, name: str) -> Any:  # capabilities (resource, may_background, ...) as the tool's
        return getattr(self.tool, name)

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> Any:
        wanted = canonical_json(arguments)
        for index, call in enumerate(self._calls):
            if call.name == self.name and call.arguments == wanted and index not in self._served:
                self._served.append(index)
                if self.name in READS_FIRST:  # read quietly too: a later Edit or Write of it needs the read
                    with contextlib.suppress(Exception):
                        await self.tool.run(arguments, ctx)
                if call.is_error:
                    raise ToolError(call.text)
                return call.text
        return await self.tool.run(arguments, ctx)


def recorded_tools(tools: list[Tool], plan: ReplayPlan) -> tuple[list[Tool], list[int]]:
    """`tools` wrapped to serve `plan`'s recorded results, and the list of the recorded calls served."""
    served: list[int] = []
    return [RecordedTool(t, plan.calls, served) for t in tools], served


async def replay(
    plan: ReplayPlan,
    model: Any,
    tools: list[Tool],
    scratch: Scratch,
    *,
    mode: ToolMode = "live",
    system: str = "",
    on_event: Any = None,
    overrides: dict[str, Any] | None = None,
) -> tuple[Path | None, int]:
    """Run `plan`'s user turns on `model` in `scratch`, as a new session in the original's folder; the new
    log's path and how many recorded results were served. Each turn gets the sampling settings recorded for
    it (`plan.sampling`), with `overrides` (`max_tokens`, `effort`, `thinking_budget`) in their place."""
    from sagent.agent.agent import Agent

    served: list[int] = []
    if mode == "recorded":
        tools, served = recorded_tools(tools, plan)
    header = {
        "provider": model.provider,
        "model": model.name,
        "replay_of": plan.session,
        "replay_of_path": str(plan.path),
        "replay_tools": mode,
        "replay_tree": scratch.how,
    }
    if plan.git_commit:
        header["git_commit"] = plan.git_commit
    log = SessionLog.create(scratch.cwd, header, directory=plan.path.parent)
    agent = Agent(model, system=system, tools=tools, session=log, cwd=scratch.cwd)
    try:
        for index, prompt in enumerate(plan.prompts):
            recorded = plan.sampling[index] if index < len(plan.sampling) else {}
            chosen: dict[str, Any] = {key: recorded.get(key) for key in RESTORED if recorded} | (overrides or {})
            if chosen:
                agent.settings = replace(agent.settings, **chosen)
            async for event in agent.run(prompt):
                if on_event is not None:
                    on_event(event)
    finally:
        await agent.aclose()
    return log.path, len(served)
