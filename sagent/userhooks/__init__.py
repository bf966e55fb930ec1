"""User hooks: shell commands from settings files run around the agent's work, as Claude Code runs them.

    from sagent.userhooks import CommandHooks

    agent = Agent(model, tools=builtin_tools(), hooks=[CommandHooks.from_settings(settings["hooks"])])

`config` reads and checks the `hooks` settings key (standard library only), `runner` runs one command,
`answers` reads what its exit code and output mean, and `command_hooks` maps the events to the loop's hook
points (`sagent.agent.hooks`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sagent.lib.lazy import lazy_exports

_EXPORTS = {
    "CommandHooks": "sagent.userhooks.command_hooks",
    "HookConfigError": "sagent.userhooks.config",
    "parse_hooks": "sagent.userhooks.config",
}

__all__ = ["CommandHooks", "HookConfigError", "parse_hooks"]

if TYPE_CHECKING:
    from sagent.userhooks.command_hooks import CommandHooks
    from sagent.userhooks.config import HookConfigError, parse_hooks

_load = lazy_exports(__name__, _EXPORTS)


def __getattr__(name: str) -> Any:
    return _load(name)
