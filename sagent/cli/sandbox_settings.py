"""The run's `SandboxPolicy` from the settings files' `sandbox` object and `--sandbox MODE`, and what a run
says about it at its start.

    "sandbox": {"mode": "workspace-write", "network": false, "allowedDomains": ["pypi.org"],
                "writableRoots": ["~/.cache/pip"], "denyRead": ["~/secrets"], "required": true}

Members merge across the files (user, project, local) one by one; the lists add up. `--sandbox` wins over
the files' `mode`.
"""

from __future__ import annotations

import argparse
from typing import Any

from sagent.sandbox.policy import SandboxError, SandboxPolicy, from_settings


class SandboxSettingsError(ValueError):
    """A `sandbox` setting that cannot be used; one line naming the file and the member."""


def sandbox_policy(args: argparse.Namespace) -> SandboxPolicy:
    """The run's policy; SandboxSettingsError for a member that cannot be used."""
    value: dict[str, Any] = getattr(args, "sandbox_settings", None) or {}
    sources = getattr(args, "settings_files", None)
    for member, inner in value.items():
        try:
            from_settings({member: inner})
        except SandboxError as error:
            origin = sources.origin(f"sandbox.{member}") if sources is not None else "settings"
            key, _, problem = str(error).partition(": ")
            raise SandboxSettingsError(f'{origin}: key "{key}": {problem}') from None
    policy = from_settings(value)
    mode = getattr(args, "sandbox", None)
    return policy.with_mode(mode) if mode else policy


def check_at_start(policy: SandboxPolicy, tool_names: list[str]) -> str | None:
    """At a run's start, when it has Bash and its policy confines: an error message when the sandbox is
    required and cannot start; else None, after saying once on stderr that commands run without it when
    it cannot start."""
    if "Bash" not in tool_names or not policy.confines:
        return None
    from sagent.sandbox.spawn import announce_unavailable, required_message, sandbox_state

    reason = sandbox_state(policy)
    if reason is None:
        return None
    if policy.required:
        return required_message(reason)
    announce_unavailable(reason)
    return None
