"""The permission modes (Claude Code's names, so habits carry over) and what each lets run unasked.

- `default`: reading tools inside the project run; edits, Bash, WebFetch and other tools ask; so does
  anything outside the project.
- `acceptEdits`: as default, but Write and Edit inside the project run.
- `plan`: only reading tools run (reading outside the project and WebFetch still ask); edits, Bash and
  other tools are refused until the user approves the plan the model presents with ExitPlanMode.
- `bypassPermissions`: everything runs without asking.

Deny rules hold in every mode; ask and allow rules come before the mode's own answer (except in
`bypassPermissions`, which asks nothing).
"""

from __future__ import annotations

from typing import Literal

Mode = Literal["default", "acceptEdits", "plan", "bypassPermissions"]
MODES: tuple[Mode, ...] = ("default", "acceptEdits", "plan", "bypassPermissions")
CYCLE: tuple[Mode, ...] = ("default", "acceptEdits", "plan")
"""What Shift+Tab steps through (bypassPermissions joins only when the session started in it)."""

HeadlessDefault = Literal["allow", "deny"]
"""What a call that would ask does when nobody is there to ask (a headless run)."""

PLAN_TOOL = "ExitPlanMode"
"""The tool the model calls in plan mode to present its plan for approval."""

SAFE_TOOLS = frozenset(
    {
        "WebSearch",
        "PaperSearch",
        "PaperDetails",
        "PaperFetch",
        "AgentSpawn",
        "AgentSend",
        "AgentSelf",
        "Jobs",
        "TodoWrite",
        "Skill",
    }
)
"""Built-in tools that run unasked in every mode: they read the web through a search engine or paper index,
work on sub-agents, which run under the same permissions, keep the agent's task list, or load a skill's
text (which runs nothing)."""

PLAN_TOOLS = frozenset({"Read", "Glob", "Grep", "List", "WebFetch", PLAN_TOOL}) | SAFE_TOOLS
"""The tools plan mode lets the model call (reading tools; a fetch still asks as in default mode)."""

DESCRIPTIONS: dict[Mode, str] = {
    "default": "asks before Bash, edits, web fetches and anything outside the project",
    "acceptEdits": "edits inside the project run; Bash and the rest still ask",
    "plan": "read-only: the agent explores and proposes a plan; nothing changes until you approve it",
    "bypassPermissions": "everything runs without asking; deny rules still hold",
}


def parse_mode(text: str) -> Mode:
    """The mode named `text` (case-insensitive); ValueError listing the modes otherwise."""
    for mode in MODES:
        if mode.lower() == text.strip().lower():
            return mode
    raise ValueError(f"{text!r} is not a permission mode; the modes are: {', '.join(MODES)}")


def next_mode(mode: Mode, include_bypass: bool = False) -> Mode:
    """The mode after `mode` in Shift+Tab's cycle."""
    cycle = CYCLE + (("bypassPermissions",) if include_bypass else ())
    index = cycle.index(mode) if mode in cycle else -1
    return cycle[(index + 1) % len(cycle)]
