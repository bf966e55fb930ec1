"""Run one hook callback: a function of the program driving sagent (the Claude Agent SDK's hook callbacks,
asked over its control protocol) given a command hook's JSON input, its JSON answer read as a command's.

A callback that raises, gives no answer within its timeout, returns something other than a JSON object,
or answers with a member sagent cannot read (`permissionDecision: "Deny"`) has failed: the user is told,
and the hook counts as no decision, unless it was registered to block on failure (`onFailure: "block"`):
then it blocks what it guards (a tool call is denied, a prompt is blocked), as an exit 2 would. A failed
Stop or SubagentStop hook never keeps a run going: a broken guard must not loop the agent.
"""

from __future__ import annotations

import asyncio
from typing import Any

from sagent.lib.json import json_kind
from sagent.userhooks.answers import Answer, read_output
from sagent.userhooks.config import HookCallback

NEVER_BLOCK_ON_FAILURE = frozenset({"Stop", "SubagentStop"})
"""Events whose failed callback never blocks, whatever it was registered with."""
GRACE = 2.0
"""Seconds past its timeout a callback is waited for here: the callback is told its timeout and should end
itself there (the control channel then tells the SDK to give up on the request); this is the backstop."""


async def run_callback(callback: HookCallback, event: str, payload: dict[str, Any]) -> Answer:
    """`callback`'s answer to `payload` (the hook input of `event`), read as a command hook's JSON."""
    failure = ""
    data: Any = None
    try:
        data = await asyncio.wait_for(callback.call(payload, callback.timeout), callback.timeout + GRACE)
    except TimeoutError:
        failure = f"gave no answer within {callback.timeout:g} s"
    except Exception as error:  # the callback's own failure, as its process reported it
        failure = f"failed: {str(error).strip() or type(error).__name__}"
    if not failure and not isinstance(data, dict):
        failure = f"answered {json_kind(data)}, not a JSON object"
    answer = Answer()
    if failure:
        answer.notices.append(("error", failure))
    else:
        read_output(event, data, answer)
        errors = [text for level, text in answer.notices if level == "error"]
        failure = "; ".join(errors)
    if failure and callback.block_on_failure and event not in NEVER_BLOCK_ON_FAILURE:
        answer.block = f"the hook failed and is set to block on failure: {failure}"
        answer.permission, answer.updated_input = None, None
    return answer
