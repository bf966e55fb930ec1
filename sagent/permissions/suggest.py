"""The rules "yes, and don't ask again" records for a tool call, the same whoever asks (the REPL's question,
an editor's over the Agent Client Protocol): narrow enough to name what the user saw, wide enough that the
same kind of call does not ask again."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from sagent.agent.hooks import Ask
from sagent.permissions.modes import PLAN_TOOL
from sagent.permissions.paths import inside
from sagent.permissions.policy import allowed_by, decide
from sagent.permissions.rules import EDITING_TOOLS, READING_TOOLS, Rule, RuleError, parse_rule, subject_of

if TYPE_CHECKING:
    from sagent.agent.agent import Agent
    from sagent.types import ToolCall

SUBCOMMANDS = frozenset(
    {"git", "npm", "pnpm", "yarn", "cargo", "go", "docker", "kubectl", "pip", "uv", "poetry", "gh", "make", "just"}
)
"""Commands whose second word says what they do: "don't ask again" for `git diff` is `Bash(git diff:*)`,
for `ls -la` it is `Bash(ls:*)`."""


def suggest_rules(agent: Agent, call: ToolCall) -> list[str]:
    """The rules "don't ask again" adds for `call`: `Bash(git diff:*)` per command not yet allowed, the
    folder of a file outside the project, the domain of a URL, or the tool's name."""
    cwd = str(agent.context.cwd)
    subject = subject_of(call.name, call.arguments, cwd)
    if call.name == "Bash":
        found: list[str] = []
        for c in subject.commands or ():
            words = c.words[:2] if c.words[0] in SUBCOMMANDS and len(c.words) > 1 else c.words[:1]
            plain = all(w.replace("-", "").replace("_", "").replace(".", "").isalnum() for w in words)
            rule = f"Bash({' '.join(words)}:*)" if plain and not words[-1].startswith("-") else f"Bash({c.text})"
            if rule not in found:
                found.append(rule)
        return [rule for rule in found if _readable(rule, cwd)]  # a line that cannot be split offers none
    if call.name in READING_TOOLS or call.name in EDITING_TOOLS:
        family = "Read" if call.name in READING_TOOLS else "Edit"
        path = subject.paths[0].real if subject.paths else cwd
        folder = path if call.name in ("List", "Grep", "Glob") and os.path.isdir(path) else os.path.dirname(path)
        if inside(folder, (cwd,)):
            relative = os.path.relpath(folder, cwd)
            return [f"{family}(./**)" if relative == "." else f"{family}({relative}/**)"]
        return [f"{family}({folder.rstrip('/')}/**)"]
    if call.name == "WebFetch" and subject.host:
        return [f"WebFetch(domain:{subject.host})"]
    return [call.name]


def _readable(rule: str, cwd: str) -> bool:
    try:
        parse_rule(rule, "", cwd)
    except RuleError:
        return False
    return True


def remembered(agent: Agent, call: ToolCall, rules: list[Rule]) -> bool:
    """Whether the rules the user said "don't ask again" to this session let `call` run unasked: never a
    plan, nor a call whose deny rules could not be checked (the user sees each such call)."""
    if not rules or call.name == PLAN_TOOL:
        return False
    answer = decide(agent, call)
    if isinstance(answer, Ask) and answer.refuse_unattended:
        return False
    return allowed_by(rules, subject_of(call.name, call.arguments, str(agent.context.cwd)))
