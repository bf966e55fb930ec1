"""What a hook command's exit code and output mean, as Claude Code defines them.

- Exit 0: it proceeds. Its stdout, when it is a JSON object, is its answer (below); plain text is context
  for the model from `UserPromptSubmit` and `SessionStart` hooks, and ignored for the others.
- Exit 2: it blocks, with stderr as the reason: the tool call is denied (`PreToolUse`), the reason is fed
  back to the model about a call that ran (`PostToolUse`), the prompt is blocked (`UserPromptSubmit`), the
  agent goes on instead of stopping (`Stop`, `SubagentStop`); for `SessionStart` stderr is shown to the user.
- Any other exit code, a timeout, a command that cannot start, stdout that starts like JSON and is not:
  the hook failed. The user is told, and the agent goes on as if the hook had not been there.

The JSON answer: `continue: false` stops the agent (`stopReason` tells the user why); `systemMessage` is
shown to the user; `decision: "block"` with `reason` blocks as exit 2 does (`"approve"` allows a tool
call, the older spelling); `hookSpecificOutput` holds `permissionDecision` (`allow`, `deny` or `ask`) with
`permissionDecisionReason` and `updatedInput` for `PreToolUse`, `updatedToolOutput` (or
`updatedMCPToolOutput`) for `PostToolUse`, and `additionalContext` for `PostToolUse`, `PostToolUseFailure`,
`UserPromptSubmit`, `SessionStart` and `SubagentStart`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from sagent.lib.json import json_kind
from sagent.userhooks.runner import Finished

Permission = Literal["allow", "deny", "ask"]
CONTEXT_FROM_PLAIN_TEXT = frozenset({"UserPromptSubmit", "SessionStart"})
"""The events whose plain (not JSON) stdout on exit 0 becomes context for the model."""
NO_REASON = "(the hook gave no reason)"


@dataclass
class Answer:
    """One hook command's answer, read: what it decides and what it has to say."""

    block: str | None = None  # exit 2 or `decision: "block"`: the reason
    permission: Permission | None = None  # PreToolUse's permissionDecision
    reason: str = ""  # permissionDecisionReason
    updated_input: dict[str, Any] | None = None  # PreToolUse's updatedInput
    updated_output: str | None = None  # PostToolUse's updatedToolOutput (or updatedMCPToolOutput), as text
    context: str = ""  # additionalContext (or plain stdout for some events)
    stop: str | None = None  # `continue: false`: why the agent stops
    notices: list[tuple[Literal["info", "warning", "error"], str]] = field(default_factory=list)


def read_answer(event: str, finished: Finished) -> Answer:
    """How `finished` (a command run for `event`) answers."""
    answer = Answer()
    if finished.failure:
        answer.notices.append(("error", finished.failure))
        return answer
    if finished.code == 2:
        answer.block = finished.stderr.strip() or NO_REASON
        return answer
    if finished.code != 0:
        said = _first_lines(finished.stderr) or _first_lines(finished.stdout)
        answer.notices.append(("error", f"exited with {finished.code}" + (f": {said}" if said else "")))
        return answer
    out = finished.stdout.strip()
    if not out.startswith(("{", "[")):
        if out and event in CONTEXT_FROM_PLAIN_TEXT:
            answer.context = out
        return answer
    try:
        data = json.loads(out)
    except (json.JSONDecodeError, RecursionError) as error:
        answer.notices.append(("error", f"printed invalid JSON ({error}); its answer is ignored"))
        return answer
    if not isinstance(data, dict):
        answer.notices.append(("error", f"printed {json_kind(data)}, not a JSON object; its answer is ignored"))
        return answer
    return read_output(event, data, answer)


def read_output(event: str, data: dict[str, Any], answer: Answer | None = None) -> Answer:
    """How a hook's JSON answer `data` (what a command prints on exit 0, what a callback returns) answers
    `event`; added to `answer` when one is given. A member of the wrong shape is an error notice, and
    ignored."""
    answer = answer if answer is not None else Answer()
    _read_json(event, data, answer)
    return answer


def _read_json(event: str, data: dict[str, Any], answer: Answer) -> None:
    def wrong(key: str, value: Any, expected: str) -> None:
        answer.notices.append(("error", f'"{key}" must be {expected}, not {json_kind(value)}; ignored'))

    if data.get("continue") is False:
        stop = data.get("stopReason")
        answer.stop = stop.strip() if isinstance(stop, str) and stop.strip() else "a hook stopped the agent"
    message = data.get("systemMessage")
    if isinstance(message, str) and message.strip():
        answer.notices.append(("info", message.strip()))
    decision = data.get("decision")
    reason = data.get("reason")
    reason_text = reason.strip() if isinstance(reason, str) and reason.strip() else NO_REASON
    if decision == "block":
        answer.block = reason_text
    elif decision == "approve" and event == "PreToolUse":
        answer.permission, answer.reason = "allow", reason_text
    elif decision not in (None, "approve"):
        wrong("decision", decision, '"block"')
    specific = data.get("hookSpecificOutput")
    if specific is None:
        return
    if not isinstance(specific, dict):
        wrong("hookSpecificOutput", specific, "an object")
        return
    permission = specific.get("permissionDecision")
    if permission is not None and permission != "defer":  # defer: no decision here
        if permission in ("allow", "deny", "ask") and event == "PreToolUse":
            answer.permission = permission
            why = specific.get("permissionDecisionReason")
            answer.reason = why.strip() if isinstance(why, str) else ""
        else:
            wrong("permissionDecision", permission, '"allow", "deny" or "ask" (for PreToolUse)')
    updated = specific.get("updatedInput")
    if updated is not None:
        if isinstance(updated, dict) and event == "PreToolUse":
            answer.updated_input = updated
        else:
            wrong("updatedInput", updated, "an object of the tool's arguments (for PreToolUse)")
    decided = specific.get("decision")
    if decided is not None:
        _read_request_decision(event, decided, answer, wrong)
    for member in ("updatedToolOutput", "updatedMCPToolOutput"):
        output = specific.get(member)
        if output is not None and answer.updated_output is None:
            if event == "PostToolUse":
                answer.updated_output = _output_text(output)
            else:
                wrong(member, output, "given for PostToolUse only")
    context = specific.get("additionalContext")
    if context is not None:
        if isinstance(context, str):
            answer.context = context.strip()
        else:
            wrong("additionalContext", context, "a string")


def _read_request_decision(event: str, decided: Any, answer: Answer, wrong: Any) -> None:
    """PermissionRequest's `decision`: `{"behavior": "allow", "updatedInput"?}` or `{"behavior": "deny",
    "message"?}`, read as a PreToolUse permission decision is."""
    behavior = decided.get("behavior") if isinstance(decided, dict) else None
    if event != "PermissionRequest" or behavior not in ("allow", "deny"):
        wrong("hookSpecificOutput.decision", decided, '{"behavior": "allow" or "deny"} (for PermissionRequest)')
        return
    answer.permission = behavior
    message = decided.get("message")
    answer.reason = message.strip() if isinstance(message, str) else ""
    updated = decided.get("updatedInput")
    if behavior == "allow" and isinstance(updated, dict):
        answer.updated_input = updated


def _output_text(output: Any) -> str:
    """A replacement tool output as the text the model reads: a string as it is, MCP content blocks (a
    list, or an object with `content`) as their texts, anything else as JSON."""
    blocks = output.get("content") if isinstance(output, dict) else output
    if isinstance(blocks, list) and blocks and all(isinstance(b, dict) and "text" in b for b in blocks):
        return "\n".join(str(b["text"]) for b in blocks)
    return output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)


def _first_lines(text: str, limit: int = 300) -> str:
    text = " ".join(text.strip().splitlines()[:3])
    return text if len(text) <= limit else text[: limit - 1] + "…"
