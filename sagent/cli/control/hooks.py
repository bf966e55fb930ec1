"""The Claude Agent SDK's hook callbacks, run at sagent's hook points through the control protocol.

An SDK application registers Python or TypeScript functions as hooks (`HookMatcher(matcher="Bash",
hooks=[fn])`); its `initialize` request names them by id, event by event:

    {"PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["hook_0"], "timeout": 30, "onFailure": "block"}]}

Each becomes a `HookCallback` of `sagent.userhooks`, beside the command hooks of settings files, so the
same code matches tools, builds Claude Code's hook input and applies the answer (`continue`, `stopReason`,
`decision`, `reason`, `systemMessage`, `hookSpecificOutput` with `permissionDecision`, `updatedInput`,
`additionalContext`). Running one sends `{"subtype": "hook_callback", "callback_id", "input",
"tool_use_id"}` to the SDK's process and reads the body of its answer as the hook's JSON output. A
callback that fails or times out is no decision, or blocks when its matcher says `onFailure: "block"`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from sagent.lib.json import json_kind
from sagent.userhooks.config import DEFAULT_TIMEOUT, EVENTS, HookCallback, HookGroup, HookTable

if TYPE_CHECKING:
    from sagent.agent.agent import Agent
    from sagent.cli.control.requester import Requester
    from sagent.userhooks.command_hooks import CommandHooks

ON_FAILURE = ("continue", "block")


def install_hook_callbacks(agent: Agent, hooks_config: Mapping[str, Any] | None, requester: Requester) -> list[str]:
    """Add the SDK's hook callbacks of an `initialize` request (`hooks_config`, its `hooks` member) to
    `agent`'s hooks; they ask `requester`. The warnings (an event sagent does not run), one line each.
    Nothing happens for None or an empty value; ValueError naming the key for a value of the wrong shape.

    They go right after the command hooks of the settings files (first when there are none), so, as in
    Claude Code, they see every call before the permission policy does, and the policy checks a call as
    they rewrote it."""
    if hooks_config is None:
        return []
    table, warnings = hook_callback_table(hooks_config, requester)
    if table:
        from sagent.userhooks.command_hooks import CommandHooks

        hooks = list(agent.settings.hooks)
        at = max((i + 1 for i, hook in enumerate(hooks) if isinstance(hook, CommandHooks)), default=0)
        hooks.insert(at, callback_hooks(table))
        agent.configure(hooks=tuple(hooks))
    return warnings


def callback_hooks(table: HookTable) -> CommandHooks:
    """The hook object that runs `table`'s callbacks for every agent of a tree."""
    from sagent.userhooks.command_hooks import CommandHooks

    return CommandHooks(table)


def hook_callback_table(hooks_config: Any, requester: Requester) -> tuple[HookTable, list[str]]:
    """The callbacks of an `initialize` request's `hooks` by event, and warnings for events sagent does not
    run (their callbacks are never called). ValueError naming the key for a value of the wrong shape."""
    if not isinstance(hooks_config, Mapping):
        raise ValueError(f'"hooks": must be an object of event names to matcher lists, not {json_kind(hooks_config)}')
    table: HookTable = {}
    warnings: list[str] = []
    for event, matchers in hooks_config.items():
        key = f"hooks.{event}"
        if not isinstance(event, str) or not event[:1].isupper() or not event.isalnum():
            raise ValueError(f'"{key}": not a hook event name')
        if not isinstance(matchers, list):
            raise ValueError(f'"{key}": must be a list of matchers, not {json_kind(matchers)}')
        groups = tuple(_group(event, m, f"{key}[{i}]", requester) for i, m in enumerate(matchers))
        if event not in EVENTS:
            if groups:
                warnings.append(f"sagent does not run {event} hooks; the SDK's {event} callbacks are never called")
            continue
        if groups:
            table[event] = groups
    return table, warnings


def _group(event: str, entry: Any, key: str, requester: Requester) -> HookGroup:
    if not isinstance(entry, Mapping):
        raise ValueError(f'"{key}": must be an object with hookCallbackIds, not {json_kind(entry)}')
    matcher = entry.get("matcher")
    if matcher is not None and not isinstance(matcher, str):
        raise ValueError(f'"{key}.matcher": must be a string or null, not {json_kind(matcher)}')
    ids = entry.get("hookCallbackIds")
    if not isinstance(ids, list) or not all(isinstance(i, str) and i for i in ids):
        raise ValueError(f'"{key}.hookCallbackIds": must be a list of callback ids, not {json_kind(ids)}')
    timeout = entry.get("timeout")
    if timeout is None:
        timeout = DEFAULT_TIMEOUT
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not math.isfinite(timeout) or timeout <= 0:
        raise ValueError(f'"{key}.timeout": must be a number of seconds above 0, not {json_kind(timeout)}')
    on_failure = entry.get("onFailure")
    if on_failure is not None and on_failure not in ON_FAILURE:
        raise ValueError(f'"{key}.onFailure": must be "continue" or "block", not {json_kind(on_failure)}')
    callbacks = tuple(
        HookCallback(i, _asker(requester, i), float(timeout), block_on_failure=on_failure == "block") for i in ids
    )
    return HookGroup(matcher or "", callbacks)


class _asker:
    """Asks the SDK's process to run one callback; the body of its answer is the hook's JSON output."""

    def __init__(self, requester: Requester, callback_id: str) -> None:
        self.requester = requester
        self.callback_id = callback_id

    async def __call__(self, hook_input: dict[str, Any], timeout: float) -> Any:
        request = {"subtype": "hook_callback", "callback_id": self.callback_id, "input": hook_input}
        if hook_input.get("tool_use_id"):  # the tool events' only
            request["tool_use_id"] = hook_input["tool_use_id"]
        return await self.requester.request(request, timeout=timeout)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _asker) and other.requester is self.requester and other.callback_id == self.callback_id

    def __hash__(self) -> int:
        return hash((id(self.requester), self.callback_id))
