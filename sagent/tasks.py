"""The task list an agent keeps while it works (the `TodoWrite` tool's list), as values.

    from sagent.tasks import TaskList, TodoItem

    tasks = TaskList((TodoItem("Run the tests", "in_progress", "Running the tests"),))
    tasks.active        # the item in progress
    tasks.finished      # True once every item is completed

The list is the agent's (`Agent.task_list`); each change comes as one `TaskListChanged` event, which the
session log keeps (a resumed session has its list back), the REPL shows above the prompt, stream-json
writes as a `task_list` record and an editor gets as the session's plan over ACP. It is written in the
shape Claude Code's `TodoWrite` takes: items with `content`, `status` and `activeForm`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, cast

TaskStatus = Literal["pending", "in_progress", "completed"]
TaskPriority = Literal["high", "medium", "low"]

STATUSES: tuple[TaskStatus, ...] = ("pending", "in_progress", "completed")
PRIORITIES: tuple[TaskPriority, ...] = ("high", "medium", "low")
MAX_ITEMS = 100
MAX_TEXT = 500  # characters of one item's content or activeForm


@dataclass(frozen=True, slots=True)
class TodoItem:
    """One step of the work: what it is (`content`, imperative: "Run the tests"), where it stands, and how
    it reads while it is being done (`active_form`: "Running the tests"). `id` and `priority` are kept
    when the model gives them (older Claude Code lists carried them); sagent needs neither."""

    content: str
    status: TaskStatus = "pending"
    active_form: str = ""
    id: str = ""
    priority: TaskPriority | None = None

    def wire(self) -> dict[str, Any]:
        """The item as TodoWrite takes it (camelCase `activeForm`), for records and replays."""
        item: dict[str, Any] = {"content": self.content, "status": self.status, "activeForm": self.active_form}
        if self.id:
            item["id"] = self.id
        if self.priority is not None:
            item["priority"] = self.priority
        return item


@dataclass(frozen=True, slots=True)
class TaskList:
    """The whole list, in the model's order. Each `TodoWrite` call replaces it."""

    items: tuple[TodoItem, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.items)

    def __len__(self) -> int:
        return len(self.items)

    @property
    def active(self) -> TodoItem | None:
        """The first item in progress, or None."""
        return next((i for i in self.items if i.status == "in_progress"), None)

    @property
    def finished(self) -> bool:
        """True when there are items and every one is completed."""
        return bool(self.items) and all(i.status == "completed" for i in self.items)

    def count(self, status: TaskStatus) -> int:
        return sum(1 for i in self.items if i.status == status)

    def wire(self) -> list[dict[str, Any]]:
        """The items as TodoWrite takes them."""
        return [i.wire() for i in self.items]

    def line(self) -> str:
        """How far the work is, in a few words: "2 of 5 done, 1 in progress"."""
        done, going = self.count("completed"), self.count("in_progress")
        return f"{done} of {len(self.items)} done" + (f", {going} in progress" if going else "")

    def text(self) -> str:
        """The list for a model or a plain-text reader, one item a line: `[x]` done, `[>]` in progress."""
        marks = {"completed": "[x]", "in_progress": "[>]", "pending": "[ ]"}
        return "\n".join(f"{marks[i.status]} {i.content}" for i in self.items)

    @classmethod
    def parse(cls, todos: object) -> TaskList:
        """The list a `TodoWrite` call gives (`{"todos": [...]}`'s list, or a logged one): ValueError saying
        what is wrong and how to fix it, for the model to act on."""
        if not isinstance(todos, list):
            raise ValueError('"todos" must be a list of items, each {"content", "status", "activeForm"}')
        if len(todos) > MAX_ITEMS:
            raise ValueError(f"at most {MAX_ITEMS} items; this list has {len(todos)}: merge small steps")
        return cls(tuple(_item(raw, n) for n, raw in enumerate(todos, 1)))


def _item(raw: object, n: int) -> TodoItem:
    if not isinstance(raw, dict):
        raise ValueError(f'item {n} is not an object: give {{"content", "status", "activeForm"}}')
    content = _text(raw, "content", n, required=True)
    status = raw.get("status")
    if status not in STATUSES:
        given = "is missing" if status is None else f"is {status!r}"
        raise ValueError(f"item {n} ({content!r}): its status {given}; it is one of {', '.join(STATUSES)}")
    active_form = _text(raw, "activeForm", n, required=False) or _text(raw, "active_form", n, required=False)
    priority = raw.get("priority")
    if priority is not None and priority not in PRIORITIES:
        raise ValueError(f"item {n} ({content!r}): priority is one of {', '.join(PRIORITIES)}, or left out")
    ident = raw.get("id")
    return TodoItem(
        content,
        cast(TaskStatus, status),
        active_form or content,
        "" if ident is None else str(ident),
        cast("TaskPriority | None", priority),
    )


def _text(raw: dict[str, Any], key: str, n: int, *, required: bool) -> str:
    value = raw.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or not value.strip():
        what = "is missing" if value is None else "must be a non-empty string"
        raise ValueError(f'item {n}: "{key}" {what}')
    text = " ".join(value.split())
    if len(text) > MAX_TEXT:
        raise ValueError(f'item {n}: "{key}" is {len(text)} characters; keep it under {MAX_TEXT}')
    return text
