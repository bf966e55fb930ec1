"""Every event of the union has its stream-json case: a new event cannot be silently dropped by the headless
output. `event_record` ends in `assert_never`, which the type checker proves unreachable; this test proves
it at run time too, for each class `Event` names, with and without partial messages."""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

import pytest

from sagent.cli.records import event_record
from sagent.events import Event
from sagent.tasks import TaskList
from sagent.types import AssistantMessage, Cost, ToolCall, ToolResult, Usage, UserMessage

_SAMPLES: dict[str, Any] = {
    "str": "x",
    "int": 1,
    "float": 1.0,
    "bool": False,
    "Usage": Usage(),
    "Cost": Cost(),
    "AssistantMessage": AssistantMessage(()),
    "UserMessage": UserMessage.of("x"),
    "Message": UserMessage.of("x"),
    "ToolCall": ToolCall("call_1", "Read", {}),
    "ToolResult": ToolResult("call_1", "Read", ()),
    "ResultSubtype": "success",
    "TaskList": TaskList(),
}


def _sample(cls: type[Any]) -> Any:
    """An instance of an event class, its required fields filled by their annotation (as written)."""
    values = {}
    for field in dataclasses.fields(cls):
        if field.default is not dataclasses.MISSING or field.default_factory is not dataclasses.MISSING:
            continue
        annotation = str(field.type)
        if annotation.startswith("tuple["):
            values[field.name] = ()
        elif annotation.endswith("| None"):
            values[field.name] = None
        else:
            values[field.name] = _SAMPLES[annotation]
    return cls(**values)


EVENTS = typing.get_args(Event)


def test_the_union_is_read_whole() -> None:
    assert len(EVENTS) >= 16 and all(dataclasses.is_dataclass(cls) for cls in EVENTS)


@pytest.mark.parametrize("cls", EVENTS, ids=lambda cls: cls.__name__)
@pytest.mark.parametrize("partial", [False, True])
def test_event_record_has_a_case_for_every_event(cls: type[Any], partial: bool) -> None:
    record = event_record(_sample(cls), "session", partial=partial)  # a missing case fails in assert_never
    assert record is None or record["session_id"] == "session"


def test_a_new_event_without_a_case_fails_loudly() -> None:
    @dataclasses.dataclass(frozen=True)
    class Unheard:
        type: str = "unheard"

    with pytest.raises(AssertionError):
        event_record(Unheard(), "session", partial=True)  # type: ignore[arg-type]
