"""The per-call overhead of a permission check: what `PermissionHook.before_tool` costs each tool call.

    uv run python benchmarks/permissions.py

A realistic policy (a dozen allow rules, ask and deny rules with paths under `~` and the project) on a
sub-agent, so the hook checks its own policy and its parent's. Each kind of call is timed on its own: a
Read inside the project, an Edit, a compound Bash line (a new line each call, so the splitter's cache
does not help; `bash_lines.py` times 300 typical agent lines the same way), a WebFetch, an MCP tool.
Target: under 0.1 ms per call, in CPU time (the process's own, so other work on a shared machine does
not inflate it).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sagent.agent.agent import Agent  # noqa: E402
from sagent.permissions.policy import PermissionHook, Permissions  # noqa: E402
from sagent.providers.scripted import ScriptedModel  # noqa: E402
from sagent.types import ToolCall  # noqa: E402

TARGET_MS = 0.1
CALLS = 2000

ALLOW = [
    "Bash(git diff:*)",
    "Bash(git status:*)",
    "Bash(git log:*)",
    "Bash(npm test)",
    "Bash(npm run *)",
    "Bash(ls:*)",
    "Bash(wc:*)",
    "Edit(src/**)",
    "Read(~/notes/**)",
    "WebFetch(domain:docs.python.org)",
    "mcp__github__*",
    "WebSearch",
]
ASK = ["Bash(git push:*)", "Edit(src/secrets/**)"]
DENY = ["Read(~/.ssh/**)", "Read(.env)", "Bash(rm:*)", "Bash(curl:*)", "WebFetch(domain:evil.example)"]


def calls() -> dict[str, list[ToolCall]]:
    def call(name: str, **arguments: object) -> ToolCall:
        return ToolCall(id="c", name=name, arguments=dict(arguments))

    return {
        "Read inside the project": [call("Read", path=f"src/module_{i}.py") for i in range(CALLS)],
        "Edit inside the project": [
            call("Edit", path=f"src/m{i}.py", old_string="a", new_string="b") for i in range(CALLS)
        ],
        "Bash, 3 commands (a new line each call)": [
            call("Bash", command=f"git status --short && git diff HEAD~{i} | wc -l") for i in range(CALLS)
        ],
        "WebFetch": [call("WebFetch", url=f"https://docs.python.org/3/library/{i}.html") for i in range(CALLS)],
        "MCP tool": [call("mcp__github__create_issue", title=str(i)) for i in range(CALLS)],
    }


async def per_call_ms(agent: Agent, batch: list[ToolCall]) -> float:
    hook = PermissionHook()
    for c in batch[:50]:  # warm imports
        await hook.before_tool(agent, c)
    start = time.process_time()  # CPU time: other processes on a shared machine do not count against it
    for c in batch:
        await hook.before_tool(agent, c)
    return (time.process_time() - start) * 1000 / len(batch)


def permission_check_costs() -> dict[str, float]:
    """Median ms per permission check, by kind of call."""
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        (project / "src").mkdir()
        policy = Permissions.build(allow=ALLOW, ask=ASK, deny=DENY, cwd=project)
        parent = Agent(ScriptedModel([]), cwd=project, permissions=policy, hooks=[PermissionHook()])
        child = Agent(
            ScriptedModel([]), cwd=project, permissions=policy, hooks=[PermissionHook()], parent=parent, label="worker"
        )
        figures = {}
        for name, batch in calls().items():
            runs = [asyncio.run(per_call_ms(child, batch)) for _ in range(5)]
            figures[name] = statistics.median(runs)
        return figures


def main() -> int:
    ok = True
    for name, ms in permission_check_costs().items():
        hit = ms < TARGET_MS
        ok = ok and hit
        print(
            f"{'permission check: ' + name:<52} {ms:>9.4f} ms  target < {TARGET_MS:g} ms  {'ok' if hit else 'MISSED'}"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
