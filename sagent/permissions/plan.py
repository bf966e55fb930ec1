"""ExitPlanMode: the tool the model calls in plan mode to put its plan before the user.

The call asks (the permission hook answers `Ask` for it in plan mode): the REPL shows the plan and the
user approves it, choosing the mode to go on in, or says what to change, which the model gets as the
call's error. Approved, the call returns and the agent leaves plan mode. The tool is offered only in plan
mode: `PermissionHook` withholds its schema from requests in the other modes.
"""

from __future__ import annotations

from typing import Any

from sagent.permissions.modes import PLAN_TOOL
from sagent.tools.base import AnyOrder, ToolContext


class ExitPlanMode(AnyOrder):
    """Present a plan for the user's approval (plan mode only)."""

    name = PLAN_TOOL
    may_background = False
    description = (
        "Plan mode only: present your plan for the user's approval once you have explored enough to know what "
        "to change. Write the plan in Markdown: the steps, the files, how you will check the result. If the "
        "user approves, plan mode ends and you carry the plan out; if not, the answer says what to change."
    )
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {"plan": {"type": "string", "description": "the plan, in Markdown"}},
        "required": ["plan"],
    }

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        """Reached only once the plan is approved."""
        return "The user approved the plan. Plan mode is over: carry the plan out now."
