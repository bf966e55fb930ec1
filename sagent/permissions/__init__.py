"""Permissions: which tool calls run, which ask the user, and which are refused.

One frozen `Permissions` value (mode, allow/ask/deny rules, project roots) rides in
`AgentSettings.permissions`; `PermissionHook` applies it before every tool call through the loop's hooks
(`sagent.agent.hooks`), answering Allow, Ask or Deny. The modules, in the order they depend on each other:

- `bash` (with `bash_words`, `bash_wrappers`, `bash_text`): a Bash line parsed (tree-sitter) into the commands
  it runs, wrapped and string-embedded ones included, the files it writes, and what rules cannot see;
- `paths`: paths resolved as the kernel resolves them (`~`, symlinks, then `..`) and path globs;
- `rules`: rule parsing and matching (`Bash(git diff:*)`, `Edit(src/**)`, `WebFetch(domain:…)`, …);
- `modes`: the modes and what each lets run;
- `bash_policy`: a Bash line's writes judged as edits, and what a rule cannot check asks;
- `guard`: the policy asked again by a tool right before it opens a file or follows a redirect;
- `policy`: `Permissions`, and the hook;
- `plan`: ExitPlanMode, the tool plan mode ends with.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sagent.lib.lazy import lazy_exports

if TYPE_CHECKING:
    from sagent.permissions.modes import MODES, Mode
    from sagent.permissions.plan import ExitPlanMode
    from sagent.permissions.policy import PermissionHook, Permissions
    from sagent.permissions.rules import Rule, RuleError, parse_rule

__all__ = ["MODES", "ExitPlanMode", "Mode", "PermissionHook", "Permissions", "Rule", "RuleError", "parse_rule"]

_load = lazy_exports(
    __name__,
    {
        "MODES": "sagent.permissions.modes",
        "Mode": "sagent.permissions.modes",
        "ExitPlanMode": "sagent.permissions.plan",
        "PermissionHook": "sagent.permissions.policy",
        "Permissions": "sagent.permissions.policy",
        "Rule": "sagent.permissions.rules",
        "RuleError": "sagent.permissions.rules",
        "parse_rule": "sagent.permissions.rules",
    },
)


def __getattr__(name: str) -> Any:
    return _load(name)
