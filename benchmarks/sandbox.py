"""What the OS sandbox costs a Bash call, and how many permission questions it saves.

    uv run python benchmarks/sandbox.py

- The cost per call: the median wall time of a Bash call running `true` in the sandbox, minus the same
  call without it (calls interleaved, so both see the same machine). Target: at most 2 ms. Starting a
  bubblewrap per call, for comparison, is timed too (no target: it is what the live sandbox avoids).
- The questions: a 30-round scripted coding task (Bash, Read, Edit and Write calls, as a coding session
  makes them) run through the real `PermissionHook` in default mode, once with the sandbox and once
  without; the share of its Bash calls that asked. Target with the sandbox: at most 10% (only the call
  that asks to leave the sandbox should ask).
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sagent.agent.agent import Agent  # noqa: E402
from sagent.agent.hooks import ALLOW, Allow, Deny  # noqa: E402
from sagent.permissions.policy import PermissionHook, Permissions  # noqa: E402
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn  # noqa: E402
from sagent.sandbox import OFF, SandboxPolicy  # noqa: E402
from sagent.sandbox.bwrap import bwrap_args, bwrap_path, unavailable  # noqa: E402
from sagent.tools import builtin_tools  # noqa: E402
from sagent.tools.base import ToolContext  # noqa: E402
from sagent.tools.shell import Bash  # noqa: E402
from sagent.types import ToolCall  # noqa: E402

COST_TARGET_MS = 2.0
QUESTION_TARGET_PERCENT = 10.0
CALLS = 60
ROUNDS = 30


async def _bash_ms(ctx: ToolContext) -> float:
    start = time.perf_counter()
    await Bash().run({"command": "true"}, ctx)
    return (time.perf_counter() - start) * 1000


async def call_costs(calls: int = CALLS) -> tuple[float, float]:
    """Median ms of a Bash call of `true` in the sandbox and without it."""
    folder = Path(tempfile.mkdtemp(prefix="sagent-bench-sandbox-"))
    inside, outside = ToolContext(cwd=folder), ToolContext(cwd=folder, sandbox=OFF)
    for _ in range(5):  # the sandbox starts, caches warm
        await _bash_ms(inside)
        await _bash_ms(outside)
    sandboxed, plain = [], []
    for _ in range(calls):
        sandboxed.append(await _bash_ms(inside))
        plain.append(await _bash_ms(outside))
    return statistics.median(sandboxed), statistics.median(plain)


def bwrap_per_call_ms(runs: int = 20) -> float:
    """Median ms to run `true` in a new bubblewrap sandbox of the same policy."""
    folder = Path(tempfile.mkdtemp(prefix="sagent-bench-bwrap-"))
    command = [str(bwrap_path()), *bwrap_args(SandboxPolicy(), (folder,), folder), "--", "true"]
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, check=True)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def coding_task() -> list[tuple[str, dict[str, object]]]:
    """Thirty rounds of a small coding task: look around, edit, run the tests, commit; one push that needs
    the network and asks to leave the sandbox."""
    bash = [
        "ls -la",
        "git status --short",
        "cat src/app.py",
        "grep -rn 'def ' src",
        f"{sys.executable} -c 'import sys; print(sys.version)'",
        f"{sys.executable} -m compileall -q src",
        "wc -l src/*.py",
        "git diff --stat",
        "find . -name '*.py' -not -path './.git/*'",
        f"{sys.executable} src/app.py",
        "mkdir -p build && cp src/app.py build/",
        "rm -rf build",
        "git add -A && git commit -qm 'work' && git log --oneline | head -1",
        "sed -n 1,5p src/app.py",
        "echo done > /tmp/sagent-bench-marker && cat /tmp/sagent-bench-marker",
        "sort src/app.py | uniq -c | sort -rn | head",
        "du -sh .",
        "env | grep -c PATH",
        "git log --stat | head",
    ]
    rounds: list[tuple[str, dict[str, object]]] = []
    for i in range(ROUNDS):
        if i % 3 == 0:
            rounds.append(("Read", {"path": "src/app.py"}))
        elif i % 7 == 0:
            rounds.append(("Write", {"path": f"src/mod{i}.py", "content": f"X = {i}\n"}))
        elif i == ROUNDS - 1:
            rounds.append(("Bash", {"command": "git push origin main", "dangerouslyDisableSandbox": True}))
        else:
            rounds.append(("Bash", {"command": bash[i % len(bash)]}))
    return rounds


async def question_share(sandbox: SandboxPolicy) -> tuple[int, int]:
    """(Bash calls that asked, Bash calls) in the scripted task with `sandbox`."""
    folder = Path(tempfile.mkdtemp(prefix="sagent-bench-task-"))
    (folder / "src").mkdir()
    (folder / "src" / "app.py").write_text("def main():\n    print('hello')\n\n\nmain()\n")
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    subprocess.run(["git", "-C", str(folder), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(folder), "-c", "user.name=b", "-c", "user.email=b@x", "commit", "-qm", "0"])
    asked: list[str] = []

    async def approver(agent: Agent, call: ToolCall, reason: str) -> Allow | Deny:
        if call.name == "Bash":
            asked.append(reason)
        if call.arguments.get("dangerouslyDisableSandbox"):
            return Deny("no network here")  # the benchmark never reaches a remote
        return ALLOW

    calls = coding_task()
    agent = Agent(
        ScriptedModel([*(tool_turn(c) for c in calls), text_turn("done")]),
        cwd=folder,
        tools=builtin_tools(),
        permissions=Permissions.build(cwd=folder),
        hooks=[PermissionHook()],
        approver=approver,
        sandbox=sandbox,
    )
    await agent.run("work on the app")
    await agent.aclose()
    return len(asked), sum(1 for name, _ in calls if name == "Bash")


def sandbox_figures() -> list[tuple[str, float, str, float, bool]]:
    """(name, value, unit, target, at_least) rows for benchmarks/run.py; [] when no sandbox runs here."""
    reason = unavailable()
    if reason is not None:
        print(f"sandbox: skipped, it cannot start here ({reason})")
        return []
    inside, plain = asyncio.run(call_costs())
    print(
        f"  Bash `true`: {inside:.2f} ms in the sandbox, {plain:.2f} ms without; a bwrap per call: "
        f"{bwrap_per_call_ms():.2f} ms"
    )
    rows = [("sandbox: cost per Bash call over an unsandboxed one", inside - plain, "ms", COST_TARGET_MS, False)]
    asked_in, total = asyncio.run(question_share(SandboxPolicy()))
    asked_out, _ = asyncio.run(question_share(OFF))
    print(
        f"  Bash calls that asked, {ROUNDS}-round task: {asked_in}/{total} with the sandbox, "
        f"{asked_out}/{total} without"
    )
    rows.append(
        (
            "sandbox: Bash calls that asked, with the sandbox",
            100 * asked_in / total,
            "%",
            QUESTION_TARGET_PERCENT,
            False,
        )
    )
    return rows


def main() -> int:
    from benchmarks.run import report

    ok = True
    for name, value, unit, target, at_least in sandbox_figures():
        ok &= report(name, value, unit, target, at_least=at_least)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
