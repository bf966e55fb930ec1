"""TodoWrite: the task list the model keeps while it works, in Claude Code's shape.

Each call gives the whole list and replaces the one before. The list is the running agent's
(`Agent.task_list`): the agent logs the change as a `TaskListChanged` event, which every surface shows.
Outside an agent (a tool called on its own) the list is checked and summed up, and kept nowhere.
"""

from __future__ import annotations

from typing import Any

from sagent.tasks import STATUSES, TaskList
from sagent.tools.base import AnyOrder, ToolContext, ToolError


class TodoWrite(AnyOrder):
    name = "TodoWrite"
    may_background = False  # it takes no time: nothing to move to the background
    description = (
        "A task list for work of 3+ steps (not one quick step); each call sends the whole list. Mark one item "
        "in_progress before you start it, completed as soon as it is done."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "description": "imperative: Run tests"},
                        "status": {"type": "string", "enum": list(STATUSES)},
                        "activeForm": {"type": "string", "description": "continuous: Running tests"},
                    },
                    "required": ["content", "status", "activeForm"],
                },
            }
        },
        "required": ["todos"],
    }

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        try:
            tasks = TaskList.parse(arguments.get("todos"))
        except ValueError as error:
            raise ToolError(f"{error}. The list is unchanged; send the whole list again.") from None
        keep = getattr(ctx.runtime, "set_task_list", None)  # a runtime of an older shape keeps no list
        if callable(keep):
            keep(tasks)
        if not tasks:
            return "The task list is cleared."
        nudge = " Keep it current as you work." if not tasks.finished else " All done."
        return f"The task list is updated: {tasks.line()}.{nudge}"
