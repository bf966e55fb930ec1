"""The permission mode an agent file asks for (`permissionMode`), applied to the sub-agent it starts only when it
is as strict as its parent's or stricter: a file in a project can tighten what the user chose, never loosen it.

Strictest last: `bypassPermissions`, `acceptEdits`, `default`, `dontAsk` (default, but what would ask is
refused), `plan`. An agent without a policy counts as `bypassPermissions` (nothing asks). A looser mode is
refused with a note and the sub-agent keeps its parent's. This is the first line only: the parent's policy
binds its sub-agents anyway (`policies()`), so a call runs only when every policy above allows it.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from sagent.permissions.modes import MODES, Mode
from sagent.permissions.policy import PermissionHook, Permissions

if TYPE_CHECKING:
    from sagent.agent.settings import AgentSettings

DONT_ASK = "dontAsk"
STRICTNESS: dict[str, int] = {"bypassPermissions": 0, "acceptEdits": 1, "default": 2, DONT_ASK: 3, "plan": 4}
"""How strict each mode is; a sub-agent may only go up."""


def mode_named(text: str) -> str | None:
    """The mode `text` names (any case), or None."""
    return next((m for m in STRICTNESS if m.lower() == text.strip().lower()), None)


def tightened(settings: AgentSettings, wanted: str, name: str) -> tuple[AgentSettings, str | None]:
    """`settings` (a sub-agent's, its parent's as they are) in the mode `wanted` when that is no looser
    than theirs; else unchanged, with a note for the parent saying why."""
    mode = mode_named(wanted)
    if mode is None:
        modes = ", ".join(STRICTNESS)
        return settings, f"agent {name}: permissionMode {wanted!r} is not a mode ({modes}); the parent's applies"
    policy = settings.permissions if isinstance(settings.permissions, Permissions) else None
    current = "bypassPermissions" if policy is None else policy.mode
    if STRICTNESS[mode] < STRICTNESS[current]:
        why = "a file may only tighten the mode" if mode != "bypassPermissions" else "a file cannot bypass permissions"
        return settings, f"agent {name}: permissionMode {mode} not applied ({why}); it keeps the parent's {current}"
    if mode == current:
        return settings, None
    base = policy or Permissions()
    origin = f"agent file {name}"
    hooks = settings.hooks
    if not any(isinstance(h, PermissionHook) for h in hooks):
        hooks = (*hooks, PermissionHook())
    if mode == DONT_ASK:
        # Nobody is asked: what would ask is refused.
        new = dataclasses.replace(base.with_mode("default", origin), headless="deny")
        return dataclasses.replace(settings, permissions=new, approver=None, hooks=hooks), None
    new = base.with_mode(_plain(mode), origin)
    return dataclasses.replace(settings, permissions=new, hooks=hooks), None


def _plain(mode: str) -> Mode:
    for known in MODES:
        if known == mode:
            return known
    return "default"
